#pragma once
// How the experiments' --quick runs train on two CPU cores (CI runs one): LeNet-5 instead of the papers' ResNets,
// batches of 64, a constant Adam step of 0.002 without weight decay or augmentation (a few short epochs learn more
// this way than under the papers' SGD schedules) and 5-step attacks. Each experiment adds its scale (training images,
// epochs, test images), its output folder and whatever else its quick run changes.
#include <string>
#include <utility>
#include <vector>

namespace cw::protocols {

inline std::vector<std::pair<std::string, std::string>> cpu_quick_recipe(
    const std::vector<std::pair<std::string, std::string>>& scale_and_more) {
    std::vector<std::pair<std::string, std::string>> preset = {
        {"--arch", "lenet5"}, {"--batch-size", "64"},       {"--optimizer", "adam"}, {"--lr", "0.002"},
        {"--wd", "0"},        {"--schedule", "constant"},   {"--augment", "none"},   {"--attack-steps", "5"}};
    preset.insert(preset.end(), scale_and_more.begin(), scale_and_more.end());
    return preset;
}

}  // namespace cw::protocols
