#pragma once
// A family of training methods registered by name: the baselines (train/methods/), and the fair methods of
// fairness/methods/ (CFA + FAIR-TAT, FRL + WAT, long-tail remedies + BAT). Each family owns its names, its factory
// and its flags, so a new family is one new file plus one line in method_families().
#include <functional>
#include <string>
#include <vector>

#include "train/method.h"
#include "train/methods/method_options.h"

namespace CLI {
class App;
}

namespace cw::train {

struct MethodFamily {
    std::string title;                       // --help group, e.g. "CFA and FAIR-TAT"
    std::vector<std::string> names;          // registry names, e.g. {"cfa_at", "cfa_trades"}
    // Builds one of `names`; `options` has eps, alpha, steps and the family's own settings resolved.
    std::function<MethodPtr(const std::string& name, const MethodOptions& options)> make;
    std::function<void(CLI::App& app, MethodOptions& options)> add_flags;   // may be empty
};

// Every family, in --help order. Defined in train/methods/families.cpp.
const std::vector<MethodFamily>& method_families();

// The families themselves, each defined beside its methods.
MethodFamily baseline_family();                  // train/methods/registry.cpp
MethodFamily cfa_fairtat_family();               // fairness/methods/cfa_fairtat_family.cpp
MethodFamily frl_wat_family();                   // fairness/methods/frl_wat_family.cpp
MethodFamily longtail_bat_family();              // fairness/methods/longtail_bat_family.cpp
MethodFamily dafa_trix_family();                 // fairness/methods/dafa_trix_family.cpp
MethodFamily faal_family();                      // fairness/methods/faal_family.cpp

}  // namespace cw::train
