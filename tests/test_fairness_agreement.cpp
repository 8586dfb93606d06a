// Spearman's ρ with ties, cosine similarity of class vectors and superclass confusion on hand-computed cases.
#include <catch2/catch.hpp>
#include <cmath>

#include "eval/agreement.h"

using namespace cw::fairness;

TEST_CASE("Spearman's rho: identical, reversed, ties by hand, NaN classes left out", "[fairness]") {
    REQUIRE(spearman({0.1, 0.5, 0.3, 0.9}, {0.2, 0.6, 0.4, 0.8}) == Approx(1.0));
    REQUIRE(spearman({0.1, 0.5, 0.3, 0.9}, {0.9, 0.3, 0.5, 0.1}) == Approx(-1.0));
    // x ranks (1, 2.5, 2.5, 4), y ranks (1, 3, 2, 4): cov 4.5, var 4.5 and 5 → 4.5 / √22.5.
    REQUIRE(fractional_ranks({1, 2, 2, 3}) == std::vector<double>{1, 2.5, 2.5, 4});
    REQUIRE(spearman({1, 2, 2, 3}, {1, 3, 2, 4}) == Approx(4.5 / std::sqrt(22.5)).epsilon(1e-12));
    // A class without samples (NaN) drops out of both sides.
    const double nan = std::nan("");
    REQUIRE(spearman({1, nan, 2, 2, 3}, {1, 7, 3, 2, 4}) == Approx(4.5 / std::sqrt(22.5)).epsilon(1e-12));
    REQUIRE(std::isnan(spearman({0.5, 0.5, 0.5}, {0.1, 0.2, 0.3})));   // a constant side has no ranking
    REQUIRE(std::isnan(spearman({0.5, nan}, {0.1, 0.2})));
    REQUIRE_THROWS_WITH(spearman({1, 2}, {1, 2, 3}), Catch::Matchers::Contains("2 and 3 per-class values"));
}

TEST_CASE("cosine similarity of class vectors and superclass confusion", "[fairness]") {
    const auto s = cosine_similarity({{1, 0}, {0, 2}, {1, 1}, {0, 0}});
    REQUIRE(s[0][0] == Approx(1.0));
    REQUIRE(s[0][1] == Approx(0.0).margin(1e-15));
    REQUIRE(s[0][2] == Approx(1 / std::sqrt(2.0)));
    REQUIRE(s[2][1] == Approx(1 / std::sqrt(2.0)));
    REQUIRE(std::isnan(s[3][0]));
    REQUIRE(std::isnan(s[1][3]));
    REQUIRE_THROWS_WITH(cosine_similarity({{1, 0}, {1}}), Catch::Matchers::Contains("class 1 has a vector of 1 values"));

    const Confusion fine{{5, 1, 0, 0}, {2, 3, 1, 0}, {0, 0, 4, 0}, {1, 0, 2, 6}};
    REQUIRE(superclass_confusion(fine, {0, 0, 1, 1}, 2) == Confusion{{11, 1}, {1, 12}});
    REQUIRE_THROWS_WITH(superclass_confusion(fine, {0, 0, 1, 2}, 2), Catch::Matchers::Contains("class 3 has coarse label 2"));
}
