#include "report/compare_page.h"

#include <filesystem>
#include <sstream>

#include "util/atomic_file.h"
#include "eval/agreement.h"
#include "report/comparison.h"
#include "report/figure_bars.h"
#include "report/figure_heatmap.h"
#include "report/html.h"
#include "report/run_figures.h"
#include "report/summary.h"
#include "report/table_values.h"
#include "util/format.h"

namespace cw::report {

namespace fs = std::filesystem;

namespace {

// The per-class accuracies a comparison ranks: the attack's, or the clean ones when there is no attack.
const std::vector<double>& ranked_accuracy(const RunColumn& c, const std::string& attack) {
    return attack.empty() ? c.clean.per_class_accuracy : c.robust.per_class_accuracy;
}

// Runs as columns: what each run is, then its average, worst class and spread, clean and under the attack.
HtmlTable summary_table(const Comparison& cmp) {
    const std::vector<RunColumn>& cols = cmp.columns;
    const std::string& attack = cmp.attack;
    HtmlTable t;
    t.caption = "Runs side by side (accuracies in %, spread in points)";
    t.header = {""};
    for (const RunColumn& c : cols) t.header.push_back(c.label);
    auto row = [&](const std::string& what, auto cell) {
        std::vector<std::string> r = {html_escape(what)}, cls = {""};
        for (const RunColumn& c : cols) {
            r.push_back(cell(c));
            cls.push_back("num");
        }
        t.rows.push_back(r);
        t.classes.push_back(cls);
    };
    auto field = [](const nlohmann::json& j, const char* k) {
        return j.contains(k) ? html_escape(j.at(k).is_string() ? j.at(k).get<std::string>() : j.at(k).dump()) : "";
    };
    auto worst_cell = [&](const fairness::ClassMetrics& m) {
        return m.worst_class < 0 ? std::string("–")
                                 : util::percent(m.per_class_accuracy[m.worst_class]) + " (" +
                                       html_escape(cmp.classes[m.worst_class]) + ")";
    };
    row("method", [&](const RunColumn& c) { return field(c.evaluation->results, "method"); });
    row("dataset", [&](const RunColumn& c) { return field(c.evaluation->results, "dataset"); });
    row("checkpoint", [&](const RunColumn& c) {
        return html_escape(c.evaluation->checkpoint.empty() ? "(the folder's)" : c.evaluation->checkpoint);
    });
    row("clean: average", [](const RunColumn& c) { return util::percent(c.clean.accuracy); });
    row("clean: worst class", [&](const RunColumn& c) { return worst_cell(c.clean); });
    row("clean: spread", [](const RunColumn& c) { return util::percent(c.clean.spread); });
    if (!attack.empty()) {
        row(attack + ": average", [](const RunColumn& c) { return util::percent(c.robust.accuracy); });
        row(attack + ": worst class", [&](const RunColumn& c) { return worst_cell(c.robust); });
        row(attack + ": spread", [](const RunColumn& c) { return util::percent(c.robust.spread); });
        row(attack + ": SD", [](const RunColumn& c) { return util::percent(c.robust.sd); });
        row(attack + ": mean of worst 10%", [](const RunColumn& c) { return util::percent(c.robust.worst10_accuracy); });
    }
    return t;
}

// Spearman's ρ between every two runs' ranked accuracies.
std::vector<std::vector<double>> spearman_matrix(const Comparison& cmp) {
    const std::vector<RunColumn>& cols = cmp.columns;
    std::vector<std::vector<double>> rho(cols.size(), std::vector<double>(cols.size()));
    for (size_t a = 0; a < cols.size(); ++a)
        for (size_t b = 0; b < cols.size(); ++b)
            rho[a][b] = fairness::spearman(ranked_accuracy(cols[a], cmp.attack), ranked_accuracy(cols[b], cmp.attack));
    return rho;
}

HtmlTable spearman_table(const Comparison& cmp, const std::vector<std::vector<double>>& rho, const std::string& ranked) {
    HtmlTable sp;
    sp.caption = "Spearman rank correlation of per-class " + ranked + " accuracy between runs (1: the classes rank "
                 "the same way)";
    sp.header = {""};
    for (const RunColumn& c : cmp.columns) sp.header.push_back(c.label);
    for (size_t a = 0; a < cmp.columns.size(); ++a) {
        std::vector<std::string> r = {html_escape(cmp.columns[a].label)}, cls = {""};
        for (size_t b = 0; b < cmp.columns.size(); ++b) {
            r.push_back(fixed_or_dash(rho[a][b], 2));
            cls.push_back("num");
        }
        sp.rows.push_back(r);
        sp.classes.push_back(cls);
    }
    return sp;
}

// Classes as rows, each run's clean / attacked accuracy; a run's worst class under the attack is marked.
HtmlTable per_class_table(const Comparison& cmp) {
    const std::string& attack = cmp.attack;
    HtmlTable pc;
    pc.caption = "Per class (%): clean / " + (attack.empty() ? std::string("–") : attack) + " accuracy of each run";
    pc.header = {"class"};
    for (const RunColumn& c : cmp.columns) pc.header.push_back(c.label);
    for (size_t k = 0; k < cmp.classes.size(); ++k) {
        std::vector<std::string> r = {html_escape(cmp.classes[k])}, cls = {""};
        for (const RunColumn& c : cmp.columns) {
            r.push_back(util::percent(c.clean.per_class_accuracy[k]) +
                        (attack.empty() ? "" : " / " + util::percent(c.robust.per_class_accuracy[k])));
            cls.push_back(std::string("num") + (!attack.empty() && static_cast<int>(k) == c.robust.worst_class ? " worst" : ""));
        }
        pc.rows.push_back(r);
        pc.classes.push_back(cls);
    }
    return pc;
}

// Grouped bars per class (attacked, then clean) and, with two runs or more, the ρ heatmap.
std::vector<Figure> compare_figures(const Comparison& cmp, const std::vector<std::vector<double>>& rho,
                                    const std::string& ranked) {
    std::vector<Figure> figs;
    auto bars = [&](const std::string& name, const std::string& which, bool robust) {
        BarChart chart{name, "", which + " accuracy (%)", cmp.classes, {}, false, 105, -1, true};
        for (const RunColumn& c : cmp.columns) {
            std::vector<double> v = robust ? c.robust.per_class_accuracy : c.clean.per_class_accuracy;
            for (double& x : v) x *= 100;
            chart.series.push_back({c.label, v});
        }
        chart.caption = "Per-class " + which + " accuracy, one bar per run, grouped by class; dashed: each run's "
                        "class mean.";
        figs.push_back(bar_figure(chart));
    };
    if (!cmp.attack.empty()) bars("compare_robust", cmp.attack, true);
    bars("compare_clean", "clean", false);
    if (cmp.columns.size() > 1) {
        std::vector<std::string> labels;
        for (const RunColumn& c : cmp.columns) labels.push_back(c.label);
        figs.push_back(heatmap_figure({"compare_spearman",
                                       "Spearman's rho of the per-class " + ranked + " accuracies between runs.",
                                       "run", "run", "Spearman's rho", labels, labels, rho, -1, 1, true, "%.2f"}));
    }
    return figs;
}

}  // namespace

std::string write_compare_page(const std::vector<RunData>& runs, const std::string& out_dir,
                               const CompareOptions& options) {
    const Comparison cmp = options.checkpoints.empty() ? compare_runs(runs, options.checkpoint, options.attack)
                                                       : compare_runs(runs, options.checkpoints, options.attack);
    const std::string& attack = cmp.attack;
    const std::string ranked = attack.empty() ? "clean" : attack;
    const std::vector<std::vector<double>> rho = spearman_matrix(cmp);

    std::ostringstream body;
    body << "<h1>classwise: " << cmp.columns.size() << " runs compared</h1>\n<p>";
    for (const RunColumn& c : cmp.columns)
        body << html_escape(c.label) << ": <code>" << html_escape(c.evaluation->file) << "</code><br>\n";
    body << "</p>\n";
    if (!attack.empty())
        body << "<p>Robust columns: "
             << html_escape(attack_description(*find_evaluation(cmp.columns[0].evaluation->results, attack)))
             << ".</p>\n";
    body << html_table(summary_table(cmp)) << html_table(spearman_table(cmp, rho, ranked))
         << html_table(per_class_table(cmp));
    if (options.figures)
        for (const Figure& f : compare_figures(cmp, rho, ranked))
            body << html_figure(render(f, (fs::path(out_dir) / "figures").string()), out_dir);
    const std::string page = (fs::path(out_dir) / "compare.html").string();
    util::write_file_atomic(page, html_page("classwise: runs compared", body.str()));
    return page;
}

}  // namespace cw::report
