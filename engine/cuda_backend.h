#pragma once
// The CUDA backend lives in a plugin, libclasswise_cuda.so, loaded at run time: every binary starts and runs on
// machines without a GPU, a driver or the CUDA libraries, and says why it falls back to the CPU.
// The plugin exports one C function, cw_cuda_create_backend (engine/cuda/plugin_entry.cu).
#include <string>

namespace cw {
class Backend;
// Loads the plugin once and asks it for a usable GPU; `why` receives a one-line reason when there is none.
bool cuda_backend_usable(std::string* why);
Backend& cuda_backend();  // throws DeviceError when not usable
}  // namespace cw

extern "C" {
// Returns a backend for GPU 0, or null with a reason in err (no driver, no GPU, ...).
typedef cw::Backend* (*cw_cuda_create_backend_fn)(char* err, unsigned long err_len);
}
