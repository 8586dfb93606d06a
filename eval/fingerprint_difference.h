#pragma once
// What a saved state's fingerprint (the evaluation it was written by) and this run's differ in, for the one-line
// error that refuses a --resume: "run.weights is "a/b" in the state, "c/d" here; attacks differ". A resume is
// refused when anything differs; the line says what, so the user knows whether to delete the state or fix the
// command.
#include <nlohmann/json.hpp>
#include <string>

namespace cw::eval {

// Each differing entry by its dotted path (objects are compared key by key; arrays and other values whole), with
// both values where they print short; "" when the two are equal.
std::string fingerprint_difference(const nlohmann::json& saved, const nlohmann::json& now);

}  // namespace cw::eval
