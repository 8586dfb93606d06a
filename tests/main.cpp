// Catch2 main with a listener that prints one closing line "N passed, N failed, N skipped" (test cases).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "tests/skip.h"

namespace {
std::set<std::string> g_skipped;
int g_passed = 0, g_failed = 0;
}  // namespace

void cw_test::mark_skipped(const std::string& name, const std::string& reason) {
    g_skipped.insert(name);
    std::printf("SKIPPED: %s — %s\n", name.c_str(), reason.c_str());
}

struct CountingListener : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        const std::string& name = stats.testInfo.name;
        if (!stats.totals.assertions.allOk()) ++g_failed;
        else if (!g_skipped.count(name)) ++g_passed;
    }
};
CATCH_REGISTER_LISTENER(CountingListener)

int main(int argc, char* argv[]) {
    const int rc = Catch::Session().run(argc, argv);
    std::printf("%d passed, %d failed, %zu skipped\n", g_passed, g_failed, g_skipped.size());
    return rc;
}
