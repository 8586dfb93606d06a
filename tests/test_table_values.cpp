// report/table_values.h: how every per-class table treats a class without samples (NaN) and prints its numbers.
#include <catch2/catch.hpp>

#include <cmath>

#include "report/table_values.h"

using namespace cw::report;

TEST_CASE("table values: NaN classes are left out of the mean and the worst class", "[report]") {
    CHECK(mean_defined({0.5, NAN, 0.25}) == Approx(0.375));
    CHECK(std::isnan(mean_defined({NAN, NAN})));
    CHECK(std::isnan(mean_defined({})));
    CHECK(argmin_defined({0.4, NAN, 0.1, 0.1}) == 2);   // lowest index on ties
    CHECK(argmin_defined({NAN, 0.9}) == 1);
    CHECK(argmin_defined({NAN}) == -1);
    CHECK(class_label({"cat", "dog"}, 1) == "dog");
    CHECK(class_label({"cat", "dog"}, -1) == "–");
    CHECK(class_label({"cat", "dog"}, 2) == "–");
}

TEST_CASE("table values: printed numbers, changes in points and JSON nulls", "[report]") {
    CHECK(fixed_or_dash(0.126, 2) == "0.13");
    CHECK(fixed_or_dash(-0.5, 0) == "-0");   // printf rounds half to even: tables print what printf prints
    CHECK(fixed_or_dash(NAN, 1) == "–");
    CHECK(points_change(0.012) == "+1.2");
    CHECK(points_change(-0.005) == "−0.5");   // U+2212, the sign the tables use
    CHECK(points_change(0.0004) == "0.0");
    CHECK(points_change(-0.0004) == "0.0");  // no "−0.0"
    CHECK(points_change(NAN) == "–");
    CHECK(number_or_null(NAN).is_null());
    CHECK(number_or_null(0.5).get<double>() == 0.5);
}
