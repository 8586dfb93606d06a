#include "report/subprocess.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace cw::report {

ProcessResult run_program(const std::vector<std::string>& argv, const std::string& cwd) {
    ProcessResult result;
    if (argv.empty()) return result;
    int err_pipe[2];
    if (pipe(err_pipe) != 0) {
        result.stderr_text = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    const pid_t pid = fork();
    if (pid < 0) {
        close(err_pipe[0]);
        close(err_pipe[1]);
        result.stderr_text = std::string("fork: ") + std::strerror(errno);
        return result;
    }
    if (pid == 0) {
        dup2(err_pipe[1], STDERR_FILENO);
        close(err_pipe[0]);
        close(err_pipe[1]);
        const int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDIN_FILENO);
        }
        if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
            const std::string msg = cwd + ": cannot enter: " + std::strerror(errno) + "\n";
            if (write(STDERR_FILENO, msg.data(), msg.size()) < 0) {}
            _exit(127);
        }
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        const std::string msg = argv[0] + ": cannot run: " + std::strerror(errno) + "\n";
        if (write(STDERR_FILENO, msg.data(), msg.size()) < 0) {}
        _exit(127);
    }
    close(err_pipe[1]);
    char buf[4096];
    ssize_t got;
    while ((got = read(err_pipe[0], buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0) result.stderr_text.append(buf, static_cast<size_t>(got));
    close(err_pipe[0]);
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
