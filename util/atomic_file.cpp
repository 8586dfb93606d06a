#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cw::util {

namespace {

// Closes on every path, so error branches cannot leak descriptors.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

void write_bytes_atomic(const std::string& path, const void* data, size_t size) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    Fd f;
    f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f.fd < 0) {
        const int err = errno;
        throw std::runtime_error(path + ": cannot create " + tmp + ": " + std::strerror(err) +
                                 (err == ENOENT ? " (does the directory exist?)" : ""));
    }
    auto give_up = [&](const std::string& step) {
        const int err = errno;
        if (f.fd >= 0) ::close(f.fd);
        f.fd = -1;
        ::unlink(tmp.c_str());
        throw std::runtime_error(path + ": " + step + ": " + std::strerror(err));
    };
    const char* bytes = static_cast<const char*>(data);
    size_t done = 0;
    while (done < size) {
        const ssize_t w = ::write(f.fd, bytes + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) give_up("write failed");
        done += static_cast<size_t>(w);
    }
    // Without fsync a crash shortly after the rename can leave an empty file under the final name.
    if (::fsync(f.fd) != 0) give_up("fsync failed");
    const int fd = f.fd;
    f.fd = -1;
    if (::close(fd) != 0) give_up("close failed");
    if (::rename(tmp.c_str(), path.c_str()) != 0) give_up("cannot rename " + tmp + " over it");
    // Persist the rename itself; best effort, the data is already safe under one of the two names.
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    Fd d;
    d.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d.fd >= 0) ::fsync(d.fd);
}

void write_file_atomic(const std::string& path, const std::string& content) {
    const std::filesystem::path target(path);
    if (target.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(target.parent_path(), ec);
        if (ec) throw std::runtime_error(path + ": cannot create its folder: " + ec.message());
    }
    write_bytes_atomic(path, content.data(), content.size());
}

std::string read_file_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open for reading");
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

}  // namespace cw::util
