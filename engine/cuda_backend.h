#pragma once
// The CUDA backend's entry points. engine/cuda/*.cu defines them when the CUDA toolkit is present at build time;
// engine/cuda_absent.cpp defines them otherwise, so every binary links and runs on machines without a GPU.
#include <string>

namespace cw {
class Backend;
bool cuda_backend_usable(std::string* why);
Backend& cuda_backend();  // throws DeviceError when not usable
}  // namespace cw
