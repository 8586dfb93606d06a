#pragma once
// The CPU recipe for CIFAR-10 (docs/reproduction.md, "CIFAR-10: the CPU recipe"): the papers' data, radius and batch
// on a model and schedule two CPU cores train in well under an hour per run, chosen by the pilot
// (scripts/cifar10_pilot.sh) to keep what the papers study visible: a robust model (PGD-20 near the papers' range at
// eps 8/255) whose worst class is not at 0%, so a fair method has room to lift it.
//   - WideResNet-16-1 (16/32/64 channels) instead of PreAct ResNet-18 (about 1/20 of its arithmetic);
//   - PGD-2 training with step 1.25 eps (the default 2.5 eps / K), PGD-20 for every evaluation;
//   - the one-cycle schedule of Wong et al.'s fast adversarial training, 0 -> 0.2 -> 0 over the run;
//   - the whole training set less the CFA/FAIR-TAT validation split (the first 100 images of each class);
//   - per-epoch PGD-20 on that split and on the first 500 test images; the final evaluation on all 10,000.
// The papers' schedule constants are scaled to the run's length: averaging from the second epoch, CFA's calibration
// from the second epoch (its code waits 10 of 200); FRL's and FAAL's fine-tunes 2 epochs at lr 0.01. Each experiment
// adds its output folder and whatever else it needs (`more`: added, or replacing the recipe's value of a flag).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace cw::study {

inline constexpr const char* kCifar10CpuEpochs = "9";

inline std::vector<std::pair<std::string, std::string>> cifar10_cpu_recipe(
    const std::vector<std::pair<std::string, std::string>>& more) {
    std::vector<std::pair<std::string, std::string>> preset = {
        {"--dataset", "cifar10"},     {"--arch", "wrn16_1"},       {"--eps", "8/255"},
        {"--batch-size", "128"},      {"--attack-steps", "2"},     {"--optimizer", "sgd"},
        {"--lr", "0.2"},              {"--schedule", "cyclic"},    {"--wd", "5e-4"},
        {"--epochs", kCifar10CpuEpochs}, {"--val-split", "first:100"}, {"--train-n", "0"},
        {"--eval-n", "0"},            {"--epoch-eval-n", "500"},   {"--eval-steps", "20"},
        {"--ema-start", "1"},         {"--cfa-begin", "1"}};
    for (const auto& [flag, value] : more) {
        auto same = std::find_if(preset.begin(), preset.end(), [&](const auto& p) { return p.first == flag; });
        if (same == preset.end()) preset.emplace_back(flag, value);
        else same->second = value;
    }
    return preset;
}

}  // namespace cw::study
