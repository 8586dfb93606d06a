#include "study/grid_summary.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "util/atomic_file.h"
#include "eval/agreement.h"
#include "report/compare_page.h"
#include "report/figure_heatmap.h"
#include "report/gnuplot.h"
#include "report/html.h"
#include "report/run_data.h"
#include "report/table_values.h"
#include "study/study.h"
#include "util/format.h"
#include "util/split_list.h"

namespace cw::study {

namespace fs = std::filesystem;

Discrepancy discrepancy(const std::vector<double>& v) {
    Discrepancy d;
    double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0;
    int n = 0;
    for (size_t k = 0; k < v.size(); ++k) {
        if (std::isnan(v[k])) continue;
        if (v[k] < lo) lo = v[k], d.worst_class = static_cast<int>(k);
        hi = std::max(hi, v[k]);
        sum += v[k];
        ++n;
    }
    if (n == 0) return {NAN, NAN, NAN, NAN, -1};
    d.mean = sum / n;
    for (double x : v)
        if (!std::isnan(x)) sq += (x - d.mean) * (x - d.mean);
    d.sd = std::sqrt(sq / n);
    d.spread = hi - lo;
    d.worst = lo;
    return d;
}

std::vector<double> mean_over_runs(const std::vector<std::vector<double>>& runs) {
    if (runs.empty()) return {};
    std::vector<double> m(runs.front().size(), 0.0);
    for (size_t k = 0; k < m.size(); ++k) {
        int n = 0;
        for (const auto& r : runs)
            if (!std::isnan(r.at(k))) m[k] += r[k], ++n;
        m[k] = n ? m[k] / n : NAN;
    }
    return m;
}

Agreement ranking_agreement(const std::vector<const SettingRuns*>& settings, bool robust) {
    Agreement a;
    const size_t n = settings.size();
    a.matrix.assign(n, std::vector<double>(n, NAN));
    double floor_sum = 0, across_sum = 0;
    for (const SettingRuns* s : settings) a.settings.push_back(s->name);
    for (size_t x = 0; x < n; ++x)
        for (size_t y = 0; y < n; ++y) {
            const auto& rx = robust ? settings[x]->robust : settings[x]->clean;
            const auto& ry = robust ? settings[y]->robust : settings[y]->clean;
            double sum = 0;
            int pairs = 0;
            for (size_t i = 0; i < rx.size(); ++i)
                for (size_t j = 0; j < ry.size(); ++j) {
                    if (x == y && i == j) continue;   // a run agrees with itself: no information
                    const double rho = fairness::spearman(rx[i], ry[j]);
                    if (std::isnan(rho)) continue;
                    sum += rho;
                    ++pairs;
                    // Each unordered pair once in the pooled statistics (the matrix is symmetric).
                    if (x < y || (x == y && i < j)) {
                        if (x == y) {
                            floor_sum += rho, ++a.floor_pairs;
                            a.floor_min = std::isnan(a.floor_min) ? rho : std::min(a.floor_min, rho);
                        } else {
                            across_sum += rho, ++a.across_pairs;
                            a.across_min = std::isnan(a.across_min) ? rho : std::min(a.across_min, rho);
                        }
                    }
                }
            if (pairs) a.matrix[x][y] = sum / pairs;
        }
    if (a.floor_pairs) a.floor_mean = floor_sum / a.floor_pairs;
    if (a.across_pairs) a.across_mean = across_sum / a.across_pairs;
    return a;
}

namespace {

std::string matrix_markdown(const Agreement& a) {
    std::ostringstream md;
    md << "| ρ |";
    for (size_t i = 0; i < a.settings.size(); ++i) md << " " << i + 1 << " |";
    md << "\n|---|";
    for (size_t i = 0; i < a.settings.size(); ++i) md << "---:|";
    md << "\n";
    for (size_t i = 0; i < a.settings.size(); ++i) {
        md << "| " << i + 1 << " " << a.settings[i] << " |";
        for (double v : a.matrix[i]) md << " " << report::fixed_or_dash(v, 2) << " |";
        md << "\n";
    }
    return md.str();
}

std::string agreement_line(const Agreement& a) {
    return "seed noise floor (diagonal): mean " + report::fixed_or_dash(a.floor_mean, 2) + ", min " + report::fixed_or_dash(a.floor_min, 2) + " over " +
           std::to_string(a.floor_pairs) + " seed pairs; across settings: mean " + report::fixed_or_dash(a.across_mean, 2) + ", min " +
           report::fixed_or_dash(a.across_min, 2) + " over " + std::to_string(a.across_pairs) + " run pairs";
}

nlohmann::json agreement_json(const Agreement& a) {
    nlohmann::json m = nlohmann::json::array();
    for (const auto& row : a.matrix) {
        nlohmann::json r = nlohmann::json::array();
        for (double v : row) r.push_back(report::number_or_null(v));
        m.push_back(r);
    }
    return {{"settings", a.settings},          {"matrix", m},
            {"floor_mean", report::number_or_null(a.floor_mean)}, {"floor_min", report::number_or_null(a.floor_min)},   {"floor_pairs", a.floor_pairs},
            {"across_mean", report::number_or_null(a.across_mean)}, {"across_min", report::number_or_null(a.across_min)}, {"across_pairs", a.across_pairs}};
}

// A table row written twice: a markdown line and an HTML row.
void add_row(const std::vector<std::string>& row, std::ostream& md, report::HtmlTable& html) {
    md << "|";
    for (const std::string& c : row) md << " " << c << " |";
    md << "\n";
    std::vector<std::string> cells;
    for (const std::string& c : row) cells.push_back(report::html_escape(c));
    html.rows.push_back(cells);
}

nlohmann::json discrepancy_json(const Discrepancy& d, const std::vector<std::string>& classes) {
    return {{"mean", report::number_or_null(d.mean)},
            {"spread", report::number_or_null(d.spread)},
            {"sd", report::number_or_null(d.sd)},
            {"worst", report::number_or_null(d.worst)},
            {"worst_class", d.worst_class < 0 ? nlohmann::json(nullptr) : nlohmann::json(classes[d.worst_class])}};
}

nlohmann::json runs_json(const SettingRuns& s, const std::vector<std::string>& dirs) {
    nlohmann::json runs = nlohmann::json::array();
    for (size_t k = 0; k < s.seeds.size(); ++k) {
        nlohmann::json c = nlohmann::json::array(), r = nlohmann::json::array();
        for (double v : s.clean[k]) c.push_back(report::number_or_null(v));
        for (double v : s.robust[k]) r.push_back(report::number_or_null(v));
        runs.push_back({{"seed", s.seeds[k]}, {"dir", dirs[k]}, {"clean", c}, {"robust", r}});
    }
    return runs;
}

// Per setting: the seed-mean per-class accuracy's class mean, worst class, spread and SD, clean and robust.
report::HtmlTable settings_section(const GatheredGrid& g, const std::string& attack, std::ostream& md, nlohmann::json& js) {
    report::HtmlTable html{{"setting", "dataset", "method", "seeds", "clean", "clean worst", "clean spread",
                            "clean SD", attack, attack + " worst", attack + " spread", attack + " SD"}, {}, {}, ""};
    md << "| setting | dataset | method | seeds | clean | clean worst | clean spread | clean SD | " << attack << " | "
       << attack << " worst | " << attack << " spread | " << attack << " SD |\n|---|---|---|---|"
       << "---:|---|---:|---:|---:|---|---:|---:|\n";
    js["settings"] = nlohmann::json::array();
    for (size_t i = 0; i < g.settings.size(); ++i) {
        const SettingRuns& s = g.settings[i];
        if (s.clean.empty()) continue;
        const Discrepancy dc = discrepancy(mean_over_runs(s.clean)), dr = discrepancy(mean_over_runs(s.robust));
        auto worst = [&](const Discrepancy& d) {
            return d.worst_class < 0 ? std::string("–") : s.classes[d.worst_class] + " " + util::percent(d.worst);
        };
        add_row({s.name, s.group, s.method, std::to_string(s.seeds.size()), util::percent(dc.mean), worst(dc),
                 util::percent(dc.spread), util::percent(dc.sd), util::percent(dr.mean), worst(dr),
                 util::percent(dr.spread), util::percent(dr.sd)},
                md, html);
        js["settings"].push_back({{"name", s.name}, {"group", s.group}, {"method", s.method}, {"classes", s.classes},
                                  {"clean", discrepancy_json(dc, s.classes)}, {"robust", discrepancy_json(dr, s.classes)},
                                  {"runs", runs_json(s, g.dirs[i])}});
    }
    return html;
}

// Benz et al.: adversarial training widens the gap between classes. Each adversarial setting against its natural
// twin (same flags but the method, same class set); the markdown section only when a pair exists.
report::HtmlTable natural_vs_adversarial_section(const GatheredGrid& g, const std::string& attack, std::ostream& md,
                                                 nlohmann::json& js) {
    std::ostringstream pairs_md;
    report::HtmlTable html{{"adversarial setting", "natural twin", "natural clean spread", "AT clean spread",
                            "AT " + attack + " spread", "natural clean SD", "AT clean SD", "AT " + attack + " SD",
                            "AT widens the clean gap", "AT " + attack + " gap wider than natural clean"}, {}, {}, ""};
    js["natural_vs_adversarial"] = nlohmann::json::array();
    for (const SettingRuns& at : g.settings) {
        if (at.clean.empty() || at.method == "natural") continue;
        const auto twin = std::find_if(g.settings.begin(), g.settings.end(), [&](const SettingRuns& s) {
            return s.method == "natural" && s.pair_key == at.pair_key && !s.clean.empty();
        });
        if (twin == g.settings.end()) continue;
        const Discrepancy nc = discrepancy(mean_over_runs(twin->clean)), ac = discrepancy(mean_over_runs(at.clean)),
                          ar = discrepancy(mean_over_runs(at.robust));
        add_row({at.name, twin->name, util::percent(nc.spread), util::percent(ac.spread), util::percent(ar.spread),
                 util::percent(nc.sd), util::percent(ac.sd), util::percent(ar.sd), ac.spread > nc.spread ? "yes" : "no",
                 ar.spread > nc.spread ? "yes" : "no"},
                pairs_md, html);
        js["natural_vs_adversarial"].push_back({{"adversarial", at.name}, {"natural", twin->name},
                                                {"natural_clean_spread", report::number_or_null(nc.spread)},
                                                {"at_clean_spread", report::number_or_null(ac.spread)},
                                                {"at_robust_spread", report::number_or_null(ar.spread)},
                                                {"natural_clean_sd", report::number_or_null(nc.sd)},
                                                {"at_clean_sd", report::number_or_null(ac.sd)},
                                                {"at_robust_sd", report::number_or_null(ar.sd)}});
    }
    if (!html.rows.empty()) {
        md << "\n## Natural vs adversarial training (spread = best − worst class, in %)\n\n| adversarial setting | "
           << "natural twin | natural clean spread | AT clean spread | AT " << attack << " spread | natural clean SD | "
           << "AT clean SD | AT " << attack << " SD | AT widens the clean gap | AT " << attack
           << " gap wider than natural clean |\n|---|---|---:|---:|---:|---:|---:|---:|---|---|\n" << pairs_md.str();
    }
    return html;
}

// Per class set: the Spearman matrices of the settings' rankings (clean, and robust when attacked), as markdown,
// JSON, HTML paragraphs and heatmap figures.
std::string agreement_section(const GatheredGrid& g, const std::string& attack,
                              const std::map<std::string, std::vector<const SettingRuns*>>& groups,
                              const std::vector<std::string>& order, std::ostream& md, nlohmann::json& js,
                              std::vector<report::Figure>& figures) {
    md << "\n## Agreement of per-class rankings (Spearman's ρ), per dataset\n\nCell (a, b): the mean ρ over pairs of "
       << "single runs (a seed of a, a seed of b); the diagonal pairs different seeds of one setting — the noise floor "
       << "a universal ranking must beat. Datasets are never correlated with each other: their classes differ.\n";
    std::ostringstream html;
    js["agreement"] = nlohmann::json::object();
    for (const std::string& group : order) {
        md << "\n### " << group << "\n";
        html << "<h3>" << report::html_escape(group) << "</h3>\n";
        for (const bool robust : {false, true}) {
            if (robust && g.attack.empty()) continue;
            const Agreement a = ranking_agreement(groups.at(group), robust);
            const std::string which = robust ? attack : "clean";
            md << "\n" << which << " accuracy: " << agreement_line(a) << ".\n\n" << matrix_markdown(a);
            js["agreement"][group][robust ? "robust" : "clean"] = agreement_json(a);
            html << "<p>" << report::html_escape(which + " accuracy: " + agreement_line(a)) << ".</p>\n";
            std::string stem = "spearman_" + group + "_" + which;
            std::replace_if(stem.begin(), stem.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-'; }, '_');
            figures.push_back(report::heatmap_figure(
                {stem, group + ": Spearman's ρ of the per-class " + which + " accuracies (mean over run pairs; "
                       "diagonal: between seeds of one setting, the noise floor).",
                 "setting", "setting", "Spearman's rho", a.settings, a.settings, a.matrix, -1, 1, true, "%.2f"}));
        }
    }
    return html.str();
}

// The cells not in the summary, one "- <cell>: <state>" line each (empty when every cell finished).
std::string unfinished_section(const GatheredGrid& g, nlohmann::json& js) {
    std::ostringstream missing;
    js["unfinished_cells"] = nlohmann::json::array();
    for (const CellStatus& c : g.cells)
        if (c.state != "finished") {
            missing << "- " << c.name << ": " << c.state << "\n";
            js["unfinished_cells"].push_back({{"cell", c.name}, {"state", c.state}});
        }
    return missing.str();
}

// One comparison page per class set (the first finished seed of each setting); returns the HTML list linking them.
std::string compare_pages(const GatheredGrid& g, const std::map<std::string, std::vector<const SettingRuns*>>& groups,
                          const std::vector<std::string>& order, bool draw, const std::string& out) {
    std::ostringstream list;
    list << "<ul>\n";
    for (const std::string& group : order) {
        std::vector<report::RunData> runs;
        for (const SettingRuns* s : groups.at(group))
            for (size_t i = 0; i < g.settings.size(); ++i)
                if (&g.settings[i] == s) runs.push_back(report::load_run(g.dirs[i].front()));
        std::string folder = group;
        std::replace(folder.begin(), folder.end(), ' ', '_');
        std::replace(folder.begin(), folder.end(), ':', '_');
        report::CompareOptions options;
        options.checkpoint = g.checkpoint;
        options.attack = g.attack;
        options.figures = draw;
        const std::string page = report::write_compare_page(runs, (fs::path(out) / "compare" / folder).string(), options);
        list << "<li><a href=\"" << report::html_escape(fs::relative(page, out).string()) << "\">"
             << report::html_escape(group) << "</a></li>\n";
    }
    list << "</ul>\n";
    return list.str();
}

}  // namespace

int write_grid_summary(const Grid& grid, const train::JobConfig& defaults, const std::vector<std::string>& extra,
                       const std::string& source, const std::string& out, std::ostream& log) {
    const GatheredGrid g = gather_grid(grid, defaults, extra, source, out);
    const int finished = static_cast<int>(std::count_if(g.cells.begin(), g.cells.end(),
                                                        [](const CellStatus& c) { return c.state == "finished"; }));
    const std::string attack = g.attack.empty() ? "robust" : g.attack;
    std::ostringstream md;
    nlohmann::json js = {{"title", grid.title}, {"grid", grid_to_json(grid)}, {"checkpoint", g.checkpoint},
                         {"attack", g.attack}, {"finished_cells", finished}, {"cells", static_cast<int>(g.cells.size())}};
    md << "# " << grid.title << "\n\n" << finished << " of " << g.cells.size() << " cells finished. Per setting: the "
       << "per-class accuracy averaged over its finished seeds (checkpoint " << g.checkpoint << ", " << attack
       << " for robust), then the class mean, the worst class, the spread (best − worst class) and the SD over "
       << "classes, in %.\n\n";
    const report::HtmlTable settings_html = settings_section(g, attack, md, js);
    const report::HtmlTable pairs_html = natural_vs_adversarial_section(g, attack, md, js);
    std::vector<std::string> order;
    const auto groups = by_class_set(g, order);
    std::vector<report::Figure> figures;
    const std::string agreement_html = agreement_section(g, attack, groups, order, md, js, figures);
    const std::string missing = unfinished_section(g, js);
    if (!missing.empty()) md << "\n## Cells not in this summary\n\n" << missing;
    util::write_file_atomic((fs::path(out) / "summary.md").string(), md.str());
    util::write_file_atomic((fs::path(out) / "grid_summary.json").string(), js.dump(2) + "\n");

    // The page, with figures when gnuplot is there.
    std::ostringstream body;
    body << "<h1>" << report::html_escape(grid.title) << "</h1>\n<p>" << finished << " of " << g.cells.size()
         << " cells finished; checkpoint " << report::html_escape(g.checkpoint) << ".</p>\n"
         << report::html_table(settings_html);
    if (!pairs_html.rows.empty()) body << "<h2>Natural vs adversarial training</h2>\n" << report::html_table(pairs_html);
    body << "<h2>Agreement of per-class rankings</h2>\n" << agreement_html;
    const bool draw = report::gnuplot_available();
    if (draw)
        for (const report::Figure& f : figures)
            body << report::html_figure(report::render(f, (fs::path(out) / "figures").string()), out);
    body << "<h2>Per dataset, first finished seed of each setting</h2>\n" << compare_pages(g, groups, order, draw, out);
    if (!missing.empty()) body << "<h2>Cells not in this summary</h2>\n<pre>" << report::html_escape(missing) << "</pre>\n";
    util::write_file_atomic((fs::path(out) / "index.html").string(), report::html_page(grid.title, body.str()));
    log << md.str() << "\nwrote " << (fs::path(out) / "summary.md").string() << ", grid_summary.json and index.html\n";
    return finished;
}

}  // namespace cw::study
