#include "report/corruption_view.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "report/figure_bars.h"
#include "report/figure_heatmap.h"
#include "report/run_data.h"
#include "report/summary.h"
#include "util/format.h"

namespace cw::report {

bool is_corruption_evaluation(const nlohmann::json& e) {
    return e.contains("attack") && e.at("attack").is_object() && e.at("attack").value("type", "") == "corruption";
}

bool is_corruption_results(const nlohmann::json& results) {
    bool any = false;
    for (const auto& e : results.at("evaluations")) {
        if (e.at("name") == "clean") continue;
        if (!is_corruption_evaluation(e)) return false;
        any = true;
    }
    return any;
}

bool is_single_severity(const nlohmann::json& e) {
    return is_corruption_evaluation(e) && e.at("attack").contains("severity") &&
           e.at("attack").at("severity").is_number();
}

std::vector<const nlohmann::json*> corruption_table_entries(const nlohmann::json& results) {
    std::vector<const nlohmann::json*> out;
    if (const nlohmann::json* clean = find_evaluation(results, "clean")) out.push_back(clean);
    const nlohmann::json* all = nullptr;
    std::vector<const nlohmann::json*> each;
    for (const auto& e : results.at("evaluations")) {
        if (!is_corruption_evaluation(e) || is_single_severity(e)) continue;
        if (e.at("attack").value("name", "") == "all") all = &e;
        else each.push_back(&e);
    }
    if (all) out.push_back(all);
    out.insert(out.end(), each.begin(), each.end());
    return out;
}

namespace {
// "fog" for corruption:fog, "all corruptions" for the pooled whole, "clean".
std::string column_label(const nlohmann::json& e) {
    if (!is_corruption_evaluation(e)) return e.at("name").get<std::string>();
    const std::string name = e.at("attack").value("name", e.at("name").get<std::string>());
    return name == "all" ? "all corruptions" : name;
}
double worst_accuracy(const nlohmann::json& e) {
    const fairness::ClassMetrics m = metrics_of(e);
    return m.worst_class >= 0 ? m.per_class_accuracy[m.worst_class] : std::nan("");
}
std::vector<std::vector<double>> row_percent(const nlohmann::json& counts) {
    std::vector<std::vector<double>> m;
    for (const auto& row : counts) m.push_back(row.get<std::vector<double>>());
    return row_percentages(m);
}
}  // namespace

std::vector<Figure> corruption_figures(const nlohmann::json& results, const std::string& prefix) {
    const auto classes = results.at("classes").get<std::vector<std::string>>();
    const std::vector<const nlohmann::json*> entries = corruption_table_entries(results);
    // Clean first, each corruption, all pooled last: the heatmap reads left to right from the reference.
    std::vector<const nlohmann::json*> columns;
    for (const auto* e : entries)
        if (column_label(*e) != "all corruptions") columns.push_back(e);
    for (const auto* e : entries)
        if (column_label(*e) == "all corruptions") columns.push_back(e);

    Heatmap map;
    map.name = prefix + "corruption_heatmap";
    map.xlabel = "corruption (severities pooled)";
    map.ylabel = "class";
    map.cblabel = "accuracy (%)";
    map.rows = classes;
    map.values.assign(classes.size(), {});
    map.lo = 0;
    map.hi = 100;
    BarChart bars{prefix + "corruption_accuracy", "", "accuracy (%)", {}, {{"overall", {}}, {"worst class", {}}},
                  false, 105, 1, false};
    for (const auto* e : columns) {
        map.columns.push_back(column_label(*e));
        const std::vector<double> acc = per_class_values(*e, "per_class_accuracy");
        for (size_t k = 0; k < classes.size(); ++k)
            map.values[k].push_back(k < acc.size() ? 100 * acc[k] : std::nan(""));
        bars.classes.push_back(column_label(*e));
        bars.series[0].values.push_back(100 * metrics_of(*e).accuracy);
        bars.series[1].values.push_back(100 * worst_accuracy(*e));
    }
    std::string sources;
    if (results.contains("corruptions") && results.at("corruptions").contains("sources"))
        for (const auto& s : results.at("corruptions").at("sources"))
            sources += (sources.empty() ? "" : ", ") + s.get<std::string>();
    const std::string how = "plain accuracy on the corrupted images, severities pooled" +
                            (sources.empty() ? std::string() : "; images: " + sources);
    map.caption = "Per-class accuracy (%) clean and under each common corruption (" + how + "); last column: all "
                  "corruptions pooled.";
    bars.caption = "Overall and worst-class accuracy clean and under each corruption (" + how + "); ▼ marks the "
                   "lowest worst class.";
    std::vector<Figure> figs = {heatmap_figure(map), bar_figure(bars)};
    for (const auto* e : {find_evaluation(results, "clean"), columns.empty() ? nullptr : columns.back()}) {
        if (!e || !e->contains("confusion")) continue;
        const std::string label = column_label(*e);
        std::string stem;
        for (char c : label) stem += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        figs.push_back(heatmap_figure({prefix + "confusion_" + stem,
                                       "Confusion matrix, " + label + ": % of each true class (rows) predicted as "
                                       "each class (columns).",
                                       "predicted class", "true class", "% of the true class", classes, classes,
                                       row_percent(e->at("confusion")), 0, 100, false, "%.0f"}));
    }
    return figs;
}

HtmlTable corruption_severity_table(const nlohmann::json& results) {
    std::vector<std::string> names;
    std::vector<int> severities;
    std::map<std::string, std::map<int, const nlohmann::json*>> single;
    std::map<std::string, const nlohmann::json*> pooled;
    for (const auto& e : results.at("evaluations")) {
        if (!is_corruption_evaluation(e)) continue;
        const std::string name = e.at("attack").value("name", "");
        if (name == "all") continue;
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        if (is_single_severity(e)) {
            const int s = e.at("attack").at("severity").get<int>();
            single[name][s] = &e;
            if (std::find(severities.begin(), severities.end(), s) == severities.end()) severities.push_back(s);
        } else {
            pooled[name] = &e;
        }
    }
    std::sort(severities.begin(), severities.end());
    HtmlTable t;
    t.caption = "Per corruption and severity: overall / worst-class accuracy (%), plain accuracy on the corrupted "
                "images; red: the lowest worst class of a column";
    t.header = {"corruption", "source"};
    for (int s : severities) {
        t.header.push_back("s" + std::to_string(s));
        t.header.push_back("s" + std::to_string(s) + " worst");
    }
    t.header.push_back("pooled");
    t.header.push_back("pooled worst");
    std::vector<std::vector<double>> worst_by_column(severities.size() + 1);
    for (const std::string& n : names) {
        std::vector<const nlohmann::json*> cells;
        for (int s : severities) cells.push_back(single[n].count(s) ? single[n][s] : nullptr);
        cells.push_back(pooled.count(n) ? pooled[n] : nullptr);
        for (size_t c = 0; c < cells.size(); ++c) worst_by_column[c].push_back(cells[c] ? worst_accuracy(*cells[c]) : NAN);
    }
    for (size_t r = 0; r < names.size(); ++r) {
        const std::string& n = names[r];
        const nlohmann::json* any = pooled.count(n) ? pooled[n] : single[n].begin()->second;
        std::vector<std::string> row = {html_escape(n), html_escape(any->at("attack").value("source", ""))};
        std::vector<std::string> cls = {"", ""};
        for (size_t c = 0; c <= severities.size(); ++c) {
            const nlohmann::json* e = c < severities.size() ? (single[n].count(severities[c]) ? single[n][severities[c]] : nullptr)
                                                            : (pooled.count(n) ? pooled[n] : nullptr);
            row.push_back(e ? util::percent(metrics_of(*e).accuracy) : "–");
            row.push_back(util::percent(worst_by_column[c][r]));
            cls.push_back("num");
            cls.push_back(std::string("num") + (argmin_defined(worst_by_column[c]) == static_cast<int>(r) ? " worst" : ""));
        }
        t.rows.push_back(std::move(row));
        t.classes.push_back(std::move(cls));
    }
    return t;
}

}  // namespace cw::report
