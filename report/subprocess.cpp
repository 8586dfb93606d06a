#include "report/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace cw::report {

namespace {

// Destroyed on every path out, as the pipe's ends are closed (Fd).
struct SpawnActions {
    posix_spawn_file_actions_t actions;
    bool ready = false;
    SpawnActions() { ready = posix_spawn_file_actions_init(&actions) == 0; }
    ~SpawnActions() {
        if (ready) posix_spawn_file_actions_destroy(&actions);
    }
};

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) close(fd);
    }
};

ProcessResult not_started(std::string why) {
    ProcessResult r;
    r.exit_code = 127;
    r.stderr_text = std::move(why);
    return r;
}

// Why posix_spawnp failed with `err`, in words a user can act on. glibc reports a failed chdir action and a failed
// exec with the same kind of errno, so the folder is checked first (run_program) and a missing program named here.
std::string spawn_failure(const std::string& program, const std::string& cwd, int err) {
    std::string msg = program + ": cannot run: " + std::strerror(err);
    if (err == ENOENT && program.find('/') == std::string::npos && !program_in_path(program))
        msg = program + ": cannot run: not found in PATH";
    if (!cwd.empty()) msg += " (in " + cwd + ")";
    return msg;
}

}  // namespace

ProcessResult run_program(const std::vector<std::string>& argv, const std::string& cwd) {
    if (argv.empty() || argv[0].empty()) return not_started("run_program: no program given");
    if (!cwd.empty()) {
        struct stat st {};
        if (stat(cwd.c_str(), &st) != 0) return not_started(cwd + ": cannot enter: " + std::strerror(errno));
        if (!S_ISDIR(st.st_mode)) return not_started(cwd + ": cannot enter: not a folder");
    }
    // posix_spawnp, not fork + exec: a fork of a process holding 1–2 GB (a model, a dataset) copies its page tables
    // and may fail under strict overcommit, and allocating between fork and exec is unsafe in a threaded process.
    // Everything the child needs is prepared here, in the parent: the argument vector and the file actions.
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);

    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return not_started(std::string("pipe: ") + std::strerror(errno));
    Fd read_end{pipe_fds[0]}, write_end{pipe_fds[1]};

    SpawnActions fa;
    if (!fa.ready) return not_started("posix_spawn_file_actions_init failed");
    int rc = posix_spawn_file_actions_addopen(&fa.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa.actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa.actions, write_end.fd, STDERR_FILENO);  // dup2 clears CLOEXEC
    if (rc == 0 && !cwd.empty()) rc = posix_spawn_file_actions_addchdir_np(&fa.actions, cwd.c_str());
    if (rc != 0) return not_started(std::string("posix_spawn file actions: ") + std::strerror(rc));

    pid_t pid = -1;
    rc = posix_spawnp(&pid, args[0], &fa.actions, nullptr, args.data(), environ);
    if (rc != 0) return not_started(spawn_failure(argv[0], cwd, rc));
    close(write_end.fd);
    write_end.fd = -1;

    ProcessResult result;
    result.started = true;
    char buf[4096];
    ssize_t got;
    while ((got = read(read_end.fd, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0) result.stderr_text.append(buf, static_cast<size_t>(got));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return result;
}

bool program_in_path(const std::string& program) {
    if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':'))
        if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    return false;
}

}  // namespace cw::report
