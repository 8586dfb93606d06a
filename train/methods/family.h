#pragma once
// A family of training methods registered by name: the baselines (train/methods/), and the fair methods of
// fairness/methods/ (CFA + FAIR-TAT, FRL + WAT, long-tail remedies + BAT). Each family owns its names, its factory
// and its flags, so a new family is one new file plus one line in method_families() (jobs/families.cpp, the one
// place above both train/ and fairness/ that knows every family).
#include <functional>
#include <string>
#include <vector>

#include "train/method.h"
#include "train/methods/method_options.h"

namespace cw::cli {
class FlagSet;
}

namespace cw::train {

struct MethodFamily {
    std::string title;                       // --help group, e.g. "CFA and FAIR-TAT"
    std::vector<std::string> names;          // registry names, e.g. {"cfa_at", "cfa_trades"}
    // Builds one of `names`; `options` has eps, alpha, steps and the family's own settings resolved.
    std::function<MethodPtr(const std::string& name, const MethodOptions& options)> make;
    std::function<void(cli::FlagSet& app, MethodOptions& options)> add_flags;   // may be empty
};

// The baselines: natural, pgd_at, fgsm_rs, trades, fat, mart (train/methods/baseline_family.cpp). The fair
// methods' families are declared in fairness/methods/families.h.
MethodFamily baseline_family();

}  // namespace cw::train
