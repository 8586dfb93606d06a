// Which GPUs `make` builds the CUDA plugin for (Makefile, "CUDA plugin"): read off `make -n -B` (print every command,
// run none) with a stand-in CUDA toolkit (an nvcc and a cudnn.h that only need to exist) and a stand-in nvidia-smi
// first on PATH, so the answer is the same on a machine with or without a real GPU.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_nn_util.h"
#include "tests/test_process.h"

namespace fs = std::filesystem;

namespace {

void write_executable(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    fs::permissions(file, fs::perms::owner_all);
}

struct StandIns {
    cw_nn_test::ScratchDir dir;
    StandIns() {
        write_executable(dir.path / "cuda/bin/nvcc", "#!/bin/sh\nexit 0\n");
        write_executable(dir.path / "cuda/include/cudnn.h", "\n");
    }
    // nvidia-smi answering `--query-gpu=compute_cap` with these lines; "" stands for no GPU (no driver: it fails).
    std::string make(const std::string& target, const std::string& compute_caps) {
        write_executable(dir.path / "bin/nvidia-smi", compute_caps.empty() ? "#!/bin/sh\nexit 9\n"
                                                                           : "#!/bin/sh\nprintf '" + compute_caps + "'\n");
        const auto out = cw_test::run_shell("cd '" + cw_test::repo_root().string() + "' && PATH='" +
                                            (dir.path / "bin").string() + "':\"$PATH\" make -n -B " + target +
                                            " CUDA_HOME='" + (dir.path / "cuda").string() + "' 2>&1");
        INFO(out.text.substr(0, 2000));
        REQUIRE(out.code == 0);
        return out.text;
    }
};

bool compiles_kernels(const std::string& make_output) {
    return make_output.find("/cuda/bin/nvcc -O3") != std::string::npos;
}

}  // namespace

TEST_CASE("make: the CUDA plugin is built for the GPUs present, and only where one is", "[build]") {
    StandIns s;
    SECTION("no GPU: `make` leaves it out, `make cuda` builds it for sm_90 with its PTX") {
        CHECK_FALSE(compiles_kernels(s.make("all", "")));
        const std::string cuda = s.make("cuda", "");
        CHECK(cuda.find("-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 ") !=
              std::string::npos);
    }
    SECTION("an A100 and an H100: machine code for both, PTX of the newer") {
        const std::string all = s.make("all", "9.0\\n8.0\\n9.0\\n");
        CHECK(all.find("-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 "
                       "-gencode arch=compute_90,code=compute_90 ") != std::string::npos);
    }
    SECTION("a Blackwell card sorts after the others by number, not as text") {
        const std::string all = s.make("all", "10.0\\n8.9\\n");
        CHECK(all.find("-gencode arch=compute_89,code=sm_89 -gencode arch=compute_100,code=sm_100 "
                       "-gencode arch=compute_100,code=compute_100 ") != std::string::npos);
    }
    SECTION("a GPU older than this nvcc supports (Volta, 7.0) counts as none") {
        CHECK_FALSE(compiles_kernels(s.make("all", "7.0\\n")));
    }
}
