#pragma once
// Attacks by name, for command-line tools and experiment configs:
//   fgsm, fgsm-rs, pgd<K> (e.g. pgd20), pgd<K>-l2, cw<K> (e.g. cw20), apgd-ce, apgd-dlr, apgd-t, fab-t,
//   square<Q> (e.g. square5000), autoattack
// "clean" is not an attack (the evaluator always records clean predictions); make_attack rejects it.
#include <memory>
#include <string>
#include <vector>

#include "attacks/attack.h"

namespace cw::attacks {

struct AttackOptions {
    float eps = 8.f / 255;
    float alpha = 2.f / 255;       // PGD / CW step (L∞); pgd<K>-l2 uses alpha_l2
    float alpha_l2 = 15.f / 255;
    float eps_l2 = 128.f / 255;    // pgd<K>-l2 radius
    int restarts = 1;              // PGD / CW restarts
    ModelMode mode = ModelMode::Eval;
};

// Throws std::invalid_argument naming the attack and listing the known names.
std::unique_ptr<Attack> make_attack(const std::string& name, const AttackOptions& options = {});
const std::vector<std::string>& attack_name_patterns();

}  // namespace cw::attacks
