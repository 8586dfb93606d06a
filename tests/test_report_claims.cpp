// report/claims.h: the paired effect over seeds, its 95% t interval and the verdict rules of docs/reproduction.md.
// Every expected number is worked by hand from the textbook formulas (sample sd with n − 1; t quantiles from a
// printed table), independently of the code.
#include <catch2/catch.hpp>

#include "report/claims.h"

using namespace cw::report;

TEST_CASE("claims: Student t quantiles are the two-sided 95% table values for n − 1 degrees of freedom", "[report]") {
    CHECK(t_quantile_975(1) == Approx(12.706));
    CHECK(t_quantile_975(2) == Approx(4.303));
    CHECK(t_quantile_975(4) == Approx(2.776));
    CHECK(t_quantile_975(30) == Approx(2.042));
    CHECK(t_quantile_975(1000) == Approx(1.960));
    CHECK_THROWS_WITH(t_quantile_975(0), Catch::Contains("degrees of freedom must be >= 1"));
}

TEST_CASE("claims: the paired effect is the mean difference with a t interval over the seeds", "[report]") {
    // {1, 2, 3}: mean 2, sample sd 1, half-width 4.303 / sqrt(3) = 2.48434.
    const auto e = paired_effect({1, 2, 3});
    CHECK(e.n == 3);
    CHECK(e.mean == Approx(2));
    CHECK(e.sd == Approx(1));
    CHECK(e.lo == Approx(2 - 2.48434).epsilon(1e-5));
    CHECK(e.hi == Approx(2 + 2.48434).epsilon(1e-5));
    // One seed: a mean, no interval.
    const auto one = paired_effect({0.7});
    CHECK(one.n == 1);
    CHECK(one.lo == Approx(0.7));
    CHECK(one.hi == Approx(0.7));
}

TEST_CASE("claims: the verdict reads the interval against 0 and against the paper's size", "[report]") {
    // {2, 3, 4}: [0.51566, 5.48434] excludes 0 above: a claimed rise is reproduced, a claimed fall is not.
    CHECK(judge(paired_effect({2, 3, 4}), {+1, std::nullopt}) == Verdict::reproduced);
    CHECK(judge(paired_effect({2, 3, 4}), {-1, std::nullopt}) == Verdict::not_reproduced);
    CHECK(judge(paired_effect({-2, -3, -4}), {-1, std::nullopt}) == Verdict::reproduced);
    // {0, 1, 2}: [-1.48434, 3.48434] holds 0: undecided without a size; below the paper's 5: not reproduced;
    // a paper size of 3 is still inside: undecided.
    CHECK(judge(paired_effect({0, 1, 2}), {+1, std::nullopt}) == Verdict::undecided);
    CHECK(judge(paired_effect({0, 1, 2}), {+1, 5.0}) == Verdict::not_reproduced);
    CHECK(judge(paired_effect({0, 1, 2}), {+1, 3.0}) == Verdict::undecided);
    // A single seed decides nothing.
    CHECK(judge(paired_effect({9}), {+1, std::nullopt}) == Verdict::undecided);
}

TEST_CASE("claims: a cost bound is met when the whole interval stays above the floor", "[report]") {
    // {-1, -1.5, -0.5}: mean -1, sd 0.5, half-width 4.303 * 0.5 / sqrt(3) = 1.24217: [-2.24217, 0.24217].
    CHECK(judge_at_least(paired_effect({-1, -1.5, -0.5}), -3) == Verdict::reproduced);
    CHECK(judge_at_least(paired_effect({-1, -1.5, -0.5}), -2) == Verdict::undecided);
    // {-5, -6, -4}: [-7.48434, -2.51566] lies below -2: the cost exceeds the bound.
    CHECK(judge_at_least(paired_effect({-5, -6, -4}), -2) == Verdict::not_reproduced);
}

TEST_CASE("claims: the seeds that would decide an effect at its measured mean and sd", "[report]") {
    // mean 1, sd 1: half-widths t(n-1)/sqrt(n) = 8.98, 2.48, 1.59, 1.24, 1.0498 (n = 2..6), 0.9249 at n = 7.
    CHECK(seeds_to_decide(1, 1) == 7);
    CHECK(seeds_to_decide(-1, 1) == 7);
    CHECK(seeds_to_decide(10, 1) == 2);  // 12.706 / sqrt(2) = 8.98 < 10
    CHECK_FALSE(seeds_to_decide(0, 1).has_value());
    CHECK_FALSE(seeds_to_decide(0.01, 1, 20).has_value());
}
