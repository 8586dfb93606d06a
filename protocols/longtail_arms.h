#pragma once
// Benz et al. §3.3 as one study: PGD-AT and the long-tail remedies of fairness.md §F transferred to it, each an arm
// with its own method options, and the critical class c* that scenario 2 and the targeted attack act on.
//
//   pgd_at             the baseline every other arm is compared with
//   cs_equal           §F.1 scenario 1: every class equally important, w_k ∝ (1 − r_k)^p (--cs-power)
//   cs_critical_w<ω>   §F.1 scenario 2: w_{c*} = ω, the others 1 — one arm per --critical-weights value
//   class_balanced     §F.2 class-balanced loss on robustly-correct counts (--cb-beta)
//   ldam_drw           §F.3 LDAM margins with deferred re-weighting (--ldam-max-margin, --ldam-scale, --drw-epoch)
//   cosine_reg         §F.4 the inter-class cosine-similarity regulariser (--cos-lambda)
//   target_critical    §F.5 targeted PGD toward c* with probability --target-prob
#include <string>
#include <vector>

#include "study/study.h"

namespace cw::protocols {

// Every arm, in the table's order. The arms that take no critical class get none (at_cost_sensitive with a critical
// class would silently become scenario 2).
std::vector<study::Arm> longtail_arms(const train::JobConfig& base, int critical, const std::vector<float>& omegas);

// --arms: "all" or names, kept in the table's order. pgd_at must be among them: every number is read against it.
// Throws naming `flag` on an unknown or repeated name, or without pgd_at.
std::vector<study::Arm> select_longtail_arms(const std::vector<study::Arm>& all, const std::string& flag,
                                             const std::string& wanted);

// "2,5" → {2, 5}: each a number > 0, none twice. Throws naming `flag`.
std::vector<float> parse_critical_weights(const std::string& flag, const std::string& text);
// 2 → "cs_critical_w2", 2.5 → "cs_critical_w2.5".
std::string critical_arm_name(float omega);

// The class names a job trains on: the dataset's, or with --classes top:K those of the K kept classes in their new
// order (which needs the training labels, so the training split is read).
std::vector<std::string> job_class_names(const train::DataConfig& data, const std::string& data_dir);

// The paper's critical class for a dataset: "cat" on CIFAR-10 (Benz et al.'s example of a vulnerable class);
// "" elsewhere — the worst class is unknown before training, so --critical-class must be given.
std::string default_critical_class(const std::string& dataset);

// --critical-class: a class index ("3") or a class name ("cat"; exact, else case-insensitive). Throws naming `flag`
// for an empty value (the dataset has no default), an unknown name or an index out of range.
int resolve_critical_class(const std::string& flag, const std::string& value, const std::string& dataset,
                           const std::vector<std::string>& class_names);

}  // namespace cw::protocols
