#include "eval/results_json.h"

#include <cmath>
#include <stdexcept>

#include "eval/class_logits.h"
#include "eval/agreement.h"
#include "eval/class_metrics.h"

namespace cw::eval {

namespace {
// NaN (a class without samples) becomes null: JSON has no NaN.
nlohmann::json numbers(const std::vector<double>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (double x : v) a.push_back(std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x));
    return a;
}
nlohmann::json number(double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); }

nlohmann::json metrics_json(const std::string& name, const fairness::ClassMetrics& m) {
    return {{"name", name},
            {"accuracy", number(m.accuracy)},
            {"per_class_accuracy", numbers(m.per_class_accuracy)},
            {"worst_class", m.worst_class},
            {"best_class", m.best_class},
            {"confusion", m.confusion},
            {"cfp", numbers(m.cfp)},
            {"class_counts", m.class_counts},
            {"worst10_accuracy", number(m.worst10_accuracy)},
            {"accuracy_spread", number(m.spread)},
            {"accuracy_sd", number(m.sd)},
            {"cfn", numbers(m.cfn)}};
}

nlohmann::json matrix(const std::vector<std::vector<double>>& rows) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& row : rows) a.push_back(numbers(row));
    return a;
}

// per_class_mean_logits and cross_class_similarity of one evaluation, from its logit sums.
void add_mean_logits(nlohmann::json& e, const std::vector<double>& sums, const fairness::ClassMetrics& m) {
    const std::vector<std::vector<double>> mean = class_mean_logits(sums, m.class_counts);
    nlohmann::json rows = nlohmann::json::array();
    for (size_t c = 0; c < mean.size(); ++c)
        rows.push_back(m.class_counts[c] ? numbers(mean[c]) : nlohmann::json(nullptr));
    e["per_class_mean_logits"] = rows;
    const fairness::CrossClassSimilarity s = fairness::cross_class_similarity(mean);
    e["cross_class_similarity"] = {
        {"matrix", matrix(s.matrix)}, {"mean_other", numbers(s.mean_other)}, {"max_other", numbers(s.max_other)}};
}

// The fields that are not in the records' metrics alone: mean logits (if summed) and the superclass confusion.
void add_extras(nlohmann::json& e, const RunInfo& info, const fairness::ClassMetrics& m,
                const std::vector<std::vector<double>>& logit_sums, size_t evaluation) {
    if (!logit_sums.empty() && !logit_sums[evaluation].empty()) add_mean_logits(e, logit_sums[evaluation], m);
    if (!info.coarse_classes.empty())
        e["superclass_confusion"] = fairness::superclass_confusion(
            m.confusion, info.coarse_of, static_cast<int64_t>(info.coarse_classes.size()));
}

void check_extras(const RunInfo& info, const std::vector<AttackSummary>& attacks,
                  const std::vector<std::vector<double>>& logit_sums) {
    const size_t C = info.classes.size();
    if (info.coarse_classes.empty() != info.coarse_of.empty() ||
        (!info.coarse_of.empty() && info.coarse_of.size() != C))
        throw std::invalid_argument("results.json: " + std::to_string(info.coarse_of.size()) +
                                    " superclass indices (coarse_of) for " + std::to_string(C) + " classes and " +
                                    std::to_string(info.coarse_classes.size()) +
                                    " superclass names; expected one per class, or none of either");
    if (!logit_sums.empty() && logit_sums.size() != attacks.size() + 1)
        throw std::invalid_argument("results.json: logit sums for " + std::to_string(logit_sums.size()) +
                                    " evaluations, expected " + std::to_string(attacks.size() + 1) +
                                    " (clean and each attack)");
}
}  // namespace

nlohmann::json results_json(const RunInfo& info, const EvalRecords& r, const std::vector<AttackSummary>& attacks,
                            const std::vector<std::vector<double>>& logit_sums) {
    const int64_t C = static_cast<int64_t>(info.classes.size());
    if (C == 0) throw std::invalid_argument("results.json: no class names given");
    check_extras(info, attacks, logit_sums);
    nlohmann::json j = {{"schema", "classwise.results/1"},
                        {"experiment", info.experiment},
                        {"dataset", info.dataset},
                        {"split", info.split},
                        {"num_examples", r.size()},
                        {"classes", info.classes},
                        {"model", {{"arch", info.arch}, {"checkpoint", info.checkpoint}}},
                        {"method", info.method},
                        {"seed", info.seed},
                        {"device", info.device},
                        {"evaluations", nlohmann::json::array()}};
    if (!info.command_line.empty()) j["command_line"] = info.command_line;
    if (!info.coarse_classes.empty()) {
        j["coarse_classes"] = info.coarse_classes;
        j["coarse_of"] = info.coarse_of;
    }

    const fairness::ClassMetrics clean = fairness::class_metrics(r.label, r.clean_pred, C);
    j["evaluations"].push_back(metrics_json("clean", clean));
    add_extras(j["evaluations"].back(), info, clean, logit_sums, 0);
    for (size_t k = 0; k < attacks.size(); ++k) {
        const AttackSummary& a = attacks[k];
        const std::vector<int32_t>& pred = r.adv_pred.at(r.attack_position(a.name));
        const fairness::ClassMetrics robust = fairness::class_metrics(r.label, pred, C);
        nlohmann::json e = metrics_json(a.name, robust);
        e["attack"] = a.config;
        e["per_class_boundary_error"] = numbers(fairness::boundary_error(clean, robust));
        e["per_class_boundary_error_exact"] = numbers(fairness::boundary_error_exact(r.label, r.clean_pred, pred, C));
        e["time_s"] = a.time_s;
        e["sanity_violations"] = a.sanity_violations;
        if (!a.stages.empty()) {
            e["stages"] = nlohmann::json::array();
            for (const auto& [name, acc] : a.stages) e["stages"].push_back({{"name", name}, {"accuracy", acc}});
        }
        add_extras(e, info, robust, logit_sums, k + 1);
        j["evaluations"].push_back(e);
    }
    return j;
}

const std::vector<std::string>& results_required_fields() {
    static const std::vector<std::string> f = {"schema", "experiment", "dataset", "split", "num_examples", "classes",
                                               "model", "method", "seed", "device", "evaluations"};
    return f;
}

const std::vector<std::string>& evaluation_required_fields(bool attack) {
    static const std::vector<std::string> clean = {"name", "accuracy", "per_class_accuracy", "worst_class",
                                                   "best_class", "confusion", "cfp"};
    static const std::vector<std::string> attacked = {"name", "attack", "accuracy", "per_class_accuracy",
                                                      "per_class_boundary_error", "worst_class", "best_class",
                                                      "confusion", "cfp"};
    return attack ? attacked : clean;
}

}  // namespace cw::eval
