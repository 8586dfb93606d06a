#include "report/gaussian_page.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "util/atomic_file.h"
#include "report/figure_lines.h"
#include "report/html.h"

namespace cw::report {

namespace fs = std::filesystem;

namespace {
using fairness::ModelErrors;

const double kNaN = std::nan("");

// One chart: the two models' errors of both classes, theory lines and trained points sharing a colour.
LineChart sweep_chart(const GaussianSweepPlot& p, bool robust) {
    struct Column {
        double theory_nat[2], theory_adv[2], trained_nat[2], trained_adv[2];
    };
    std::map<double, Column> at;   // x -> values, sorted; the trained x are on the curves too
    auto pick = [robust](const ModelErrors& e, int k) { return 100 * (robust ? e.robust.error[k] : e.clean.error[k]); };
    for (size_t i = 0; i < p.dense_x.size(); ++i) {
        const fairness::TheoremErrors nat = fairness::theorem1(p.dense[i]), adv = fairness::theorem2(p.dense[i]);
        Column c;
        for (int k = 0; k < 2; ++k) {
            c.theory_nat[k] = pick({nat.clean, nat.robust}, k);
            c.theory_adv[k] = pick({adv.clean, adv.robust}, k);
            c.trained_nat[k] = c.trained_adv[k] = kNaN;
        }
        at[p.dense_x[i]] = c;
    }
    for (size_t i = 0; i < p.rows.size(); ++i) {
        const fairness::GaussianComparison& r = p.rows[i];
        Column& c = at[p.rows_x[i]];
        for (int k = 0; k < 2; ++k) {
            c.theory_nat[k] = pick(r.natural_theory, k);
            c.theory_adv[k] = pick(r.adversarial_theory, k);
            c.trained_nat[k] = pick(r.natural_trained, k);
            c.trained_adv[k] = pick(r.adversarial_trained, k);
        }
    }
    LineChart chart;
    const std::string kind = robust ? "robust" : "clean";
    chart.name = kind + "_vs_" + p.name;
    chart.caption = std::string(robust ? "Robust (worst-case L∞ at ε₀)" : "Clean") + " class-wise error against " +
                    p.xlabel + ": lines are the optimal linear classifiers (Theorems 1 and 2), circles the trained "
                    "models' exact errors.";
    chart.xlabel = p.xlabel;
    chart.ylabel = kind + " error (%)";
    const char* cls[2] = {"-1", "+1"};
    const int slot_nat[2] = {0, 1}, slot_adv[2] = {3, 6};
    for (bool trained : {false, true})
        for (int model = 0; model < 2; ++model)
            for (int k = 0; k < 2; ++k) {
                Series s;
                s.label = std::string(trained ? "trained " : "theory ") + (model ? "AT" : "natural") + ", class " + cls[k];
                for (const auto& [x, c] : at) {
                    if (trained) s.values.push_back(model ? c.trained_adv[k] : c.trained_nat[k]);
                    else s.values.push_back(model ? c.theory_adv[k] : c.theory_nat[k]);
                }
                chart.lines.push_back(s);
                chart.style.push_back(trained ? "points" : "lines");
                chart.colour_slot.push_back(model ? slot_adv[k] : slot_nat[k]);
            }
    for (const auto& kv : at) chart.x.push_back(kv.first);
    return chart;
}
}  // namespace

std::string write_gaussian_page(const GaussianPage& page, const std::string& out_dir, bool figures) {
    fs::create_directories(out_dir);
    std::string body = "<h1>" + html_escape(page.title) + "</h1>\n<p>" + html_escape(page.intro) + "</p>\n";
    HtmlTable config;
    config.header = {"parameter", "value"};
    for (const auto& [k, v] : page.config) config.rows.push_back({html_escape(k), html_escape(v)});
    body += html_table(config);
    if (!page.command_line.empty()) body += "<p>Command line:</p>\n<pre>" + html_escape(page.command_line) + "</pre>\n";

    body += "<h2>Class-wise errors, theory | trained</h2>\n";
    const auto cells = fairness::comparison_cells(page.rows);
    HtmlTable table;
    table.caption = "Errors in %; each cell: optimal linear classifier (theorem) | trained model (exact error of its "
                    "own w and b). Omega: AT's clean-error gap over the natural one. ratio: mean |w| on the non-robust "
                    "over the robust coordinates.";
    table.header = cells.front();
    for (size_t r = 1; r < cells.size(); ++r) {
        std::vector<std::string> row;
        for (const std::string& c : cells[r]) row.push_back(html_escape(c));
        table.rows.push_back(row);
    }
    body += html_table(table);

    if (figures) {
        body += "<h2>Figures</h2>\n";
        for (const GaussianSweepPlot& p : page.plots)
            for (bool robust : {false, true})
                body += html_figure(render(line_figure(sweep_chart(p, robust)), (fs::path(out_dir) / "figures").string()),
                                    out_dir);
    } else {
        body += "<p class=\"note\">Figures were not drawn (gnuplot is not installed: scripts/setup_debian.sh "
                "installs it).</p>\n";
    }
    if (!page.files.empty()) {
        body += "<h2>Files</h2>\n<ul>\n";
        for (const std::string& f : page.files)
            body += "<li><a href=\"" + html_escape(f) + "\"><code>" + html_escape(f) + "</code></a></li>\n";
        body += "</ul>\n";
    }
    const std::string path = (fs::path(out_dir) / "report.html").string();
    util::write_file_atomic(path, html_page(page.title, body));
    return path;
}

}  // namespace cw::report
