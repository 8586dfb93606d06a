#include "protocols/longtail_table.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "protocols/class_columns.h"
#include "report/html.h"
#include "report/table_values.h"
#include "util/format.h"

namespace cw::protocols {

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The baseline's cells say "–" for a change: it is the reference, not a change of 0 measured.
std::string change_cell(const CriticalTable& t, size_t row, double delta) {
    return static_cast<int>(row) == t.baseline ? "–" : report::points_change(delta);
}
}  // namespace

CriticalTable critical_table(const std::string& evaluation, const std::vector<ArmAccuracy>& arms,
                             const std::string& baseline, int critical) {
    CriticalTable t;
    t.evaluation = evaluation;
    t.critical = critical;
    t.baseline = -1;
    for (size_t i = 0; i < arms.size(); ++i)
        if (arms[i].arm == baseline) t.baseline = static_cast<int>(i);
    if (t.baseline < 0) throw std::invalid_argument("critical table: no baseline arm '" + baseline + "'");
    const std::vector<double>& base = arms[static_cast<size_t>(t.baseline)].per_class;
    if (critical < 0 || critical >= static_cast<int>(base.size()))
        throw std::invalid_argument("critical table: critical class " + std::to_string(critical) + " out of range");
    const size_t c = static_cast<size_t>(critical);
    const int base_worst = report::argmin_defined(base);
    const double base_worst_value = base_worst >= 0 ? base[static_cast<size_t>(base_worst)] : kNaN;
    const double base_average = report::mean_defined(base);
    for (const ArmAccuracy& a : arms) {
        if (a.per_class.size() != base.size())
            throw std::invalid_argument("critical table: arm '" + a.arm + "' has " + std::to_string(a.per_class.size()) +
                                        " classes, the baseline " + std::to_string(base.size()));
        CriticalRow r;
        r.arm = a.arm;
        r.critical = a.per_class[c];
        r.critical_delta = a.per_class[c] - base[c];
        r.average = report::mean_defined(a.per_class);
        r.average_delta = r.average - base_average;
        r.worst = report::argmin_defined(a.per_class);
        r.worst_value = r.worst >= 0 ? a.per_class[static_cast<size_t>(r.worst)] : kNaN;
        r.worst_delta = r.worst_value - base_worst_value;
        // The cost to the others: the critical class is left out, and so is a class either side has no samples of.
        double sum = 0;
        int n = 0;
        for (size_t k = 0; k < base.size(); ++k) {
            if (k == c || std::isnan(a.per_class[k]) || std::isnan(base[k])) continue;
            sum += a.per_class[k] - base[k];
            ++n;
        }
        r.others_delta = n ? sum / n : kNaN;
        t.rows.push_back(r);
    }
    return t;
}

std::string critical_markdown(const CriticalTable& t, const std::vector<std::string>& classes) {
    const std::string name = report::class_label(classes, t.critical);
    std::ostringstream md;
    md << "| arm | **" << name << "** (critical) | Δ **" << name << "** | average | Δ average | worst class | "
       << "Δ worst | others' mean Δ |\n|---|---|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < t.rows.size(); ++i) {
        const CriticalRow& r = t.rows[i];
        const std::string worst = report::class_label(classes, r.worst);
        md << "| " << r.arm << " | **" << util::percent(r.critical) << "** | **" << change_cell(t, i, r.critical_delta)
           << "** | " << util::percent(r.average) << " | " << change_cell(t, i, r.average_delta) << " | "
           << (r.worst == t.critical ? "**" + worst + "**" : worst) << " " << util::percent(r.worst_value) << " | "
           << change_cell(t, i, r.worst_delta) << " | " << change_cell(t, i, r.others_delta) << " |\n";
    }
    return md.str();
}

std::string critical_per_class_markdown(const std::vector<std::string>& classes, int critical,
                                        const std::vector<std::string>& labels,
                                        const std::vector<std::vector<double>>& columns) {
    std::ostringstream md;
    md << "| class |";
    for (const auto& l : labels) md << " " << l << " |";
    md << "\n|---|";
    for (size_t j = 0; j < labels.size(); ++j) md << "---|";
    md << "\n";
    for (size_t k = 0; k < classes.size(); ++k) {
        const bool crit = static_cast<int>(k) == critical;
        md << "| " << (crit ? "**" + classes[k] + "** (critical)" : classes[k]) << " |";
        for (const auto& col : columns) {
            const std::string v = k < col.size() ? util::percent(col[k]) : "–";
            md << " " << (crit ? "**" + v + "**" : v) << " |";
        }
        md << "\n";
    }
    return md.str();
}

std::string critical_html(const CriticalTable& t, const std::vector<std::string>& classes) {
    report::HtmlTable h;
    const std::string name = report::class_label(classes, t.critical);
    h.header = {"arm", name + " (critical)", "Δ " + name, "average", "Δ average", "worst class", "Δ worst",
                "others' mean Δ"};
    for (size_t i = 0; i < t.rows.size(); ++i) {
        const CriticalRow& r = t.rows[i];
        h.rows.push_back({report::html_escape(r.arm), util::percent(r.critical),
                          report::html_escape(change_cell(t, i, r.critical_delta)), util::percent(r.average),
                          report::html_escape(change_cell(t, i, r.average_delta)),
                          report::html_escape(report::class_label(classes, r.worst)) + " " + util::percent(r.worst_value),
                          report::html_escape(change_cell(t, i, r.worst_delta)),
                          report::html_escape(change_cell(t, i, r.others_delta))});
        h.classes.push_back({"", "num critical", "num critical", "num", "num", r.worst == t.critical ? "critical" : "",
                             "num", "num"});
    }
    return report::html_table(h);
}

std::string critical_per_class_html(const std::vector<std::string>& classes, int critical,
                                    const std::vector<std::string>& labels,
                                    const std::vector<std::vector<double>>& columns) {
    report::HtmlTable h;
    h.header = {"class"};
    h.header.insert(h.header.end(), labels.begin(), labels.end());
    for (size_t k = 0; k < classes.size(); ++k) {
        const bool crit = static_cast<int>(k) == critical;
        std::vector<std::string> row{report::html_escape(classes[k]) + (crit ? " (critical)" : "")};
        std::vector<std::string> css{crit ? "critical" : ""};
        for (const auto& col : columns) {
            row.push_back(util::percent(k < col.size() ? col[k] : kNaN));
            css.push_back(crit ? "num critical" : "num");
        }
        h.rows.push_back(row);
        h.classes.push_back(css);
    }
    return report::html_table(h);
}

nlohmann::json critical_json(const CriticalTable& t, const std::vector<std::string>& classes) {
    nlohmann::json rows = nlohmann::json::array();
    for (const CriticalRow& r : t.rows)
        rows.push_back({{"arm", r.arm},
                        {"critical", report::number_or_null(r.critical)},
                        {"critical_delta", report::number_or_null(r.critical_delta)},
                        {"average", report::number_or_null(r.average)},
                        {"average_delta", report::number_or_null(r.average_delta)},
                        {"worst_class", report::class_label(classes, r.worst)},
                        {"worst", report::number_or_null(r.worst_value)},
                        {"worst_delta", report::number_or_null(r.worst_delta)},
                        {"others_mean_delta", report::number_or_null(r.others_delta)}});
    return {{"evaluation", t.evaluation},
            {"critical_class", report::class_label(classes, t.critical)},
            {"critical_index", t.critical},
            {"baseline", t.rows.at(static_cast<size_t>(t.baseline)).arm},
            {"rows", rows}};
}

}  // namespace cw::protocols
