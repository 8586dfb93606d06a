#pragma once
// The baseline training methods by name: natural, pgd_at, fgsm_rs, trades, fat, mart (docs/protocols/training.md §4–§9).
//
//   MethodOptions o;  o.eps = 8.f / 255;                 // the caller owns ε (per-dataset default)
//   add_method_flags(app, o);                             // --alpha, --attack-steps, --beta, --trades-form ...
//   MethodPtr m = make_method("trades", o);
//
// add_method_flags() adds no --eps: the trainer defines it with its per-dataset default and writes o.eps.
#include <string>
#include <vector>

#include "train/method.h"
#include "train/methods/method_options.h"

namespace CLI {
class App;
}

namespace cw::train {

// Throws std::invalid_argument naming the method and listing the known names, or naming a bad setting.
MethodPtr make_method(const std::string& name, const MethodOptions& options);
const std::vector<std::string>& method_names();

void add_method_flags(CLI::App& app, MethodOptions& options);

}  // namespace cw::train
