#include "report/run_page.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "util/atomic_file.h"
#include "report/corruption_view.h"
#include "report/html.h"
#include "report/run_figures.h"
#include "report/summary.h"
#include "util/format.h"

namespace cw::report {

namespace fs = std::filesystem;

namespace {
std::string text(const nlohmann::json& j, const std::string& key) {
    if (!j.is_object() || !j.contains(key)) return "";
    const auto& v = j.at(key);
    return v.is_string() ? v.get<std::string>() : v.dump();
}

// The run's identity and costs, from results.json, job.json and train_log.csv.
std::string run_header(const RunData& run) {
    const nlohmann::json results = run.evaluations.empty() ? nlohmann::json::object() : run.evaluations[0].results;
    HtmlTable t;
    t.header = {"", ""};
    auto add = [&](const std::string& key, const std::string& value) {
        if (!value.empty()) t.rows.push_back({html_escape(key), html_escape(value)});
    };
    add("experiment", text(results, "experiment").empty() ? text(run.job, "experiment") : text(results, "experiment"));
    add("dataset", text(results, "dataset").empty() ? text(run.job, "dataset") : text(results, "dataset"));
    add("split", text(results, "split"));
    add("method", text(run.job, "method").empty() ? text(results, "method") : text(run.job, "method"));
    add("model", results.contains("model") ? text(results.at("model"), "arch") : text(run.job, "arch"));
    add("device", text(results, "device").empty() ? text(run.job, "device") : text(results, "device"));
    add("seed", text(results, "seed").empty() ? text(run.job, "seed") : text(results, "seed"));
    add("test samples", text(results, "num_examples"));
    add("training recipe", text(run.job, "recipe"));
    std::string command = text(run.job, "command_line");
    if (command.empty()) command = text(results, "command_line");
    if (run.train_log) {
        const int c = run.train_log->column("seconds");
        double total = 0;
        if (c >= 0)
            for (const auto& r : run.train_log->rows) total += util::csv_number(r[c], "train_log.csv");
        add("training time", util::duration_seconds(total) + " over " + std::to_string(run.train_log->rows.size()) + " epochs");
    }
    for (const Evaluation& e : run.evaluations) {
        double total = 0;
        for (const auto& ev : e.results.at("evaluations"))
            if (!ev.contains("pooled_over")) total += ev.value("time_s", 0.0);   // a pooled entry repeats its parts' time
        add("attack time" + (e.checkpoint.empty() ? "" : " (" + e.checkpoint + ")"), util::duration_seconds(total));
    }
    std::string out = html_table(t);
    if (!command.empty()) out += "<p>Command line:</p>\n<pre>" + html_escape(command) + "</pre>\n";
    return out;
}

std::string figures_html(const std::vector<Figure>& figures, const std::string& out_dir, bool draw) {
    if (!draw) return "";
    std::string html;
    for (const Figure& f : figures) html += html_figure(render(f, (fs::path(out_dir) / "figures").string()), out_dir);
    return html;
}

std::string evaluation_section(const Evaluation& e, const std::string& out_dir, bool draw) {
    const std::string label = e.checkpoint.empty() ? "" : e.checkpoint;
    std::ostringstream os;
    const auto& r = e.results;
    if (is_corruption_results(r)) {
        // eval_<checkpoint>_corruptions/ of a training run, corruptions/ of an audit
        const size_t cut = label.rfind("_corruptions");
        const std::string of = cut != std::string::npos ? label.substr(0, cut) : "";
        os << "<h2>Common corruptions" << (of.empty() ? "" : " of the '" + html_escape(of) + "' checkpoint") << "</h2>\n";
    } else {
        os << "<h2>Evaluation" << (label.empty() ? "" : " of the '" + html_escape(label) + "' checkpoint") << "</h2>\n";
    }
    os << "<p>" << html_escape(r.at("num_examples").dump()) << " " << html_escape(text(r, "split"))
       << " samples; checkpoint <code>" << html_escape(r.contains("model") ? text(r.at("model"), "checkpoint") : "")
       << "</code>; file <code>" << html_escape(e.file) << "</code>. ";
    const bool corruptions = is_corruption_results(r);
    if (corruptions)
        os << "Common corruptions: plain accuracy on the corrupted image (a clean-wrong sample that is right when "
           << "corrupted counts as right, so a boundary error can be negative).</p>\n";
    else
        os << "Robust = clean-correct and not broken (AutoAttack's counting).</p>\n";
    os << html_table(summary_table(r)) << html_table(class_table(r));
    if (corruptions) os << html_table(corruption_severity_table(r));
    os << figures_html(evaluation_figures(r, label.empty() ? "" : label + "_"), out_dir, draw);
    return os.str();
}
}  // namespace

std::string write_run_page(const RunData& run, const std::string& out_dir, const PageOptions& options) {
    fs::create_directories(out_dir);
    std::ostringstream body;
    body << "<h1>classwise run: " << html_escape(run.name) << "</h1>\n" << run_header(run);
    for (const std::string& n : run.notes) body << "<p class=\"note\">" << html_escape(n) << "</p>\n";
    if (!options.figures)
        body << "<p class=\"note\">Figures were not drawn (gnuplot is not installed: scripts/setup_debian.sh "
                "installs it; then rebuild this page with build/tools/report " << html_escape(run.dir) << ").</p>\n";
    for (const Evaluation& e : run.evaluations) body << evaluation_section(e, out_dir, options.figures);
    if (run.history || run.steps || run.train_log) body << "<h2>Training</h2>\n";
    if (run.train_log) body << html_table(train_log_table(*run.train_log));
    if (run.history && options.figures) body << figures_html(history_figures(*run.history, run.classes), out_dir, true);
    if (run.steps && options.figures) {
        body << "<h3>Per-class step audit</h3>\n";
        body << figures_html(step_figures(*run.steps, run.classes), out_dir, true);
    }
    if (!run.job.is_null()) body << "<h2>Configuration (job.json)</h2>\n<pre>" << html_escape(run.job.dump(2)) << "</pre>\n";
    for (const Evaluation& e : run.evaluations) {
        nlohmann::json attacks = nlohmann::json::object();
        for (const auto& ev : e.results.at("evaluations"))
            if (ev.contains("attack")) attacks[ev.at("name").get<std::string>()] = ev.at("attack");
        if (!attacks.empty()) {
            body << "<h3>Attacks" << (e.checkpoint.empty() ? "" : " (" + html_escape(e.checkpoint) + ")") << "</h3>\n<pre>"
                 << html_escape(attacks.dump(2)) << "</pre>\n";
            break;
        }
    }
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char stamp[64];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    body << "<p class=\"files\">Written by classwise on " << stamp << ". Rebuild with <code>build/tools/report "
         << html_escape(run.dir) << " --out " << html_escape(out_dir) << "</code>.</p>\n";
    const std::string page = (fs::path(out_dir) / "report.html").string();
    util::write_file_atomic(page, html_page("classwise: " + run.name, body.str()));
    return page;
}

void write_run_page_after_run(const std::string& run_dir, std::ostream& log) {
    try {
        const RunData run = load_run(run_dir);
        PageOptions options;
        options.figures = gnuplot_available();
        if (!options.figures)
            log << "warning: gnuplot not found (install gnuplot-nox: scripts/setup_debian.sh): the report page has "
                   "tables but no figures\n";
        const std::string written = write_run_page(run, run_dir, options);  // before "wrote": it may throw
        log << "wrote " << written << "\n";
    } catch (const std::exception& e) {
        // The run's results are safe on disk; a page that cannot be drawn must not turn a finished run into a failure.
        log << "warning: no report page: " << e.what() << "\n";
    }
}

}  // namespace cw::report
