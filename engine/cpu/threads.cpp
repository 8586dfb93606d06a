// The OpenMP thread team of the CPU backend (OpenBLAS's OpenMP build shares it): its size and how it waits.
//
// Waiting. libgomp's default has an idle thread spin for 300,000 rounds before it sleeps. On a machine shared with
// other work a spinning thread burns the core that the thread it waits for needs: with one `yes > /dev/null`
// beside it, the small CNN's 2-thread training step went from 50 to 297 ms. Measured on the 2-core machine (train
// step, medians of 3 interleaved runs; unloaded / with one `yes`): default 68 / 311 ms; GOMP_SPINCOUNT=1000
// 68 / 144 ms; 10,000: 67 / 211 ms; OMP_WAIT_POLICY=passive 86 / 123 ms. A thousand rounds keep the unloaded speed
// and halve the loaded time; passive waiting costs unloaded speed (every parallel region then wakes sleeping
// threads), so it stays the user's choice. libgomp reads its environment once, in its own constructor, and no
// setting can be changed afterwards. A setenv from a constructor of ours, or from the first backend call, comes
// too late; one from the executable's .preinit_array (which runs before every shared library's constructor) is
// undone, because libc's own initialisation then re-installs the original environment. So the .preinit_array
// entry re-executes the program once with GOMP_SPINCOUNT=1000 added (same pid, arguments and descriptors),
// unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT or the program runs under valgrind; if the re-execution
// fails, the program goes on as it is.

// Size. CLASSWISE_THREADS if set, else OMP_NUM_THREADS if set, else the cores this process may run on: its CPU
// affinity, capped by a cgroup CPU quota (a container given 2 CPUs of a 64-core host).
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "engine/cpu/cpu_backend.h"
#include "engine/error.h"
#include "engine/threads.h"

namespace cw {

namespace {

// Runs before libgomp initialises (see above); nothing of libc's or the C++ runtime's initialisation has run, so it
// reads the environment it is given and calls only execve.
bool starts_with(const char* s, const char* prefix) {
    while (*prefix)
        if (*s++ != *prefix++) return false;
    return true;
}

bool contains(const char* s, const char* part) {
    for (; *s; ++s)
        if (starts_with(s, part)) return true;
    return false;
}

void reexec_with_short_spinning(int, char** argv, char** envp) {
    if (!argv || !argv[0] || !envp) return;
    int n = 0;
    for (; envp[n]; ++n) {
        if (starts_with(envp[n], "OMP_WAIT_POLICY=") || starts_with(envp[n], "GOMP_SPINCOUNT=")) return;
        // Under valgrind /proc/self/exe is valgrind's tool, not this program: re-executing would stop the run.
        if (starts_with(envp[n], "LD_PRELOAD=") && contains(envp[n], "vgpreload")) return;
    }
    static char spin[] = "GOMP_SPINCOUNT=1000";
    char** env = static_cast<char**>(__builtin_alloca(sizeof(char*) * (n + 2)));
    for (int i = 0; i < n; ++i) env[i] = envp[i];
    env[n] = spin;
    env[n + 1] = nullptr;
    execve("/proc/self/exe", argv, env);  // returns only on failure: then go on with the default policy
}

// cgroup v2 "cpu.max" ("max 100000" or "<quota> <period>") or v1 cfs quota/period; 0 when there is no quota.
int cgroup_cpu_quota() {
    double quota = -1, period = 0;
    std::ifstream v2("/sys/fs/cgroup/cpu.max");
    std::string q;
    if (v2 >> q >> period) {
        if (q != "max") quota = std::atof(q.c_str());
    } else {
        std::ifstream v1q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), v1p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
        if (!(v1q >> quota) || !(v1p >> period)) return 0;
    }
    if (quota <= 0 || period <= 0) return 0;
    return std::max(1, static_cast<int>(std::ceil(quota / period)));
}

}  // namespace

// Not static: a section entry that nothing names would be dropped; `used` keeps it in the object file, and this
// file is linked whenever the CPU backend is (cpu_backend() calls configure_cpu_threads()).
__attribute__((section(".preinit_array"), used)) void (*const cw_preinit_omp_wait_policy)(int, char**, char**) =
    &reexec_with_short_spinning;

int parse_thread_count(const std::string& name, const char* text) {
    const std::string s = text ? text : "";
    char* end = nullptr;
    errno = 0;
    const long v = s.empty() ? 0 : std::strtol(s.c_str(), &end, 10);
    const bool digits_first = !s.empty() && s[0] >= '0' && s[0] <= '9';  // strtol would skip spaces, take signs
    if (!digits_first || errno != 0 || *end != '\0' || v < 1 || v > kMaxCpuThreads)
        throw Error(name + " must be a whole number of threads from 1 to " + std::to_string(kMaxCpuThreads) +
                    ", got '" + s + "'");
    return static_cast<int>(v);
}

int available_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : omp_get_num_procs();
    const int quota = cgroup_cpu_quota();
    if (quota > 0 && quota < cores) cores = quota;
    return std::max(1, cores);
}

int cpu_threads_from_environment() {
    if (const char* v = std::getenv("CLASSWISE_THREADS")) return parse_thread_count("CLASSWISE_THREADS", v);
    if (const char* v = std::getenv("OMP_NUM_THREADS"); v && *v) return 0;  // the user's, already applied by libgomp
    return available_cores();
}

void configure_cpu_threads() {
    const int n = cpu_threads_from_environment();
    if (n > 0) omp_set_num_threads(n);
}

void set_cpu_threads(int n) {
    if (n < 1 || n > kMaxCpuThreads)
        throw Error("set_cpu_threads: " + std::to_string(n) + " threads, expected 1 to " + std::to_string(kMaxCpuThreads));
    cpu_backend();   // the environment's size first: otherwise the first op (or worker_threads) would undo this one
    omp_set_num_threads(n);
}

int cpu_threads() { return omp_get_max_threads(); }

int worker_threads() {
    cpu_backend();   // configures the team once (configure_cpu_threads), as the first op would
    return cpu_threads();
}

}  // namespace cw
