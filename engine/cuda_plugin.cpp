#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "engine/backend.h"
#include "engine/cuda_backend.h"
#include "engine/error.h"

#ifndef CW_CUDA_PLUGIN_PATH
#define CW_CUDA_PLUGIN_PATH ""
#endif

namespace cw {

namespace {
struct PluginState {
    Backend* backend = nullptr;
    std::string why;
};

std::string executable_dir() {
    std::vector<char> buf(4096);
    const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    if (n <= 0) return "";
    std::string path(buf.data(), static_cast<size_t>(n));
    return path.substr(0, path.find_last_of('/'));
}

PluginState load() {
    PluginState st;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("CLASSWISE_CUDA_PLUGIN")) candidates.push_back(env);
    const std::string exe_dir = executable_dir();
    if (!exe_dir.empty()) candidates.push_back(exe_dir + "/libclasswise_cuda.so");
    if (*CW_CUDA_PLUGIN_PATH) candidates.push_back(CW_CUDA_PLUGIN_PATH);
    std::string tried;
    for (const auto& path : candidates) {
        if (access(path.c_str(), R_OK) != 0) {
            tried += (tried.empty() ? "" : ", ") + path;
            continue;
        }
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            st.why = "the CUDA plugin " + path + " could not be loaded: " + dlerror();
            return st;
        }
        auto create = reinterpret_cast<cw_cuda_create_backend_fn>(dlsym(handle, "cw_cuda_create_backend"));
        if (!create) {
            st.why = "the CUDA plugin " + path + " lacks cw_cuda_create_backend";
            return st;
        }
        char err[512] = {0};
        st.backend = create(err, sizeof err);
        if (!st.backend) st.why = err[0] ? err : "the CUDA plugin found no usable GPU";
        return st;
    }
    st.why = "classwise was built without its CUDA plugin (libclasswise_cuda.so not found" +
             (tried.empty() ? std::string(")") : ": tried " + tried + ")");
    return st;
}

PluginState& state() {
    static PluginState st = load();
    return st;
}
}  // namespace

bool cuda_backend_usable(std::string* why) {
    const PluginState& st = state();
    if (!st.backend && why) *why = st.why;
    return st.backend != nullptr;
}

Backend& cuda_backend() {
    const PluginState& st = state();
    if (!st.backend) throw DeviceError("CUDA requested but not usable: " + st.why);
    return *st.backend;
}

}  // namespace cw
