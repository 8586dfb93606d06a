#include "report/figure_bars.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace cw::report {

std::string gp_number(double v, int digits) {
    if (std::isnan(v)) return "NaN";
    std::ostringstream os;
    os << std::fixed << std::setprecision(digits) << v;
    return os.str();
}

namespace {
// Class names under the bars: turned when they would collide, smaller when there are many classes.
std::string class_tics(const std::vector<std::string>& classes) {
    size_t longest = 0;
    for (const auto& c : classes) longest = std::max(longest, c.size());
    const size_t C = classes.size();
    std::string font = C > 40 ? "font ',7'" : C > 20 ? "font ',9'" : "";
    if (C <= 6 && longest <= 12) return "set xtics nomirror scale 0 " + font + "\n";
    return "set xtics nomirror scale 0 rotate by -40 left " + font + "\n";
}
}  // namespace

Figure bar_figure(const BarChart& chart) {
    Figure f;
    f.name = chart.name;
    f.caption = chart.caption;
    const size_t C = chart.classes.size();
    f.width = static_cast<int>(std::clamp<size_t>(140 + C * (30 + 14 * chart.series.size()), 760, 1600));
    f.height = C > 12 ? 520 : 440;

    std::ostringstream dat;
    dat << "# class";
    for (const Series& s : chart.series) dat << " " << gp_data_label(s.label);
    dat << "\n";
    double lo = 0, hi = 0;
    for (size_t k = 0; k < C; ++k) {
        dat << gp_data_label(chart.classes[k]);
        for (const Series& s : chart.series) {
            const double v = k < s.values.size() ? s.values[k] : std::nan("");
            dat << " " << gp_number(v);
            if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
        }
        dat << "\n";
    }
    f.data.emplace_back(chart.name + ".dat", dat.str());

    std::ostringstream gp;
    gp << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.85 border rgb '#333333'\nset boxwidth 0.95\n"
       << "set key outside top center horizontal samplen 2 reverse Left\nset rmargin 8\nset grid ytics lc rgb '#dddddd'\n"
       << "set ylabel " << gp_string(chart.ylabel) << "\n" << class_tics(chart.classes)
       << "set xrange [-0.6:" << gp_number(C - 0.4, 1) << "]\n";
    // A flat chart (every value 0: a natural model's robust accuracy, no change against a baseline) still needs a
    // y range gnuplot accepts, which an extent of 0 is not ("empty y range"): it gets one unit.
    const double centred_extent = std::max(std::fabs(lo), std::fabs(hi)) > 1e-6 ? std::max(std::fabs(lo), std::fabs(hi)) : 1.0;
    const double top = chart.y_max > 0 ? chart.y_max : hi > 1e-6 ? hi * 1.15 : 1.0;
    if (chart.centred) {
        const double m = centred_extent * 1.25;
        gp << "set yrange [" << gp_number(-m) << ":" << gp_number(m) << "]\n"
           << "set arrow from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#333333' front\n";
    } else {
        gp << "set yrange [0:" << gp_number(top) << "]\n";
    }
    if (chart.mean_lines)
        for (size_t s = 0; s < chart.series.size(); ++s) {
            const double m = mean_defined(chart.series[s].values);
            if (!std::isnan(m))
                gp << "set arrow from graph 0, first " << gp_number(m) << " to graph 1, first " << gp_number(m)
                   << " nohead dt 2 lw 1.5 lc rgb '" << series_colour(s) << "' front\n";
        }
    if (chart.marked_series >= 0 && chart.marked_series < static_cast<int>(chart.series.size())) {
        const std::vector<double>& v = chart.series[chart.marked_series].values;
        const int worst = argmin_defined(v);
        if (worst >= 0) {
            // Above the group's tallest bar, or under its lowest when the bars hang below zero.
            double top_of_group = 0, bottom_of_group = 0;
            for (const Series& s : chart.series)
                if (worst < static_cast<int>(s.values.size()) && !std::isnan(s.values[worst])) {
                    top_of_group = std::max(top_of_group, s.values[worst]);
                    bottom_of_group = std::min(bottom_of_group, s.values[worst]);
                }
            const double span = chart.centred ? centred_extent : hi > 1e-6 ? hi : 1.0;
            const bool below = chart.centred && bottom_of_group < 0;
            gp << "set label " << gp_string(below ? "worst ▲" : "▼ worst") << " at " << worst << ", first "
               << gp_number(below ? bottom_of_group - 0.08 * span : top_of_group + 0.06 * span) << " center tc rgb '"
               << series_colour(chart.marked_series) << "' front\n";
        }
    }
    // A value of exactly 0 (a class with no robust sample left) gets a sliver of a bar: an empty slot would read as
    // "no data", which is what NaN (a class without samples) means here.
    const double sliver = 0.004 * (chart.centred ? 2 * centred_extent : top);
    gp << "sliver = " << gp_number(sliver, 6) << "\nplot ";
    for (size_t s = 0; s < chart.series.size(); ++s) {
        gp << (s ? ", \\\n     " : "") << (s ? "''" : gp_string(chart.name + ".dat")) << " using (column("
           << s + 2 << ") == 0 ? sliver : column(" << s + 2 << "))" << (s ? "" : ":xtic(1)") << " title " << gp_string(chart.series[s].label) << " lc rgb '"
           << series_colour(s) << "'";
    }
    gp << "\n";
    f.script = gp.str();
    return f;
}

}  // namespace cw::report
