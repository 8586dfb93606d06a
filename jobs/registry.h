#pragma once
// Every training method by name: the baselines (train/methods/) and the fair methods (fairness/methods/), one
// family each (train/methods/family.h). It sits above both folders because it is the one place that knows them all.
//
//   MethodOptions o;  o.eps = 8.f / 255;                 // the caller owns ε (per-dataset default)
//   add_method_flags(app, o);                             // --alpha, --attack-steps, --beta, --trades-form ...
//   MethodPtr m = make_method("trades", o);
//
// add_method_flags() adds no --eps: the trainer defines it with its per-dataset default and writes o.eps.
#include <string>
#include <vector>

#include "train/method.h"
#include "train/methods/family.h"
#include "train/methods/method_options.h"

namespace cw::cli {
class FlagSet;
}

namespace cw::train {

// Every family, in --help order (jobs/families.cpp).
const std::vector<MethodFamily>& method_families();

// Throws std::invalid_argument naming the method and listing the known names, or naming a bad setting.
MethodPtr make_method(const std::string& name, const MethodOptions& options);
const std::vector<std::string>& method_names();

void add_method_flags(cli::FlagSet& app, MethodOptions& options);

}  // namespace cw::train
