#pragma once
// How every output of the project writes a percentage and a duration: one home for each, the digits by fmt.
#include <cstdint>
#include <string>

namespace cw::util {

// 100·fraction with `digits` decimals ("48.7"); "–" for NaN, an accuracy over no samples. Also a difference of two
// accuracies in percentage points.
std::string percent(double fraction, int digits = 1);
// count out of total in % (100·count/total: "12.5"); "–" when total is 0.
std::string percent_of(int64_t count, int64_t total, int digits = 1);
// A mean and standard deviation of fractions, in %: "51.6 ± 1.5".
std::string percent_pm(double mean, double std);
// A number already in its unit (points, ratios) with `digits` decimals, "+" in front of a non-negative one when
// `sign` (an effect's direction: "+2.4", "-0.7"); "–" for NaN.
std::string fixed(double value, int digits = 1, bool sign = false);

// An attack radius in 255ths of the pixel range, as the papers write it: in_255ths 4/255 -> "4", 0.1 -> "25.5";
// radius_text -> "4/255", "25.5/255" (three significant digits).
std::string in_255ths(double eps);
std::string radius_text(double eps);

// A progress line's time: "12.4 s", "3m 07s", "1h 02m".
std::string duration_clock(double seconds);
// An estimate of long work: "95.0 s", "6.6 min", "10.0 h", "5.5 days" (minutes from 2 min, hours from 2 h, days
// from 3 days).
std::string duration_estimate(double seconds);
// A measured cost in a report: "12.3 s", "512 s (8.5 min)" (minutes from 2 min on).
std::string duration_seconds(double seconds);

// A message as one line: each line break (\n, \r\n or \r) becomes a space. Errors reach the user as one line
// "<program>: <what>", and some libraries' messages (CLI11, nlohmann::json) span lines.
std::string one_line(const std::string& message);

}  // namespace cw::util
