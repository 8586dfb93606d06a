#pragma once
// The engine's thread policy, for the threads of the rest of the project: one setting limits every pool.
#include <cstdint>

namespace cw {

// How many threads a parallel loop of ours may use: the CPU backend's team size, configured on first use from
// CLASSWISE_THREADS, else OMP_NUM_THREADS, else the cores this process may run on (its CPU affinity, capped by a
// cgroup CPU quota: a container given 2 CPUs of a 64-core host gets 2). engine/cpu/threads.cpp.
int worker_threads();

}  // namespace cw
