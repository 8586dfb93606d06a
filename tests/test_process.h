#pragma once
// Running a project binary from a test: where the repository is, and a shell command's exit code and output.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace cw_test {

// The repository root: the test binary is <root>/build/tests/classwise_tests.
inline std::filesystem::path repo_root() {
    return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path().parent_path();
}

struct CommandOutput {
    int code = -1;          // the exit status; -1 when the command did not exit normally
    std::string text;       // what it wrote on stdout (redirect stderr in `command` to see it too)
};

// Runs `command` through /bin/sh and waits for it.
inline CommandOutput run_shell(const std::string& command) {
    CommandOutput o;
    FILE* p = popen(command.c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    while (size_t n = fread(buf.data(), 1, buf.size(), p)) o.text.append(buf.data(), n);
    const int status = pclose(p);
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

}  // namespace cw_test

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

namespace cw_test {

// A command running in the background with its stdout and stderr read through a pipe, for tests that signal a
// process at a known point of its output. The command runs through /bin/sh -c "exec ...", so `pid` is the program.
class Spawned {
public:
    explicit Spawned(const std::string& command) {
        int p[2];
        REQUIRE(pipe(p) == 0);
        pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            dup2(p[1], STDOUT_FILENO);
            dup2(p[1], STDERR_FILENO);
            const int devnull = open("/dev/null", O_RDONLY);
            dup2(devnull, STDIN_FILENO);
            close(p[0]);
            close(p[1]);
            execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        close(p[1]);
        fd_ = p[0];
    }
    ~Spawned() {
        if (pid > 0 && !reaped_) {
            kill(pid, SIGKILL);
            finish();
        }
        if (fd_ >= 0) close(fd_);
    }
    Spawned(const Spawned&) = delete;
    Spawned& operator=(const Spawned&) = delete;

    // Reads the output until `marker` appears after position `from` (true) or `seconds` pass / the output ends.
    bool wait_for(const std::string& marker, double seconds, size_t from = 0) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (text.find(marker, from) == std::string::npos) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            if (left.count() <= 0 || !read_some(static_cast<int>(left.count()))) return false;
        }
        return true;
    }
    // Reads to the end of the output and waits: the exit code, or 128 + the signal that killed it.
    int finish() {
        while (read_some(-1)) {}
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    pid_t pid = -1;
    std::string text;   // everything read so far

private:
    bool read_some(int timeout_ms) {
        if (fd_ < 0) return false;
        pollfd pfd{fd_, POLLIN, 0};
        if (poll(&pfd, 1, timeout_ms) <= 0) return timeout_ms < 0;   // a timeout: nothing more now
        char buf[4096];
        const ssize_t n = read(fd_, buf, sizeof buf);
        if (n <= 0) {
            close(fd_);
            fd_ = -1;
            return false;
        }
        text.append(buf, static_cast<size_t>(n));
        return true;
    }
    int fd_ = -1;
    bool reaped_ = false;
};

}  // namespace cw_test
