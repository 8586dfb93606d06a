#include "report/figure_lines.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace cw::report {

namespace {
// Ten distinct colours for up to ten classes (Paul Tol's "muted" scheme plus black's stand-in, grey).
const std::string& class_colour(size_t i) {
    static const std::vector<std::string> c = {"#332288", "#88CCEE", "#44AA99", "#117733", "#999933",
                                               "#DDCC77", "#CC6677", "#882255", "#AA4499", "#777777",
                                               "#4477AA", "#EE6677"};
    return c[i % c.size()];
}
}  // namespace

Figure line_figure(const LineChart& chart) {
    Figure f;
    f.name = chart.name;
    f.caption = chart.caption;
    f.width = 900;
    f.height = 440;
    std::ostringstream dat;
    dat << "# x";
    for (const Series& s : chart.lines) dat << " " << gp_data_label(s.label);
    dat << "\n";
    for (size_t i = 0; i < chart.x.size(); ++i) {
        // x as the label under a stacked column too: whole numbers (epochs, steps) without decimals.
        const double x = chart.x[i];
        dat << (std::floor(x) == x ? gp_number(x, 0) : gp_number(x, 6));
        for (const Series& s : chart.lines) dat << " " << gp_number(i < s.values.size() ? s.values[i] : 0.0 / 0.0);
        dat << "\n";
    }
    f.data.emplace_back(chart.name + ".dat", dat.str());
    const std::string file = gp_string(chart.name + ".dat");
    std::ostringstream gp;
    gp << "set xlabel " << gp_string(chart.xlabel) << "\nset ylabel " << gp_string(chart.ylabel) << "\n"
       << "set grid lc rgb '#dddddd'\nset key outside right top vertical samplen 2 reverse Left "
       << (chart.lines.size() > 14 ? "font ',8'" : "") << "\n";
    if (chart.stacked) {
        // One column per x (the audited step); the classes' shares stacked.
        gp << "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9 noborder\n"
           << "set boxwidth 0.8\nset yrange [0:100]\n"
           << "set xtics nomirror rotate by -40 left" << (chart.x.size() > 30 ? " font ',7'" : "") << "\n";
        gp << "plot ";
        for (size_t s = 0; s < chart.lines.size(); ++s)
            gp << (s ? ", \\\n     ''" : file) << " using " << s + 2 << (s ? "" : ":xtic(1)") << " title "
               << gp_string(chart.lines[s].label) << " lc rgb '" << class_colour(s) << "'";
    } else {
        bool whole = !chart.x.empty();
        for (double x : chart.x) whole &= std::floor(x) == x;
        const double range = chart.x.empty() ? 0 : chart.x.back() - chart.x.front();
        gp << "set xtics nomirror" << (whole && range <= 20 ? " 1" : "") << "\nset format x '%g'\n"
           << "set autoscale xfix\nset offsets 0.2, 0.2, 0, 0\n";
        gp << "plot ";
        for (size_t s = 0; s < chart.lines.size(); ++s) {
            const bool thick = static_cast<int>(s) == chart.emphasised;
            const std::string style = s < chart.style.size() ? chart.style[s] : "linespoints";
            const size_t slot = s < chart.colour_slot.size() ? static_cast<size_t>(chart.colour_slot[s]) : s;
            gp << (s ? ", \\\n     ''" : file) << " using 1:" << s + 2 << " with " << style << " title "
               << gp_string(chart.lines[s].label);
            if (style != "points") gp << " lw " << (thick ? 3 : 1.5);
            if (style == "points") gp << " pt 6 ps 1.2";   // open circles: the curve stays visible through them
            if (style == "linespoints") gp << " pt 7 ps " << (thick ? 0.7 : 0.45);
            gp << " lc rgb '" << (thick ? std::string("#000000") : class_colour(slot)) << "'"
               << (thick || style == "points" ? "" : " dt 1");
        }
    }
    gp << "\n";
    f.script = gp.str();
    return f;
}

}  // namespace cw::report
