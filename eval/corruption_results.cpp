#include "eval/corruption_results.h"

#include <algorithm>
#include <stdexcept>

namespace cw::eval {

std::string corruption_eval_name(const std::string& name, int severity) {
    return "corruption:" + name + (severity > 0 ? ":" + std::to_string(severity) : "");
}

EvalRecords corruption_records(const std::vector<int64_t>& index, const std::vector<int32_t>& label,
                               const std::vector<int32_t>& clean_pred, const std::vector<CorruptionRun>& runs) {
    EvalRecords r;
    r.index = index;
    r.label = label;
    r.clean_pred = clean_pred;
    for (const CorruptionRun& run : runs) {
        if (run.pred.size() != run.severities.size())
            throw std::invalid_argument("corruption results: " + run.name + " has predictions for " +
                                        std::to_string(run.pred.size()) + " severities, expected " +
                                        std::to_string(run.severities.size()));
        for (size_t s = 0; s < run.severities.size(); ++s) {
            if (run.pred[s].size() != index.size())
                throw std::invalid_argument("corruption results: " + corruption_eval_name(run.name, run.severities[s]) +
                                            " has " + std::to_string(run.pred[s].size()) + " predictions for " +
                                            std::to_string(index.size()) + " samples");
            r.attacks.push_back(corruption_eval_name(run.name, run.severities[s]));
            r.adv_pred.push_back(run.pred[s]);   // raw: plain accuracy, not AutoAttack's rule
        }
    }
    return r;
}

EvalRecords pooled_records(const EvalRecords& r, const std::vector<std::string>& columns, const std::string& name) {
    EvalRecords p;
    p.attacks = {name};
    p.adv_pred.emplace_back();
    for (const std::string& c : columns) {
        const std::vector<int32_t>& pred = r.adv_pred[r.attack_position(c)];
        p.index.insert(p.index.end(), r.index.begin(), r.index.end());
        p.label.insert(p.label.end(), r.label.begin(), r.label.end());
        p.clean_pred.insert(p.clean_pred.end(), r.clean_pred.begin(), r.clean_pred.end());
        p.adv_pred[0].insert(p.adv_pred[0].end(), pred.begin(), pred.end());
    }
    return p;
}

namespace {
nlohmann::json config_of(const CorruptionRun& run, const nlohmann::json& severity) {
    nlohmann::json c = {{"type", "corruption"}, {"name", run.name}, {"severity", severity}, {"source", run.source}};
    if (run.source == "cifar10-c") c["file"] = run.file;
    else c["seed"] = run.seed;
    return c;
}

// The one attack entry results_json makes of pooled records, with what it pools.
nlohmann::json pooled_entry(const RunInfo& info, const EvalRecords& r, const std::vector<std::string>& columns,
                            const AttackSummary& summary) {
    const EvalRecords p = pooled_records(r, columns, summary.name);
    nlohmann::json e = results_json(info, p, {summary}).at("evaluations").at(1);
    e["pooled_over"] = columns;
    e["num_samples"] = p.size();
    return e;
}
}  // namespace

nlohmann::json corruption_results_json(const RunInfo& info, const std::vector<int64_t>& index,
                                       const std::vector<int32_t>& label, const std::vector<int32_t>& clean_pred,
                                       const std::vector<CorruptionRun>& runs) {
    if (runs.empty()) throw std::invalid_argument("corruption results: no corruptions evaluated");
    const EvalRecords r = corruption_records(index, label, clean_pred, runs);
    std::vector<AttackSummary> singles;
    std::vector<std::string> all_columns, names, sources;
    std::vector<int> severities = runs[0].severities;
    double all_time = 0;
    for (const CorruptionRun& run : runs) {
        names.push_back(run.name);
        if (std::find(sources.begin(), sources.end(), run.source) == sources.end()) sources.push_back(run.source);
        if (run.severities != severities) severities.clear();   // not one common set: said per entry only
        for (size_t s = 0; s < run.severities.size(); ++s) {
            singles.push_back({corruption_eval_name(run.name, run.severities[s]), config_of(run, run.severities[s]),
                               run.time_s.at(s), 0, {}});
            all_columns.push_back(singles.back().name);
            all_time += run.time_s.at(s);
        }
    }
    nlohmann::json j = results_json(info, r, singles);
    const nlohmann::json per_severity = j.at("evaluations");   // clean, then one per corruption and severity

    nlohmann::json evaluations = nlohmann::json::array({per_severity.at(0)});
    const nlohmann::json all_config = {{"type", "corruption"}, {"name", "all"}, {"corruptions", names},
                                       {"severity", severities}, {"source", sources.size() == 1 ? sources[0] : "mixed"}};
    evaluations.push_back(pooled_entry(info, r, all_columns, {all_corruptions_name(), all_config, all_time, 0, {}}));
    size_t next = 1;
    for (const CorruptionRun& run : runs) {
        std::vector<std::string> columns;
        double time = 0;
        for (size_t s = 0; s < run.severities.size(); ++s) {
            columns.push_back(corruption_eval_name(run.name, run.severities[s]));
            time += run.time_s[s];
        }
        evaluations.push_back(pooled_entry(info, r, columns,
                                           {corruption_eval_name(run.name), config_of(run, run.severities), time, 0, {}}));
        for (size_t s = 0; s < run.severities.size(); ++s) evaluations.push_back(per_severity.at(next++));
    }
    j["evaluations"] = evaluations;
    j["corruptions"] = {{"names", names}, {"severities", severities}, {"sources", sources},
                        {"scoring", "plain accuracy on the corrupted image (a clean-wrong sample right when corrupted "
                                    "counts as right); per_class_boundary_error can be negative"}};
    return j;
}

}  // namespace cw::eval
