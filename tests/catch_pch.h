// The headers nearly every test file parses, precompiled once with the test files' own flags (Makefile: TEST_PCH)
// and given to each of them with -include: Catch2's single header alone costs about 1.2 s of compiling per file,
// and nlohmann::json another 2 s in each file that uses it. tests/main.cpp configures Catch2 itself
// (CATCH_CONFIG_RUNNER) and compiles without it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
