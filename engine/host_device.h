#pragma once
// CW_HD marks a function compiled for the host and, under nvcc, for the GPU too: the arithmetic that CPU and CUDA
// kernels must share (engine/attack_math.h, engine/cuda/index_math.h) is written once with it.
#ifdef __CUDACC__
#define CW_HD __host__ __device__ inline
#else
#define CW_HD inline
#endif
