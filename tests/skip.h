#pragma once
// Catch2 v2 has no notion of a skipped test. CW_SKIP records the test as skipped (reported in the closing
// summary line "N passed, N failed, N skipped") and leaves it; a skipped test is never counted as passed.
#include <catch2/catch.hpp>
#include <string>

#include "engine/cuda_backend.h"
#include "engine/device.h"

namespace cw_test {
void mark_skipped(const std::string& test_name, const std::string& reason);
}

#define CW_SKIP(reason)                                                                        \
    do {                                                                                       \
        cw_test::mark_skipped(Catch::getResultCapture().getCurrentTestName(), (reason));      \
        return;                                                                                \
    } while (0)

// Every test that needs a GPU starts with this: without a usable GPU it skips, or, under CLASSWISE_REQUIRE_GPU=1
// (a run on a GPU machine, where a skip would look green), it fails with the reason.
#define CW_SKIP_WITHOUT_GPU()                                                                  \
    do {                                                                                       \
        std::string cw_no_gpu_why_;                                                            \
        if (!cw::cuda_available(&cw_no_gpu_why_)) {                                            \
            if (cw::gpu_required()) FAIL("CLASSWISE_REQUIRE_GPU=1 but no usable GPU: " + cw_no_gpu_why_); \
            CW_SKIP("no usable GPU: " + cw_no_gpu_why_);                                       \
        }                                                                                      \
    } while (0)
