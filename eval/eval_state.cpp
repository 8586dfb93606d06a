#include "eval/eval_state.h"

#include <stdexcept>

namespace cw::eval {

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
            {"sanity_violations", s.sanity_violations}};
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
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("malformed evaluation state: ") + e.what());
    }
}

}  // namespace cw::eval
