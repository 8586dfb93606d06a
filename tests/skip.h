#pragma once
// Catch2 v2 has no notion of a skipped test. CW_SKIP records the test as skipped (reported in the closing
// summary line "N passed, N failed, N skipped") and leaves it; a skipped test is never counted as passed.
#include <catch2/catch.hpp>
#include <string>

namespace cw_test {
void mark_skipped(const std::string& test_name, const std::string& reason);
}

#define CW_SKIP(reason)                                                                        \
    do {                                                                                       \
        cw_test::mark_skipped(Catch::getResultCapture().getCurrentTestName(), (reason));      \
        return;                                                                                \
    } while (0)
