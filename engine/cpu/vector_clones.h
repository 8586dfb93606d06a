// Hot loops that the compiler vectorises are built for AVX-512, AVX2 and plain x86-64, and the running CPU picks
// one at load time (GCC target_clones): the build itself never assumes more than x86-64.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CW_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CW_VECTOR_CLONES
#endif
