#pragma once
// The values of per-class tables and how they print: a class without samples is NaN, and every table, JSON file
// and page of the experiments treats it the same way — left out of means and of the worst class, "–" in text,
// null in JSON.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::report {

// Mean over the defined (non-NaN) values; NaN when there are none.
double mean_defined(const std::vector<double>& values);

// Index of the smallest defined value (the lowest index on ties, as the metrics do); -1 when there are none.
int argmin_defined(const std::vector<double>& values);

// classes[k], or "–" for k outside the list (no worst class).
std::string class_label(const std::vector<std::string>& classes, int k);

// v with `digits` decimals, or "–" for NaN.
std::string fixed_or_dash(double v, int digits);

// A change of fractions in points, one decimal, signed: "+1.2", "−0.5" (a minus sign, not a hyphen), "0.0" below
// 0.05 points either way; "–" for NaN.
std::string points_change(double delta);

// v, or null for NaN (JSON has no NaN).
nlohmann::json number_or_null(double v);

}  // namespace cw::report
