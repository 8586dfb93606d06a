#pragma once
// An AutoAttack-style ensemble (docs/protocols/attacks.md §8): attacks run one after another, each only on the points that are
// still robust; a point is broken as soon as one attack breaks it (pointwise worst case), and robustness is
// decided by re-running the model on the returned points:
//
//   robust = [argmax f(x) = y];  x_adv = x
//   for attack in parts:
//       idx = {i : robust[i]};  adv = attack(x[idx], y[idx]) with a fresh Rng(seed)  (same seed for every part)
//       wrong = argmax f(adv) ≠ y[idx];  robust[idx[wrong]] = false;  x_adv[idx[wrong]] = adv[wrong]
//
// run_stage() is one line of that loop on one batch, so the evaluator can run the stages attack-major over a
// whole dataset (as AutoAttack does) and save its state between them.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attacks/attack.h"

namespace cw::attacks {

struct StageResult {
    std::vector<int64_t> attacked;   // batch rows that were still robust and got attacked
    std::vector<uint8_t> broken;     // per attacked row: misclassified at the returned point
    std::vector<int32_t> pred;       // per attacked row: argmax f(returned point)
    Tensor x_adv;                    // per attacked row: the returned point (on the device)
    std::string sanity;              // empty, or what check_adversarial found wrong
};

class Ensemble : public Attack {
public:
    Ensemble(std::string name, nlohmann::json extra_config, std::vector<std::unique_ptr<Attack>> parts,
             ModelMode mode = ModelMode::Eval);
    std::string name() const override { return name_; }
    nlohmann::json config() const override;
    const std::vector<std::unique_ptr<Attack>>& parts() const { return parts_; }
    void set_log(std::ostream* log) override;   // the parts' start lines go there too

    // Runs part k on the rows of (x, y) with robust[i] set; the model is re-run on the returned points.
    StageResult run_stage(size_t k, nn::Module& model, const Tensor& x, const std::vector<int32_t>& y,
                          const std::vector<uint8_t>& robust, uint64_t seed, const PerSample& per_sample = {});

protected:
    Perturbation perturb(AttackContext& ctx) override;

private:
    std::string name_;
    nlohmann::json extra_;
    std::vector<std::unique_ptr<Attack>> parts_;
};

}  // namespace cw::attacks
