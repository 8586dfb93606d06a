#include "protocols/longtail_arms.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>

#include "util/split_list.h"

namespace cw::protocols {

namespace {
std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
// "2" for 2, "2.5" for 2.5: the arm's folder name.
std::string weight_text(float w) {
    std::string s = std::to_string(w);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}
}  // namespace

int resolve_critical_class(const std::string& text, const std::vector<std::string>& classes) {
    const int n = static_cast<int>(classes.size());
    if (text.empty()) {
        for (int k = 0; k < n; ++k)
            if (lower(classes[k]) == "cat") return k;
        throw std::invalid_argument("--critical-class: this dataset has no class 'cat' (the CIFAR-10 default); name "
                                    "the critical class (" + util::join_list(classes) + ") or give its index 0.." +
                                    std::to_string(n - 1));
    }
    if (std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        const long k = text.size() > 6 ? n : std::stol(text);
        if (k >= n)
            throw std::invalid_argument("--critical-class: index " + text + " is out of range (0.." +
                                        std::to_string(n - 1) + ")");
        return static_cast<int>(k);
    }
    for (int k = 0; k < n; ++k)
        if (lower(classes[k]) == lower(text)) return k;
    throw std::invalid_argument("--critical-class: no class '" + text + "' (classes: " + util::join_list(classes) +
                                "; or an index 0.." + std::to_string(n - 1) + ")");
}

std::vector<float> parse_critical_weights(const std::string& flag, const std::string& text) {
    std::vector<float> out;
    for (const std::string& item : util::split_list(text)) {
        const float w = util::positive_number(flag, item);
        if (std::find(out.begin(), out.end(), w) != out.end())
            throw std::invalid_argument(flag + ": weight " + item + " is listed twice");
        out.push_back(w);
    }
    if (out.empty()) throw std::invalid_argument(flag + ": give at least one weight (the paper's: 2,5)");
    return out;
}

std::vector<study::Arm> longtail_arms(const train::JobConfig& base, int critical_class,
                                      const std::vector<float>& critical_weights) {
    std::vector<study::Arm> arms;
    arms.push_back(study::arm("pgd_at", base, "pgd_at"));
    // Scenario 1 has no critical class: its weights come from every class's difficulty alone.
    study::Arm equal = study::arm("cs_equal", base, "at_cost_sensitive");
    equal.job.method_options.longtail.critical_class = -1;
    arms.push_back(equal);
    for (float w : critical_weights) {
        study::Arm a = study::arm("cs_critical_w" + weight_text(w), base, "at_cost_sensitive");
        a.job.method_options.longtail.critical_class = critical_class;
        a.job.method_options.longtail.critical_weight = w;
        arms.push_back(a);
    }
    arms.push_back(study::arm("class_balanced", base, "at_class_balanced"));
    arms.push_back(study::arm("ldam_drw", base, "at_ldam_drw"));
    arms.push_back(study::arm("cosine_reg", base, "at_cosine_reg"));
    study::Arm target = study::arm("target_critical", base, "at_target_class");
    target.job.method_options.longtail.critical_class = critical_class;
    arms.push_back(target);
    // The weights of the class-balanced, LDAM and cosine arms never read the critical class; clearing it keeps their
    // job.json honest about what they used.
    for (study::Arm& a : arms)
        if (a.name == "class_balanced" || a.name == "ldam_drw" || a.name == "cosine_reg" || a.name == "pgd_at")
            a.job.method_options.longtail.critical_class = -1;
    return arms;
}

std::vector<study::Arm> select_longtail_arms(const std::string& flag, const std::vector<study::Arm>& all,
                                             const std::string& wanted) {
    if (wanted == "all") return all;
    const std::vector<std::string> names = util::split_list(wanted);
    std::set<std::string> seen;
    for (const auto& n : names) {
        if (std::none_of(all.begin(), all.end(), [&](const study::Arm& a) { return a.name == n; })) {
            std::string known;
            for (const auto& a : all) known += (known.empty() ? "" : ", ") + a.name;
            throw std::invalid_argument(flag + ": no arm '" + n + "' (arms: " + known + ", or all)");
        }
        if (!seen.insert(n).second) throw std::invalid_argument(flag + ": arm '" + n + "' is listed twice");
    }
    if (!seen.count("pgd_at"))
        throw std::invalid_argument(flag + ": list pgd_at too (every remedy is measured as a change against it)");
    std::vector<study::Arm> out;
    for (const auto& a : all)
        if (seen.count(a.name)) out.push_back(a);
    return out;
}

}  // namespace cw::protocols
