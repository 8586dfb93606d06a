#include "eval/corruption_state.h"

#include <stdexcept>

namespace cw::eval {

const CorruptionRun* CorruptionState::find(const std::string& name) const {
    for (const CorruptionRun& r : done)
        if (r.name == name) return &r;
    return nullptr;
}

nlohmann::json corruption_state_to_json(const CorruptionState& s) {
    nlohmann::json done = nlohmann::json::array();
    for (const CorruptionRun& r : s.done)
        done.push_back({{"name", r.name}, {"source", r.source}, {"file", r.file}, {"seed", r.seed},
                        {"severities", r.severities}, {"pred", r.pred}, {"time_s", r.time_s}});
    return {{"schema", "classwise.corruption_state/1"}, {"fingerprint", s.fingerprint}, {"index", s.index},
            {"label", s.label}, {"clean_pred", s.clean_pred}, {"done", done}};
}

CorruptionState corruption_state_from_json(const nlohmann::json& j, const std::string& file) {
    try {
        if (j.at("schema") != "classwise.corruption_state/1") throw std::runtime_error("unknown schema");
        CorruptionState s;
        s.fingerprint = j.at("fingerprint");
        s.index = j.at("index").get<std::vector<int64_t>>();
        s.label = j.at("label").get<std::vector<int32_t>>();
        s.clean_pred = j.at("clean_pred").get<std::vector<int32_t>>();
        if (s.label.size() != s.index.size() || s.clean_pred.size() != s.index.size())
            throw std::runtime_error("index, label and clean_pred differ in length");
        for (const auto& d : j.at("done")) {
            CorruptionRun r;
            r.name = d.at("name").get<std::string>();
            r.source = d.at("source").get<std::string>();
            r.file = d.at("file").get<std::string>();
            r.seed = d.at("seed").get<uint64_t>();
            r.severities = d.at("severities").get<std::vector<int>>();
            r.pred = d.at("pred").get<std::vector<std::vector<int32_t>>>();
            r.time_s = d.at("time_s").get<std::vector<double>>();
            if (r.pred.size() != r.severities.size() || r.time_s.size() != r.severities.size())
                throw std::runtime_error(r.name + ": predictions or times not one per severity");
            for (const auto& p : r.pred)
                if (p.size() != s.index.size()) throw std::runtime_error(r.name + ": predictions not one per sample");
            s.done.push_back(std::move(r));
        }
        return s;
    } catch (const std::exception& e) {
        throw std::runtime_error(file + ": malformed corruption evaluation state: " + e.what());
    }
}

}  // namespace cw::eval
