#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "util/split_list.h"
#include "engine/backend.h"
#include "engine/cuda_backend.h"
#include "engine/error.h"

#ifndef CW_CUDA_PLUGIN_PATH
#define CW_CUDA_PLUGIN_PATH ""
#endif

namespace cw {

namespace fs = std::filesystem;

namespace {
constexpr const char* kPluginName = "libclasswise_cuda.so";
// build/tests/x and build/bench/x reach build/ one level up, experiments/x reaches <repo>/build/ one level up;
// three levels also cover a build folder nested one deeper (e.g. out/build/tests/x).
constexpr int kParentLevels = 3;

bool readable_file(const std::string& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec) && access(path.c_str(), R_OK) == 0;
}

std::string executable_path() {
    std::vector<char> buf(4096);
    const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string();
}

struct PluginState {
    Backend* backend = nullptr;
    std::string why;
};

PluginState load() {
    PluginState st;
    const std::string path =
        resolve_cuda_plugin(executable_path(), std::getenv("CLASSWISE_CUDA_PLUGIN"), built_cuda_plugin_path(), &st.why);
    if (path.empty()) return st;
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
    if (!st.backend) st.why = err[0] ? err : "the CUDA plugin " + path + " found no usable GPU";
    return st;
}

PluginState& state() {
    static PluginState st = load();
    return st;
}
}  // namespace

std::vector<std::string> cuda_plugin_candidates(const std::string& exe_path, const char* env,
                                                const std::string& built_path) {
    if (env && *env) return {env};
    std::vector<std::string> out;
    auto add = [&out](const std::string& p) {
        if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    };
    fs::path dir = fs::path(exe_path).parent_path();
    for (int level = 0; level <= kParentLevels && !dir.empty(); ++level) {
        add((dir / kPluginName).string());
        add((dir / "build" / kPluginName).string());
        if (dir == dir.parent_path()) break;  // the root
        dir = dir.parent_path();
    }
    add(built_path);
    return out;
}

std::string resolve_cuda_plugin(const std::string& exe_path, const char* env, const std::string& built_path,
                                std::string* why) {
    const std::vector<std::string> candidates = cuda_plugin_candidates(exe_path, env, built_path);
    for (const auto& path : candidates)
        if (readable_file(path)) return path;
    if (why) {
        if (env && *env)
            *why = std::string("CLASSWISE_CUDA_PLUGIN=") + env + " is not a readable file (set it to the path of " +
                   kPluginName + ", or unset it to search beside the executable)";
        else
            *why = std::string("no CUDA plugin ") + kPluginName + " found (tried " + util::join_list(candidates) +
                   "; set CLASSWISE_CUDA_PLUGIN to its path)";
    }
    return "";
}

std::string built_cuda_plugin_path() { return CW_CUDA_PLUGIN_PATH; }

bool gpu_required() {
    const char* v = std::getenv("CLASSWISE_REQUIRE_GPU");
    if (!v || !*v || std::strcmp(v, "0") == 0) return false;
    if (std::strcmp(v, "1") == 0) return true;
    throw Error(std::string("CLASSWISE_REQUIRE_GPU='") + v + "': expected 1 (GPU skips fail) or 0/unset");
}

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
