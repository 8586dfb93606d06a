#pragma once
// Benz et al. §3.4: common corruptions class by class, and whether they rank the classes as an attack does. Per arm
// (a trained model, read from its eval_last/results.json and eval_last_corruptions/results.json):
//   - per corruption (its severities pooled) the accuracy, the per-class accuracy and the worst class;
//   - the corruption average: per class the mean over the corruptions of its accuracy (each corruption counts once);
//   - Spearman's ρ between the per-class accuracies under each corruption (and the average) and the per-class
//     robust accuracies under the attack, and against the clean ones for reference (eval/agreement.h: ties share
//     ranks; NaN when either side is constant — a natural model's robust accuracy is often 0 for every class);
//   - per corruption family (noise, blur, weather, digital; Hendrycks & Dietterich's grouping, the four extra
//     corruptions in the family they name) the mean accuracy over the family's corruptions evaluated.
// Between a natural and an adversarially trained arm: the change per corruption and family (Gilmer, Ford et al.:
// AT should help on noise and hurt on fog and contrast).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::protocols {

// "noise", "blur", "weather" or "digital"; throws for a name outside the 19.
std::string corruption_family(const std::string& corruption);
const std::vector<std::string>& corruption_families();

struct CorruptionColumn {
    std::string corruption;
    double accuracy = 0;              // over the samples (results.json "accuracy")
    std::vector<double> per_class;
};

struct ArmCorruptions {
    std::string arm;
    std::vector<double> clean, attacked;            // per class, clean and under the attack
    double clean_accuracy = 0, attacked_accuracy = 0;
    std::vector<CorruptionColumn> corruptions;      // in evaluation order
};

struct CorruptionRanking {
    std::string arm;
    std::vector<double> rho_attack, rho_clean;      // per corruption
    std::vector<int> worst;                         // per corruption: its worst class
    std::vector<double> average;                    // per class: mean over corruptions
    double average_accuracy = 0;                    // mean over corruptions of their accuracy
    double average_rho_attack = 0, average_rho_clean = 0;   // of the average column
    double mean_rho_attack = 0;                     // mean of the per-corruption ρ (defined ones)
    double clean_rho_attack = 0;                    // the reference: clean vs attack
    std::vector<std::string> families;              // those with at least one corruption evaluated
    std::vector<double> family_accuracy;            // mean accuracy of the family's corruptions
};

CorruptionRanking rank_corruptions(const ArmCorruptions& arm);

// Reads one arm's evaluations: `attack` from attack_file, clean and "corruption:<name>" from corruption_file (the
// corruptions in that file's order). Throws naming the file when an evaluation is missing.
ArmCorruptions read_arm_corruptions(const std::string& arm, const nlohmann::json& attack_results,
                                    const std::string& attack, const std::string& attack_file,
                                    const nlohmann::json& corruption_results, const std::string& corruption_file);

// Markdown: per arm the corruption table (accuracy, worst class, ρ vs attack, ρ vs clean), the family means, and
// the per-class accuracy under each corruption; then natural vs adversarial per corruption and family when
// `natural` and `adversarial` name arms (empty: skipped).
std::string corruption_ranking_markdown(const std::vector<std::string>& classes, const std::string& attack,
                                        const std::vector<ArmCorruptions>& arms,
                                        const std::vector<CorruptionRanking>& ranks, const std::string& natural,
                                        const std::string& adversarial);
nlohmann::json corruption_ranking_json(const std::vector<std::string>& classes, const std::string& attack,
                                       const std::vector<ArmCorruptions>& arms,
                                       const std::vector<CorruptionRanking>& ranks);

}  // namespace cw::protocols
