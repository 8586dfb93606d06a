#include "protocols/benz_outputs.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "util/atomic_file.h"
#include "report/figure_lines.h"

namespace cw::protocols {

namespace fs = std::filesystem;

report::Figure worst_class_timeline(const std::string& name, const std::string& arm,
                                    const std::vector<TrendAnalysis>& trends, const std::vector<std::string>& classes) {
    report::LineChart chart;
    chart.name = name;
    chart.xlabel = "epoch";
    chart.ylabel = "worst class";
    // Series share one x axis: the epochs of the first series (the per-epoch evaluation writes all of them at once).
    if (!trends.empty())
        for (int64_t e : trends.front().epochs) chart.x.push_back(static_cast<double>(e));
    for (const TrendAnalysis& t : trends) {
        report::Series s{t.eval, {}};
        for (size_t i = 0; i < chart.x.size(); ++i) {
            const auto at = std::find(t.epochs.begin(), t.epochs.end(), static_cast<int64_t>(chart.x[i]));
            const int w = at == t.epochs.end() ? -1 : t.worst[static_cast<size_t>(at - t.epochs.begin())];
            // A small vertical offset per series keeps coinciding points of two series apart.
            s.values.push_back(w < 0 ? NAN : w + 0.12 * static_cast<double>(chart.lines.size()));
        }
        chart.lines.push_back(std::move(s));
        chart.style.push_back("linespoints");
        static const int slots[] = {0, 6, 3, 7, 4, 8};   // clean dark blue, robust rose, then others that stay apart
        chart.colour_slot.push_back(slots[chart.colour_slot.size() % 6]);
    }
    chart.caption = arm + ": the worst class at every evaluated epoch (Benz et al. §3.1: does the vulnerable class "
                    "change during training?).";
    report::Figure f = report::line_figure(chart);
    if (classes.size() <= 20) {
        std::string tics = "set ytics (";
        for (size_t k = 0; k < classes.size(); ++k)
            tics += (k ? ", " : "") + report::gp_string(classes[k]) + " " + std::to_string(k);
        f.script = tics + ")\nset yrange [-0.5:" + std::to_string(classes.size()) + "]\n" + f.script;
    }
    return f;
}

report::Figure similarity_scatter(const std::string& name, const std::string& arm, const SimilarityAnalysis& s) {
    std::vector<size_t> order(s.classes.size());
    std::iota(order.begin(), order.end(), size_t{0});
    // Sorted by x, classes without a similarity last, so that the axis runs left to right.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const double x = s.clean.mean_other[a], y = s.clean.mean_other[b];
        return std::isnan(y) ? !std::isnan(x) : !std::isnan(x) && x < y;
    });
    report::LineChart chart;
    chart.name = name;
    chart.xlabel = "cross-class similarity of the class (clean mean_other)";
    chart.ylabel = "error (%)";
    report::Series clean{"clean error", {}}, robust{"robust error (" + s.attacked.eval + ")", {}};
    for (size_t k : order) {
        if (std::isnan(s.clean.mean_other[k])) continue;
        chart.x.push_back(s.clean.mean_other[k]);
        clean.values.push_back(100 * s.clean.error[k]);
        robust.values.push_back(100 * s.attacked.error[k]);
    }
    chart.lines = {clean, robust};
    chart.style = {"points", "points"};
    chart.colour_slot = {0, 6};   // dark blue and rose: the light second colour of the palette is hard to see as dots
    chart.caption = arm + ": each class's mean cosine similarity to the other classes (mean logit vectors, clean) "
                    "against its clean and robust error (Benz et al. §3.2: are classes the model sees as close to "
                    "others more vulnerable?).";
    return report::line_figure(chart);
}

std::vector<std::string> render_figures(const std::vector<report::Figure>& figs, const std::string& out) {
    std::vector<std::string> links;
    if (!report::gnuplot_available()) return links;
    for (const report::Figure& f : figs) {
        const report::RenderedFigure r = report::render(f, (fs::path(out) / "figures").string());
        links.push_back(fs::relative(r.svg_file, out).string());
    }
    return links;
}

std::string arm_figure_links(const std::string& out, const std::string& arm, const std::string& label) {
    std::string md;
    const std::vector<std::pair<std::string, std::string>> wanted = {
        {"last_class_accuracy", "per-class accuracy, clean and under attack"},
        {"last_class_accuracy_centred", "the same minus the class mean"},
        {"history_test_clean", "per-class clean accuracy over epochs"}};
    for (const auto& [stem, what] : wanted) {
        const fs::path f = fs::path(arm) / "figures" / (stem + ".svg");
        if (fs::exists(fs::path(out) / f)) md += "- " + label + ": [" + what + "](" + f.string() + ")\n";
    }
    // The robust curve's name carries the per-epoch attack's step count (history_test_pgd10).
    if (fs::exists(fs::path(out) / arm / "figures"))
        for (const auto& e : fs::directory_iterator(fs::path(out) / arm / "figures")) {
            const std::string n = e.path().filename().string();
            if (n.rfind("history_test_pgd", 0) == 0 && e.path().extension() == ".svg")
                md += "- " + label + ": [per-class robust accuracy over epochs](" + (fs::path(arm) / "figures" / n).string() + ")\n";
        }
    if (md.empty()) md = "- " + label + ": no figures (gnuplot was not available); see " + arm + "/report.html\n";
    return md;
}

void append_to_summary(const std::string& out, const std::string& section) {
    const std::string file = (fs::path(out) / "summary.md").string();
    const std::string before = fs::exists(file) ? util::read_file_text(file) : std::string();
    util::write_file_atomic(file, before + "\n" + section);
}

}  // namespace cw::protocols
