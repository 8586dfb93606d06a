#include "eval/eval_state.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace cw::eval {

namespace {
// A model that outputs NaN or ±inf makes a sum non-finite; JSON has no such numbers, so they are stored as null and
// read back as NaN (its mean is reported as null either way).
nlohmann::json sums_to_json(const std::vector<std::vector<double>>& sums) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : sums) {
        nlohmann::json r = nlohmann::json::array();
        for (double v : row) r.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
        out.push_back(r);
    }
    return out;
}
std::vector<std::vector<double>> sums_from_json(const nlohmann::json& j) {
    if (!j.is_array()) throw std::runtime_error("malformed evaluation state: logit_sums is not a list of lists");
    std::vector<std::vector<double>> out;
    for (const auto& r : j) {
        out.emplace_back();
        for (const auto& v : r.get<std::vector<nlohmann::json>>())
            out.back().push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
    }
    return out;
}

void require(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error("malformed evaluation state: " + what);
}

// What every state the evaluator writes satisfies, whatever the run: one record per sample seen by the clean pass,
// batch offsets that partition them, and, once the clean pass is done, one entry per attack of every per-attack list.
// A state that breaks it (edited, or a file damaged on disk) would index past the records when resumed.
void check_shape(const EvalState& s) {
    const EvalRecords& r = s.records;
    const size_t n = r.index.size();
    require(s.steps_done >= 0, "steps_done is negative");
    require(r.label.size() == n && r.clean_pred.size() == n,
            "index, label and clean_pred differ in length (" + std::to_string(n) + ", " + std::to_string(r.label.size()) +
                ", " + std::to_string(r.clean_pred.size()) + ")");
    if (s.batch_offsets.empty()) {
        require(n == 0, "records without batch offsets");
    } else {
        require(s.batch_offsets.front() == 0 && static_cast<size_t>(s.batch_offsets.back()) == n,
                "batch_offsets must run from 0 to the number of records (" + std::to_string(n) + ")");
        for (size_t b = 1; b < s.batch_offsets.size(); ++b)
            require(s.batch_offsets[b] >= s.batch_offsets[b - 1], "batch_offsets decrease at batch " + std::to_string(b));
    }
    const size_t A = r.attacks.size();
    require(r.adv_pred.size() == A && s.broken_by.size() == A && s.time_s.size() == A && s.sanity_violations.size() == A,
            "adv_pred, broken_by, time_s and sanity_violations need one entry per attack (" + std::to_string(A) + ")");
    for (size_t a = 0; a < A; ++a) {
        require(r.adv_pred[a].size() == n, "adv_pred of attack '" + r.attacks[a] + "' has " +
                                               std::to_string(r.adv_pred[a].size()) + " entries for " +
                                               std::to_string(n) + " records");
        require(s.broken_by[a].empty() || s.broken_by[a].size() == n,
                "broken_by of attack '" + r.attacks[a] + "' has " + std::to_string(s.broken_by[a].size()) +
                    " entries for " + std::to_string(n) + " records");
    }
}

}  // namespace

nlohmann::json state_to_json(const EvalState& s) {
    return {{"schema", "classwise.eval_state/1"},
            {"fingerprint", s.fingerprint},
            {"steps_done", s.steps_done},
            {"batch_offsets", s.batch_offsets},
            {"index", s.records.index},
            {"label", s.records.label},
            {"clean_pred", s.records.clean_pred},
            {"attacks", s.records.attacks},
            {"adv_pred", s.records.adv_pred},
            {"broken_by", s.broken_by},
            {"time_s", s.time_s},
            {"sanity_violations", s.sanity_violations},
            {"logit_sums", sums_to_json(s.logit_sums)}};
}

EvalState state_from_json(const nlohmann::json& j) {
    try {
        if (j.at("schema") != "classwise.eval_state/1") throw std::runtime_error("unknown schema");
        EvalState s;
        s.fingerprint = j.at("fingerprint");
        s.steps_done = j.at("steps_done").get<int64_t>();
        s.batch_offsets = j.at("batch_offsets").get<std::vector<int64_t>>();
        s.records.index = j.at("index").get<std::vector<int64_t>>();
        s.records.label = j.at("label").get<std::vector<int32_t>>();
        s.records.clean_pred = j.at("clean_pred").get<std::vector<int32_t>>();
        s.records.attacks = j.at("attacks").get<std::vector<std::string>>();
        s.records.adv_pred = j.at("adv_pred").get<std::vector<std::vector<int32_t>>>();
        s.broken_by = j.at("broken_by").get<std::vector<std::vector<int32_t>>>();
        s.time_s = j.at("time_s").get<std::vector<double>>();
        s.sanity_violations = j.at("sanity_violations").get<std::vector<int64_t>>();
        if (j.contains("logit_sums")) s.logit_sums = sums_from_json(j.at("logit_sums"));
        check_shape(s);
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("malformed evaluation state: ") + e.what());
    }
}

}  // namespace cw::eval
