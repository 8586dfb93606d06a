#include "study/job_lock.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace cw::study {

namespace fs = std::filesystem;

std::string this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
    return name;
}

namespace {

std::optional<LockHolder> read_holder(const std::string& file) {
    std::ifstream in(file);
    LockHolder h;
    if (!(in >> h.pid >> h.host)) return std::nullopt;
    return h;
}

bool alive(const LockHolder& h) {
    if (h.host != this_host()) return true;   // cannot tell from here: treat it as running
    return kill(static_cast<pid_t>(h.pid), 0) == 0 || errno == EPERM;
}

// Creates `file` holding our pid and host if it does not exist: link(2) of a private file is atomic.
bool try_create(const std::string& file) {
    const std::string mine = file + "." + this_host() + "." + std::to_string(getpid());
    {
        std::ofstream out(mine, std::ios::trunc);
        out << getpid() << " " << this_host() << "\n";
        if (!out) throw std::runtime_error(file + ": cannot write the job lock: " + std::strerror(errno));
    }
    const bool taken = link(mine.c_str(), file.c_str()) == 0;
    const int err = errno;
    unlink(mine.c_str());
    if (!taken && err != EEXIST) throw std::runtime_error(file + ": cannot take the job lock: " + std::strerror(err));
    return taken;
}

}  // namespace

std::optional<LockHolder> live_lock_holder(const std::string& dir) {
    const auto h = read_holder((fs::path(dir) / ".lock").string());
    if (h && alive(*h)) return h;
    return std::nullopt;
}

JobLock::JobLock(const std::string& dir, const std::string& what) : path_((fs::path(dir) / ".lock").string()) {
    fs::create_directories(dir);
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (try_create(path_)) return;
        const auto h = read_holder(path_);
        if (h && alive(*h))
            throw std::runtime_error(what + ": running in pid " + std::to_string(h->pid) + " on " + h->host + " (" +
                                     path_ + (h->host == this_host() ? ")" : "; remove it if that process is gone)"));
        // Stale (its process is gone) or half-written: the breaker file makes only one process remove it.
        const std::string breaker = path_ + ".break";
        if (!try_create(breaker)) {
            const auto b = read_holder(breaker);
            if (b && !alive(*b)) unlink(breaker.c_str());   // its breaker died too
            continue;
        }
        const auto again = read_holder(path_);
        if (!again || !alive(*again)) unlink(path_.c_str());
        unlink(breaker.c_str());
    }
    throw std::runtime_error(what + ": cannot take " + path_ + " (another process keeps taking it)");
}

JobLock::~JobLock() { unlink(path_.c_str()); }

}  // namespace cw::study
