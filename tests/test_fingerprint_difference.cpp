// The line that says why a --resume is refused: what the saved evaluation state and this run differ in. Expected
// strings written by hand from the two fingerprints.
#include <catch2/catch.hpp>

#include "eval/fingerprint_difference.h"

using cw::eval::fingerprint_difference;
using nlohmann::json;

TEST_CASE("fingerprint_difference names each differing entry by its path, with both short values", "[eval]") {
    const json saved = {{"seed", 0},
                        {"num_batches", 4},
                        {"classes", {"a", "b"}},
                        {"run", {{"weights", "/abs/run/last.safetensors"}, {"n", 1000}}}};
    json now = saved;
    CHECK(fingerprint_difference(saved, now).empty());

    now["run"]["weights"] = "run/last.safetensors";  // the stop-45 case: the same checkpoint named another way
    CHECK(fingerprint_difference(saved, now) ==
          "run.weights is \"/abs/run/last.safetensors\" in the state, \"run/last.safetensors\" here");

    now["seed"] = 2;
    CHECK(fingerprint_difference(saved, now) ==
          "run.weights is \"/abs/run/last.safetensors\" in the state, \"run/last.safetensors\" here; "
          "seed is 0 in the state, 2 here");
}

TEST_CASE("fingerprint_difference names long values and missing keys without printing them", "[eval]") {
    const json long_list = json::array({"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse"});
    const json saved = {{"attacks", long_list}, {"run", {{"n", 100}}}};
    json now = {{"attacks", json::array({"airplane"})}, {"run", {{"n", 100}, {"eps", 0.5}}}};
    CHECK(fingerprint_difference(saved, now) == "attacks differ; run.eps is new here");
    CHECK(fingerprint_difference(now, saved) == "attacks differ; run.eps is only in the state");
}
