#pragma once
// One process per job: <job dir>/.lock, created atomically (link(2) of a private file: it fails if the lock exists,
// also on NFS), holding "pid host". Released (removed) by the destructor; a process killed with SIGKILL leaves it
// behind, so a lock whose pid no longer runs on this host is stale and is taken over. A lock from another host
// cannot be checked from here: it is reported with its host and pid (remove the file if that process is gone).
#include <optional>
#include <string>

namespace cw::study {

struct LockHolder {
    long pid = 0;
    std::string host;
};

// The lock's holder, if the lock exists and its process is alive (or on another host, so unknown).
std::optional<LockHolder> live_lock_holder(const std::string& dir);

class JobLock {
public:
    // Takes <dir>/.lock or throws std::runtime_error "<what>: running in pid P on HOST (<dir>/.lock)".
    JobLock(const std::string& dir, const std::string& what);
    ~JobLock();
    JobLock(const JobLock&) = delete;
    JobLock& operator=(const JobLock&) = delete;

private:
    std::string path_;
};

std::string this_host();

}  // namespace cw::study
