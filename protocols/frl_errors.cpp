#include "protocols/frl_errors.h"

#include <cmath>
#include <stdexcept>
#include <tuple>

#include "protocols/class_columns.h"
#include "report/run_data.h"
#include "util/format.h"

namespace cw::protocols {

namespace {
// The largest entry and its class (lowest index on ties; NaN entries, classes without samples, left out).
std::pair<double, int> largest(const std::vector<double>& v) {
    int at = -1;
    for (size_t k = 0; k < v.size(); ++k)
        if (!std::isnan(v[k]) && (at < 0 || v[k] > v[at])) at = static_cast<int>(k);
    return {at < 0 ? std::nan("") : v[at], at};
}
std::vector<double> one_minus(std::vector<double> v) {
    for (double& x : v) x = 1 - x;
    return v;
}
double accuracy_of(const nlohmann::json& e) {
    const nlohmann::json& a = e.at("accuracy");
    return a.is_number() ? a.get<double>() : std::nan("");
}
}  // namespace

ErrorRow error_row(const std::string& label, const nlohmann::json& results, const std::string& attack,
                   const std::string& file) {
    const nlohmann::json* clean = report::find_evaluation(results, "clean");
    const nlohmann::json* robust = report::find_evaluation(results, attack);
    if (!clean || !robust) throw std::runtime_error(file + ": no evaluation '" + (clean ? attack : "clean") + "'");
    ErrorRow r;
    r.label = label;
    r.avg_std = 1 - accuracy_of(*clean);
    r.avg_rob = 1 - accuracy_of(*robust);
    r.avg_bdy = accuracy_of(*clean) - accuracy_of(*robust);
    std::tie(r.worst_std, r.worst_std_class) = largest(one_minus(report::per_class_values(*clean, "per_class_accuracy")));
    std::tie(r.worst_rob, r.worst_rob_class) = largest(one_minus(report::per_class_values(*robust, "per_class_accuracy")));
    std::tie(r.worst_bdy, r.worst_bdy_class) = largest(report::per_class_values(*robust, "per_class_boundary_error"));
    return r;
}

std::string error_table_markdown(const std::vector<ErrorRow>& rows, const std::vector<std::string>& classes) {
    auto worst = [&](double v, int k) {
        return util::percent(v) + (k >= 0 && k < static_cast<int>(classes.size()) ? " (" + classes[k] + ")" : "");
    };
    std::string s = "| model | avg std | worst std | avg bdy | worst bdy | avg rob | worst rob |\n"
                    "|---|---|---|---|---|---|---|\n";
    for (const ErrorRow& r : rows)
        s += "| " + r.label + " | " + util::percent(r.avg_std) + " | " + worst(r.worst_std, r.worst_std_class) + " | " +
             util::percent(r.avg_bdy) + " | " + worst(r.worst_bdy, r.worst_bdy_class) + " | " + util::percent(r.avg_rob) + " | " +
             worst(r.worst_rob, r.worst_rob_class) + " |\n";
    return s;
}

}  // namespace cw::protocols
