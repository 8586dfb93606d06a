#pragma once
// The CUDA backend lives in a plugin, libclasswise_cuda.so, loaded at run time: every binary starts and runs on
// machines without a GPU, a driver or the CUDA libraries, and says why it falls back to the CPU.
// The plugin exports one C function, cw_cuda_create_backend (engine/cuda/plugin_entry.cu).
#include <string>
#include <vector>

namespace cw {
class Backend;
// Loads the plugin once and asks it for a usable GPU; `why` receives a one-line reason when there is none.
bool cuda_backend_usable(std::string* why);
Backend& cuda_backend();  // throws DeviceError when not usable

// Where the plugin is looked for, in order. A set, non-empty $CLASSWISE_CUDA_PLUGIN (`env`) is the only
// candidate: a path the user named is never silently swapped for another. Otherwise the executable's folder and
// up to three folders above it, each as <dir>/libclasswise_cuda.so then <dir>/build/libclasswise_cuda.so (so
// build/tests/x, build/tools/x, experiments/x and a moved or copied build/ all find their own plugin), then
// `built_path`, the build folder's plugin compiled in. No duplicates.
std::vector<std::string> cuda_plugin_candidates(const std::string& exe_path, const char* env,
                                                const std::string& built_path);
// The first candidate that is a readable file, or "" with `why` saying what was tried: the path named by
// $CLASSWISE_CUDA_PLUGIN and what is wrong with it, else every place searched.
std::string resolve_cuda_plugin(const std::string& exe_path, const char* env, const std::string& built_path,
                                std::string* why);
// The plugin path of the build folder this binary was compiled in (CW_CUDA_PLUGIN_PATH), "" when none.
std::string built_cuda_plugin_path();

// CLASSWISE_REQUIRE_GPU=1 marks a run on a GPU machine, where a GPU test or benchmark that skips would look
// green: they fail instead. Unset, empty or 0 means off; any other value throws an Error naming the variable.
bool gpu_required();
}  // namespace cw

extern "C" {
// Returns a backend for GPU 0, or null with a reason in err (no driver, no GPU, ...).
typedef cw::Backend* (*cw_cuda_create_backend_fn)(char* err, unsigned long err_len);
}
