#include "eval/fingerprint_difference.h"

#include <set>
#include <vector>

namespace cw::eval {

namespace {

constexpr size_t kShortValue = 60;  // longer values (attack configs, class lists) are named, not printed

void collect(const nlohmann::json& saved, const nlohmann::json& now, const std::string& path,
             std::vector<std::string>& out) {
    if (saved == now) return;
    if (saved.is_object() && now.is_object()) {
        std::set<std::string> keys;
        for (const auto& item : saved.items()) keys.insert(item.key());
        for (const auto& item : now.items()) keys.insert(item.key());
        for (const std::string& k : keys) {
            const std::string sub = path.empty() ? k : path + "." + k;
            if (!saved.contains(k)) out.push_back(sub + " is new here");
            else if (!now.contains(k)) out.push_back(sub + " is only in the state");
            else collect(saved[k], now[k], sub, out);
        }
        return;
    }
    const std::string a = saved.dump(), b = now.dump();
    const std::string name = path.empty() ? "the fingerprint" : path;
    if (a.size() <= kShortValue && b.size() <= kShortValue)
        out.push_back(name + " is " + a + " in the state, " + b + " here");
    else
        out.push_back(name + " differ");
}

}  // namespace

std::string fingerprint_difference(const nlohmann::json& saved, const nlohmann::json& now) {
    std::vector<std::string> parts;
    collect(saved, now, "", parts);
    std::string line;
    for (const std::string& p : parts) line += (line.empty() ? "" : "; ") + p;
    return line;
}

}  // namespace cw::eval
