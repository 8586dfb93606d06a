// Numbers read whole (util/parse_number.h): the readers of flags and files refuse "3x" instead of reading 3, and
// refuse out-of-range values instead of letting std::stod's exception escape as an unexplained "stod".
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include "util/csv.h"
#include "util/parse_number.h"
#include "util/split_list.h"

using cw::util::whole_double;
using cw::util::whole_float;
using cw::util::whole_integer;

TEST_CASE("whole_double reads the whole text or nothing", "[util]") {
    CHECK(whole_double("0.25").value() == 0.25);
    CHECK(whole_double("-3e2").value() == -300.0);
    CHECK(whole_double(" 7").value() == 7.0);   // strtod skips leading blanks
    CHECK(std::isnan(whole_double("nan").value()));
    CHECK(std::isinf(whole_double("inf").value()));
    CHECK_FALSE(whole_double("").has_value());
    CHECK_FALSE(whole_double("3x").has_value());   // a prefix is not the number
    CHECK_FALSE(whole_double("0.5 ").has_value());
    CHECK_FALSE(whole_double("x3").has_value());
    CHECK_FALSE(whole_double("1e400").has_value());   // beyond double
}

TEST_CASE("whole_float refuses what does not fit a float", "[util]") {
    CHECK(whole_float("0.1").value() == 0.1f);
    CHECK_FALSE(whole_float("1e40").has_value());   // fits a double, not a float
    CHECK_FALSE(whole_float("1e-50").has_value());  // underflows a float
    CHECK_FALSE(whole_float("1,5").has_value());
}

TEST_CASE("whole_integer reads decimal integers only", "[util]") {
    CHECK(whole_integer("17").value() == 17);
    CHECK(whole_integer("-4").value() == -4);
    CHECK(whole_integer("010").value() == 10);   // base 10, not octal
    CHECK(whole_integer("9223372036854775807").value() == 9223372036854775807LL);
    CHECK_FALSE(whole_integer("9223372036854775808").has_value());
    CHECK_FALSE(whole_integer("3.5").has_value());
    CHECK_FALSE(whole_integer("3e2").has_value());
    CHECK_FALSE(whole_integer("0x10").has_value());
    CHECK_FALSE(whole_integer("").has_value());
}

TEST_CASE("the list and CSV readers built on it keep their messages", "[util]") {
    CHECK(cw::util::positive_number("--eps", "0.5") == 0.5f);
    CHECK_THROWS_WITH(cw::util::positive_number("--eps", "1e40"), "--eps: '1e40' is not a positive number");
    CHECK_THROWS_WITH(cw::util::positive_number("--eps", "2x"), "--eps: '2x' is not a positive number");
    CHECK_THROWS_WITH(cw::util::positive_number("--eps", "0"), "--eps: '0' is not a positive number");
    CHECK(cw::util::csv_number("12.5", "h.csv") == 12.5);
    CHECK(std::isnan(cw::util::csv_number("", "h.csv")));
    CHECK_THROWS_WITH(cw::util::csv_number("1.2.3", "h.csv"), "h.csv: '1.2.3' is not a number");
}
