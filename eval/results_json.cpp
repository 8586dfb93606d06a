#include "eval/results_json.h"

#include <cmath>
#include <stdexcept>

#include "fairness/metrics.h"

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
}  // namespace

nlohmann::json results_json(const RunInfo& info, const EvalRecords& r, const std::vector<AttackSummary>& attacks) {
    const int64_t C = static_cast<int64_t>(info.classes.size());
    if (C == 0) throw std::invalid_argument("results.json: no class names given");
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

    const fairness::ClassMetrics clean = fairness::class_metrics(r.label, r.clean_pred, C);
    j["evaluations"].push_back(metrics_json("clean", clean));
    for (const AttackSummary& a : attacks) {
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
