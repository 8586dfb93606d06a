#pragma once
// "Cat is the worst class" (Benz et al.; Xu et al.: PGD-AT's cat at 17% robust against automobile's 67% on CIFAR-10):
// how often one named class is the worst under PGD-20 among the runs of the standard adversarial training methods.
// Fair methods are left out on purpose: lifting the worst class is what they try, so a different worst class there
// is their effect, not evidence against the papers' finding about adversarial training itself.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/claims.h"
#include "report/reproduction_runs.h"

namespace cw::report::reproduction {

struct NamedWorst {
    int runs = 0;      // runs of the base arms with a PGD-20 evaluation of their last checkpoint
    int named = 0;     // of them, runs whose worst class is the named one
    double lo = 0, hi = 0;  // the 95% Wilson interval of named / runs
    Verdict v = Verdict::undecided;
};

// 95% Wilson score interval of k successes in n trials (n > 0).
std::pair<double, double> wilson_interval(int k, int n);

// nullopt when the dataset has no such class or the base arms have no runs. Reproduced when the interval lies above
// one half (the named class is the worst in most runs), not reproduced when it lies below, undecided otherwise.
std::optional<NamedWorst> named_worst_outcome(const std::map<std::string, Arm>& arms,
                                              const std::vector<std::string>& classes, const std::string& name,
                                              const std::vector<std::string>& base_arms = {"pgd_at", "trades"});

}  // namespace cw::report::reproduction
