#include "report/figure_heatmap.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/figure_bars.h"

namespace cw::report {

std::vector<std::vector<double>> row_percentages(const std::vector<std::vector<double>>& counts) {
    std::vector<std::vector<double>> out;
    for (const auto& row : counts) {
        double n = 0;
        for (double x : row) n += x;
        std::vector<double> r;
        for (double x : row) r.push_back(n > 0 ? 100.0 * x / n : std::nan(""));
        out.push_back(std::move(r));
    }
    return out;
}

namespace {
std::string tic_list(const std::vector<std::string>& labels) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < labels.size(); ++i) os << (i ? ", " : "") << gp_string(labels[i]) << " " << i;
    os << ")";
    return os.str();
}
}  // namespace

Figure heatmap_figure(const Heatmap& map) {
    Figure f;
    f.name = map.name;
    f.caption = map.caption;
    const size_t R = map.rows.size(), C = map.columns.size();
    const int cell = R > 40 ? 9 : R > 20 ? 18 : 48;
    f.width = static_cast<int>(std::max<size_t>(560, 260 + C * cell));
    f.height = static_cast<int>(std::max<size_t>(460, 200 + R * cell));

    // "x y value" triples (x = column, y = row): the image plot and the cell labels read the same file.
    std::ostringstream dat;
    for (size_t r = 0; r < R; ++r) {
        for (size_t c = 0; c < C; ++c) dat << c << " " << r << " " << gp_number(map.values.at(r).at(c)) << "\n";
        dat << "\n";
    }
    f.data.emplace_back(map.name + ".dat", dat.str());

    const std::string tic_font = R > 40 ? " font ',6'" : R > 20 ? " font ',8'" : "";
    std::ostringstream gp;
    gp << "set xtics " << tic_list(map.columns) << " rotate by -40 left nomirror scale 0" << tic_font << "\n"
       << "set ytics " << tic_list(map.rows) << " nomirror scale 0" << tic_font << "\n"
       << "set xrange [-0.5:" << C - 0.5 << "]\nset yrange [" << R - 0.5 << ":-0.5]\n"
       << "set xlabel " << gp_string(map.xlabel) << "\nset ylabel " << gp_string(map.ylabel) << "\n"
       << "set cblabel " << gp_string(map.cblabel) << "\nset cbrange [" << gp_number(map.lo) << ":"
       << gp_number(map.hi) << "]\n"
       << (map.diverging ? "set palette defined (0 '#B2182B', 0.5 '#F7F7F7', 1 '#2166AC')\n"
                         : "set palette defined (0 '#FFFFFF', 0.35 '#9ECAE1', 1 '#08306B')\n")
       << "set size ratio " << gp_number(double(R) / double(std::max<size_t>(C, 1)), 3) << "\nunset key\n"
       << "set datafile missing 'NaN'\n";
    const std::string dat_file = gp_string(map.name + ".dat");
    gp << "plot " << dat_file << " using 1:2:3 with image";
    if (R <= 12 && C <= 12) {
        // Dark cells get white numbers: the threshold is where the palette's blue gets dark.
        const double dark = map.lo + 0.6 * (map.hi - map.lo);
        gp << ", \\\n     " << dat_file << " using 1:2:(($3 == $3) ? sprintf(" << gp_string(map.cell_format)
           << ", $3) : ''):(" << (map.diverging ? "abs($3 - " + gp_number((map.lo + map.hi) / 2) + ") > " +
                                                      gp_number(0.35 * (map.hi - map.lo))
                                                : "$3 > " + gp_number(dark))
           << " ? 0xFFFFFF : 0x222222) with labels tc rgb variable font ',9'";
    }
    gp << "\n";
    f.script = gp.str();
    return f;
}

}  // namespace cw::report
