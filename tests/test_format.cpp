// util/format.h (and util/split_list.h's lists): the one home of the percentages and durations every output prints. The expected strings are
// written by hand from the rules in the header (and are what the code they replaced printed).
#include <catch2/catch.hpp>

#include <cmath>

#include "util/format.h"
#include "util/split_list.h"

using namespace cw;

TEST_CASE("percentages: one decimal by default, a dash for an accuracy over nothing", "[format]") {
    CHECK(util::percent(0.4871) == "48.7");
    CHECK(util::percent(0.4871, 2) == "48.71");
    CHECK(util::percent(1.0) == "100.0");
    CHECK(util::percent(0.0) == "0.0");
    CHECK(util::percent(-0.0123) == "-1.2");           // a difference in points
    CHECK(util::percent(std::nan("")) == "–");
    CHECK(util::percent(0.0025) == "0.2");             // 0.25 exactly: ties go to even, as printf does
    CHECK(util::percent_of(1, 8) == "12.5");
    CHECK(util::percent_of(1, 3, 2) == "33.33");
    CHECK(util::percent_of(0, 0) == "–");
    CHECK(util::percent_pm(0.516, 0.015) == "51.6 ± 1.5");
}

TEST_CASE("durations: a progress line's clock, an estimate, a report's cost", "[format]") {
    CHECK(util::duration_clock(12.44) == "12.4 s");
    CHECK(util::duration_clock(187.9) == "3m 07s");
    CHECK(util::duration_clock(3725) == "1h 02m");
    CHECK(util::duration_clock(360000) == "100h 00m");
    CHECK(util::duration_estimate(95) == "95.0 s");
    CHECK(util::duration_estimate(396) == "6.6 min");
    CHECK(util::duration_estimate(36000) == "10.0 h");
    CHECK(util::duration_estimate(259199) == "72.0 h");   // hours up to 3 days
    CHECK(util::duration_estimate(475200) == "5.5 days");
    CHECK(util::duration_seconds(12.34) == "12.3 s");
    CHECK(util::duration_seconds(119.4) == "119 s");
    CHECK(util::duration_seconds(512) == "512 s (8.5 min)");
}

TEST_CASE("fixed numbers: digits, a sign for an effect's direction, a dash for NaN", "[format]") {
    CHECK(util::fixed(12.345) == "12.3");
    CHECK(util::fixed(0.456, 2) == "0.46");
    CHECK(util::fixed(2.4, 1, true) == "+2.4");
    CHECK(util::fixed(0.0, 1, true) == "+0.0");
    CHECK(util::fixed(-0.75, 1, true) == "-0.8");   // round half to even on the binary value 0.75: "-0.8"
    CHECK(util::fixed(10.0, 0) == "10");
    CHECK(util::fixed(std::nan(""), 1, true) == "–");
}

TEST_CASE("an error message as one line: every line break a space, \\r\\n one break", "[format]") {
    CHECK(util::one_line("a\nb") == "a b");
    CHECK(util::one_line("Run with --help for more information.\n") == "Run with --help for more information. ");
    CHECK(util::one_line("x\r\ny\rz") == "x y z");
    CHECK(util::one_line("\n\n") == "  ");
    CHECK(util::one_line("no break") == "no break");
    CHECK(util::one_line("") == "");
}

TEST_CASE("comma-separated lists: split drops empty items, join is its inverse for messages", "[format]") {
    CHECK(util::split_list("a,b,,c,") == std::vector<std::string>{"a", "b", "c"});
    CHECK(util::split_list("").empty());
    CHECK(util::join_list({"a", "b", "c"}) == "a, b, c");
    CHECK(util::join_list({"a", "b", "c"}, ",") == "a,b,c");
    CHECK(util::join_list({"only"}) == "only");
    CHECK(util::join_list({}).empty());
    CHECK(util::join_list(util::split_list("pgd20,fgsm"), ",") == "pgd20,fgsm");
}
