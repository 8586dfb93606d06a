#pragma once
// Benz et al. §3.3 as one study: PGD-AT and the long-tail remedies of docs/protocols/longtail.md (sections below)
// transferred to it, each an arm with its own method options, and the critical class c* that scenario 2 and the targeted attack act on.
//
//   pgd_at             the baseline every other arm is compared with
//   cs_equal           §1   scenario 1: every class equally important, w_k ∝ (1 − r_k)^p (--cs-power)
//   cs_critical_w<ω>   §1   scenario 2: w_{c*} = ω, the others 1 — one arm per --critical-weights value
//   class_balanced     §2   class-balanced loss on robustly-correct counts (--cb-beta)
//   ldam_drw           §3   LDAM margins with deferred re-weighting (--ldam-max-margin, --ldam-scale, --drw-epoch)
//   cosine_reg         §4   the inter-class cosine-similarity regulariser (--cos-lambda)
//   target_critical    §5   targeted PGD toward c* with probability --target-prob
#include <string>
#include <vector>

#include "study/study.h"

namespace cw::protocols {

// --critical-class: a class name (case-insensitive) or an index; empty: the class named "cat" (the CIFAR-10
// default). Throws naming --critical-class otherwise.
int resolve_critical_class(const std::string& text, const std::vector<std::string>& classes);

// "2,5" → {2, 5}: each a number > 0, none twice, at least one. Throws naming `flag`.
std::vector<float> parse_critical_weights(const std::string& flag, const std::string& text);

// Every arm, in the table's order (one cs_critical_w<ω> arm per weight).
std::vector<study::Arm> longtail_arms(const train::JobConfig& base, int critical_class,
                                      const std::vector<float>& critical_weights);

// --arms: "all" or names, kept in the table's order; pgd_at must be among them. Throws naming `flag`.
std::vector<study::Arm> select_longtail_arms(const std::string& flag, const std::vector<study::Arm>& all,
                                             const std::string& wanted);

}  // namespace cw::protocols
