// Where binaries look for the CUDA plugin (engine/cuda_backend.h), on temporary folder trees laid out like a
// build: binaries live in build/tests, build/tools, build/bench and experiments/, and a build folder may be moved.
// Runs everywhere: the search only needs files, not a GPU. Also CLASSWISE_REQUIRE_GPU's parsing.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "engine/cuda_backend.h"
#include "engine/error.h"
#include "tests/skip.h"
#include "tests/test_datasets_fixtures.h"

using namespace cw;
using cw_fixtures::TempDir;

namespace {

void touch(const std::string& path) { cw_fixtures::write_file(path, {0x7f, 'E', 'L', 'F'}); }

// Sets an environment variable for one scope and puts back what was there before.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("plugin candidates: the executable's folder and three above it, each plain and /build, then the built path",
          "[cuda_plugin]") {
    const std::vector<std::string> expected = {
        "/a/b/c/d/libclasswise_cuda.so", "/a/b/c/d/build/libclasswise_cuda.so",
        "/a/b/c/libclasswise_cuda.so",   "/a/b/c/build/libclasswise_cuda.so",
        "/a/b/libclasswise_cuda.so",     "/a/b/build/libclasswise_cuda.so",
        "/a/libclasswise_cuda.so",       "/a/build/libclasswise_cuda.so",
        "/opt/cw/build/libclasswise_cuda.so"};
    CHECK(cuda_plugin_candidates("/a/b/c/d/exe", nullptr, "/opt/cw/build/libclasswise_cuda.so") == expected);
    // An empty variable counts as unset; the walk stops at the root and lists nothing twice.
    CHECK(cuda_plugin_candidates("/x/exe", "", "/x/build/libclasswise_cuda.so") ==
          std::vector<std::string>{"/x/libclasswise_cuda.so", "/x/build/libclasswise_cuda.so",
                                   "/libclasswise_cuda.so", "/build/libclasswise_cuda.so"});
    // A set CLASSWISE_CUDA_PLUGIN is the only candidate.
    CHECK(cuda_plugin_candidates("/a/b/exe", "/p/my.so", "/opt/cw/build/libclasswise_cuda.so") ==
          std::vector<std::string>{"/p/my.so"});
}

TEST_CASE("a moved build folder finds its own plugin, not the one compiled in", "[cuda_plugin]") {
    TempDir tmp;
    const std::string moved = tmp / "moved_build/libclasswise_cuda.so";
    const std::string original = tmp / "original/build/libclasswise_cuda.so";  // still there, but not ours
    touch(moved);
    touch(original);
    std::string why;
    for (const char* exe : {"moved_build/tests/classwise_tests", "moved_build/tools/audit", "moved_build/bench/bench_cuda"}) {
        touch(tmp / exe);
        CHECK(resolve_cuda_plugin(tmp / exe, nullptr, original, &why) == moved);
    }
    // Without a plugin beside the moved build, the built path is the last resort.
    TempDir bare;
    touch(bare / "build/tests/classwise_tests");
    CHECK(resolve_cuda_plugin(bare / "build/tests/classwise_tests", nullptr, original, &why) == original);
}

TEST_CASE("an experiment binary in <repo>/experiments finds <repo>/build's plugin", "[cuda_plugin]") {
    TempDir tmp;
    touch(tmp / "repo/experiments/quickstart");
    touch(tmp / "repo/build/libclasswise_cuda.so");
    std::string why;
    CHECK(resolve_cuda_plugin(tmp / "repo/experiments/quickstart", nullptr, "", &why) ==
          tmp / "repo/build/libclasswise_cuda.so");
}

TEST_CASE("CLASSWISE_CUDA_PLUGIN wins, and a bad one is named, never swapped for another", "[cuda_plugin]") {
    TempDir tmp;
    touch(tmp / "moved_build/libclasswise_cuda.so");
    touch(tmp / "elsewhere/custom_plugin.so");
    const std::string exe = tmp / "moved_build/tests/classwise_tests";
    std::string why;
    CHECK(resolve_cuda_plugin(exe, (tmp / "elsewhere/custom_plugin.so").c_str(), "", &why) ==
          tmp / "elsewhere/custom_plugin.so");

    const std::string missing = tmp / "elsewhere/missing.so";
    CHECK(resolve_cuda_plugin(exe, missing.c_str(), "", &why).empty());
    CHECK_THAT(why, Catch::Contains("CLASSWISE_CUDA_PLUGIN=" + missing) && Catch::Contains("not a readable file"));
    // A folder is not a plugin either.
    CHECK(resolve_cuda_plugin(exe, (tmp / "elsewhere").c_str(), "", &why).empty());
    CHECK_THAT(why, Catch::Contains("CLASSWISE_CUDA_PLUGIN=" + tmp / "elsewhere"));
}

TEST_CASE("when no plugin is found, the reason lists every place tried", "[cuda_plugin]") {
    TempDir tmp;
    const std::string exe = tmp / "build/tests/classwise_tests";
    touch(exe);
    const std::string built = tmp / "gone/build/libclasswise_cuda.so";
    std::string why;
    CHECK(resolve_cuda_plugin(exe, nullptr, built, &why).empty());
    const auto tried = cuda_plugin_candidates(exe, nullptr, built);
    // build/tests, build, the temp folder and /tmp, plain and /build, minus <tmp>/build/… listed once; the built path.
    REQUIRE(tried.size() == 8);
    for (const auto& place : tried) CHECK_THAT(why, Catch::Contains(place));
    CHECK_THAT(why, Catch::Contains("CLASSWISE_CUDA_PLUGIN"));
}

TEST_CASE("CLASSWISE_REQUIRE_GPU: 1 is on, unset/empty/0 off, anything else an error naming it", "[cuda_plugin]") {
    {
        ScopedEnv env("CLASSWISE_REQUIRE_GPU", "1");
        CHECK(gpu_required());
    }
    for (const char* off : {"0", ""}) {
        ScopedEnv env("CLASSWISE_REQUIRE_GPU", off);
        CHECK_FALSE(gpu_required());
    }
    {
        ScopedEnv env("CLASSWISE_REQUIRE_GPU", nullptr);
        CHECK_FALSE(gpu_required());
    }
    ScopedEnv env("CLASSWISE_REQUIRE_GPU", "yes");
    CHECK_THROWS_AS(gpu_required(), Error);
    CHECK_THROWS_WITH(gpu_required(), Catch::Contains("CLASSWISE_REQUIRE_GPU='yes'"));
}

TEST_CASE("the built CUDA plugin resolves every symbol it uses, GPU or not", "[cuda_plugin]") {
    // The plugin links against the engine's headers, not its library: a Backend member defined out of line in the
    // library leaves an undefined symbol, and then every GPU test skips with "could not be loaded" instead of
    // running. Without a driver the plugin may still fail to open, but only for a missing CUDA library.
    const std::string path = built_cuda_plugin_path();
    if (::access(path.c_str(), R_OK) != 0) CW_SKIP("no CUDA plugin built here (" + path + ")");
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const std::string why = handle ? std::string() : std::string(::dlerror());
    INFO(why);
    CHECK(why.find("undefined symbol") == std::string::npos);
    if (handle) ::dlclose(handle);
}
