#pragma once
// Numbers as the project prints them, in one place: table cells (a NaN is a class without samples, printed "–"),
// percentages in log lines, and durations in progress lines.
#include <string>

namespace cw::util {

// v with `digits` decimals, or "–" for NaN.
std::string fixed_or_dash(double v, int digits);

// A fraction as a percentage without the sign, for table cells: 0.4871 → "48.7" (digits 1); "–" for NaN.
std::string percent_or_dash(double fraction, int digits = 1);

// A fraction as a percentage with the sign, for log lines: 0.4871 → "48.71%"; "–" for NaN.
std::string percent_text(double fraction);

// "12.4 s" below a minute, "3m 07s" below an hour, "1h 02m" above.
std::string format_duration(double seconds);

}  // namespace cw::util
