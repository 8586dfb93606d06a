#include "protocols/corruption_ranking.h"

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "eval/corruption_results.h"
#include "eval/agreement.h"
#include "protocols/class_columns.h"
#include "report/run_data.h"
#include "report/table_values.h"
#include "util/format.h"

namespace cw::protocols {

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

const nlohmann::json& need(const nlohmann::json& results, const std::string& name, const std::string& file) {
    const nlohmann::json* e = report::find_evaluation(results, name);
    if (!e) throw std::runtime_error(file + ": no evaluation '" + name + "'");
    return *e;
}

const ArmCorruptions* find_arm(const std::vector<ArmCorruptions>& arms, const std::string& name) {
    for (const auto& a : arms)
        if (a.arm == name) return &a;
    return nullptr;
}
}  // namespace

const std::vector<std::string>& corruption_families() {
    static const std::vector<std::string> f = {"noise", "blur", "weather", "digital"};
    return f;
}

std::string corruption_family(const std::string& c) {
    static const std::map<std::string, std::string> family = {
        {"gaussian_noise", "noise"},   {"shot_noise", "noise"},       {"impulse_noise", "noise"},
        {"speckle_noise", "noise"},    {"defocus_blur", "blur"},      {"glass_blur", "blur"},
        {"motion_blur", "blur"},       {"zoom_blur", "blur"},         {"gaussian_blur", "blur"},
        {"snow", "weather"},           {"frost", "weather"},          {"fog", "weather"},
        {"brightness", "weather"},     {"spatter", "weather"},        {"contrast", "digital"},
        {"elastic_transform", "digital"}, {"pixelate", "digital"},    {"jpeg_compression", "digital"},
        {"saturate", "digital"}};
    const auto it = family.find(c);
    if (it == family.end()) throw std::invalid_argument("corruption family: unknown corruption '" + c + "'");
    return it->second;
}

CorruptionRanking rank_corruptions(const ArmCorruptions& a) {
    CorruptionRanking r;
    r.arm = a.arm;
    const size_t n_classes = a.clean.size();
    r.average.assign(n_classes, 0.0);
    std::vector<int> counted(n_classes, 0);
    double acc_sum = 0;
    for (const CorruptionColumn& c : a.corruptions) {
        if (c.per_class.size() != n_classes)
            throw std::invalid_argument("corruption ranking: " + a.arm + " " + c.corruption + " has " +
                                        std::to_string(c.per_class.size()) + " classes, clean " +
                                        std::to_string(n_classes));
        r.rho_attack.push_back(fairness::spearman(c.per_class, a.attacked));
        r.rho_clean.push_back(fairness::spearman(c.per_class, a.clean));
        r.worst.push_back(report::argmin_defined(c.per_class));
        for (size_t k = 0; k < n_classes; ++k)
            if (!std::isnan(c.per_class[k])) r.average[k] += c.per_class[k], ++counted[k];
        acc_sum += c.accuracy;
    }
    // Each corruption counts once in a class's average, whatever its number of severities.
    for (size_t k = 0; k < n_classes; ++k) r.average[k] = counted[k] ? r.average[k] / counted[k] : kNaN;
    r.average_accuracy = a.corruptions.empty() ? kNaN : acc_sum / static_cast<double>(a.corruptions.size());
    r.average_rho_attack = fairness::spearman(r.average, a.attacked);
    r.average_rho_clean = fairness::spearman(r.average, a.clean);
    r.mean_rho_attack = report::mean_defined(r.rho_attack);
    r.clean_rho_attack = fairness::spearman(a.clean, a.attacked);
    for (const std::string& f : corruption_families()) {
        double sum = 0;
        int n = 0;
        for (const CorruptionColumn& c : a.corruptions)
            if (corruption_family(c.corruption) == f) sum += c.accuracy, ++n;
        if (n == 0) continue;
        r.families.push_back(f);
        r.family_accuracy.push_back(sum / n);
    }
    return r;
}

ArmCorruptions read_arm_corruptions(const std::string& arm, const nlohmann::json& attack_results,
                                    const std::string& attack, const std::string& attack_file,
                                    const nlohmann::json& corruption_results, const std::string& corruption_file) {
    ArmCorruptions a;
    a.arm = arm;
    const nlohmann::json& adv = need(attack_results, attack, attack_file);
    a.attacked = report::per_class_values(adv, "per_class_accuracy");
    a.attacked_accuracy = adv.at("accuracy").get<double>();
    const nlohmann::json& clean = need(corruption_results, "clean", corruption_file);
    a.clean = report::per_class_values(clean, "per_class_accuracy");
    a.clean_accuracy = clean.at("accuracy").get<double>();
    for (const auto& e : corruption_results.at("evaluations")) {
        const std::string name = e.at("name").get<std::string>();
        const std::string prefix = "corruption:";
        // The pooled entry of one corruption: "corruption:<name>", not "corruption:<name>:<s>".
        if (name.rfind(prefix, 0) != 0 || name.find(':', prefix.size()) != std::string::npos) continue;
        CorruptionColumn c;
        c.corruption = name.substr(prefix.size());
        c.accuracy = e.at("accuracy").get<double>();
        c.per_class = report::per_class_values(e, "per_class_accuracy");
        a.corruptions.push_back(c);
    }
    if (a.corruptions.empty()) throw std::runtime_error(corruption_file + ": no corruption evaluations");
    if (a.attacked.size() != a.clean.size())
        throw std::runtime_error(attack_file + ": " + std::to_string(a.attacked.size()) + " classes, " +
                                 corruption_file + " has " + std::to_string(a.clean.size()));
    return a;
}

std::string corruption_ranking_markdown(const std::vector<std::string>& classes, const std::string& attack,
                                        const std::vector<ArmCorruptions>& arms,
                                        const std::vector<CorruptionRanking>& ranks, const std::string& natural,
                                        const std::string& adversarial) {
    std::ostringstream md;
    for (size_t i = 0; i < arms.size(); ++i) {
        const ArmCorruptions& a = arms[i];
        const CorruptionRanking& r = ranks[i];
        md << "## " << a.arm << "\n\nClean " << util::percent(a.clean_accuracy) << "%, " << attack << " "
           << util::percent(a.attacked_accuracy) << "%; ρ(clean, " << attack << ") = " << report::fixed_or_dash(r.clean_rho_attack, 2)
           << ". ρ = Spearman's rank correlation of the per-class accuracies.\n\n"
           << "| corruption | family | accuracy | worst class | ρ vs " << attack << " | ρ vs clean |\n"
           << "|---|---|---|---|---|---|\n";
        for (size_t j = 0; j < a.corruptions.size(); ++j) {
            const CorruptionColumn& c = a.corruptions[j];
            const int w = r.worst[j];
            md << "| " << c.corruption << " | " << corruption_family(c.corruption) << " | " << util::percent(c.accuracy)
               << " | " << report::class_label(classes, w) << " " << (w >= 0 ? util::percent(c.per_class[static_cast<size_t>(w)]) : "–")
               << " | " << report::fixed_or_dash(r.rho_attack[j], 2) << " | " << report::fixed_or_dash(r.rho_clean[j], 2) << " |\n";
        }
        const int w = report::argmin_defined(r.average);
        md << "| **average** | | " << util::percent(r.average_accuracy) << " | " << report::class_label(classes, w) << " "
           << (w >= 0 ? util::percent(r.average[static_cast<size_t>(w)]) : "–") << " | " << report::fixed_or_dash(r.average_rho_attack, 2)
           << " | " << report::fixed_or_dash(r.average_rho_clean, 2) << " |\n\nMean of the per-corruption ρ vs " << attack << ": "
           << report::fixed_or_dash(r.mean_rho_attack, 2) << ".\n\n| family | mean accuracy |\n|---|---|\n";
        for (size_t f = 0; f < r.families.size(); ++f)
            md << "| " << r.families[f] << " | " << util::percent(r.family_accuracy[f]) << " |\n";
        md << "\nPer class (corruptions pooled over their severities):\n\n| class | clean | " << attack << " |";
        for (const auto& c : a.corruptions) md << " " << c.corruption << " |";
        md << " average |\n|---|---|---|";
        for (size_t j = 0; j <= a.corruptions.size(); ++j) md << "---|";
        md << "\n";
        for (size_t k = 0; k < classes.size(); ++k) {
            md << "| " << classes[k] << " | " << util::percent(a.clean[k]) << " | " << util::percent(a.attacked[k]) << " |";
            for (const auto& c : a.corruptions) md << " " << util::percent(c.per_class[k]) << " |";
            md << " " << util::percent(r.average[k]) << " |\n";
        }
        md << "\n";
    }
    const ArmCorruptions* nat = find_arm(arms, natural);
    const ArmCorruptions* adv = find_arm(arms, adversarial);
    if (nat && adv) {
        const CorruptionRanking nr = rank_corruptions(*nat), ar = rank_corruptions(*adv);
        md << "## " << natural << " vs " << adversarial << " per corruption\n\nΔ = " << adversarial << " − "
           << natural << " in points (positive: adversarial training helps on that corruption).\n\n"
           << "The two models' clean accuracies differ, so each one's drop from its own clean accuracy (corrupted − "
           << "clean) is given too: the corruption's own effect.\n\n"
           << "| corruption | family | " << natural << " | " << adversarial << " | Δ | " << natural << " drop | "
           << adversarial << " drop |\n|---|---|---|---|---|---|---|\n";
        md << "| clean | | " << util::percent(nat->clean_accuracy) << " | " << util::percent(adv->clean_accuracy) << " | "
           << report::points_change(adv->clean_accuracy - nat->clean_accuracy) << " | | |\n";
        for (const CorruptionColumn& c : nat->corruptions)
            for (const CorruptionColumn& d : adv->corruptions)
                if (c.corruption == d.corruption)
                    md << "| " << c.corruption << " | " << corruption_family(c.corruption) << " | "
                       << util::percent(c.accuracy) << " | " << util::percent(d.accuracy) << " | "
                       << report::points_change(d.accuracy - c.accuracy) << " | "
                       << report::points_change(c.accuracy - nat->clean_accuracy) << " | "
                       << report::points_change(d.accuracy - adv->clean_accuracy) << " |\n";
        md << "\n| family | " << natural << " | " << adversarial << " | Δ | " << natural << " drop | " << adversarial
           << " drop |\n|---|---|---|---|---|---|\n";
        for (size_t f = 0; f < nr.families.size(); ++f)
            for (size_t g = 0; g < ar.families.size(); ++g)
                if (nr.families[f] == ar.families[g])
                    md << "| " << nr.families[f] << " | " << util::percent(nr.family_accuracy[f]) << " | "
                       << util::percent(ar.family_accuracy[g]) << " | "
                       << report::points_change(ar.family_accuracy[g] - nr.family_accuracy[f]) << " | "
                       << report::points_change(nr.family_accuracy[f] - nat->clean_accuracy) << " | "
                       << report::points_change(ar.family_accuracy[g] - adv->clean_accuracy) << " |\n";
        md << "\n";
    }
    return md.str();
}

nlohmann::json corruption_ranking_json(const std::vector<std::string>& classes, const std::string& attack,
                                       const std::vector<ArmCorruptions>& arms,
                                       const std::vector<CorruptionRanking>& ranks) {
    auto list = [](const std::vector<double>& v) {
        nlohmann::json j = nlohmann::json::array();
        for (double x : v) j.push_back(report::number_or_null(x));
        return j;
    };
    nlohmann::json out = {{"classes", classes}, {"attack", attack}, {"arms", nlohmann::json::array()}};
    for (size_t i = 0; i < arms.size(); ++i) {
        const ArmCorruptions& a = arms[i];
        const CorruptionRanking& r = ranks[i];
        nlohmann::json cs = nlohmann::json::array();
        for (size_t j = 0; j < a.corruptions.size(); ++j)
            cs.push_back({{"corruption", a.corruptions[j].corruption},
                          {"family", corruption_family(a.corruptions[j].corruption)},
                          {"accuracy", a.corruptions[j].accuracy},
                          {"drop_vs_clean", a.corruptions[j].accuracy - a.clean_accuracy},
                          {"per_class_accuracy", list(a.corruptions[j].per_class)},
                          {"worst_class", report::class_label(classes, r.worst[j])},
                          {"spearman_vs_attack", report::number_or_null(r.rho_attack[j])},
                          {"spearman_vs_clean", report::number_or_null(r.rho_clean[j])}});
        nlohmann::json fam = nlohmann::json::object();
        for (size_t f = 0; f < r.families.size(); ++f) fam[r.families[f]] = r.family_accuracy[f];
        out["arms"].push_back({{"arm", a.arm},
                               {"clean_accuracy", a.clean_accuracy},
                               {"attack_accuracy", a.attacked_accuracy},
                               {"per_class_clean", list(a.clean)},
                               {"per_class_attack", list(a.attacked)},
                               {"corruptions", cs},
                               {"average",
                                {{"accuracy", report::number_or_null(r.average_accuracy)},
                                 {"per_class_accuracy", list(r.average)},
                                 {"spearman_vs_attack", report::number_or_null(r.average_rho_attack)},
                                 {"spearman_vs_clean", report::number_or_null(r.average_rho_clean)}}},
                               {"mean_spearman_vs_attack", report::number_or_null(r.mean_rho_attack)},
                               {"spearman_clean_vs_attack", report::number_or_null(r.clean_rho_attack)},
                               {"families", fam}});
    }
    return out;
}

}  // namespace cw::protocols
