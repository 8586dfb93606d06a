#pragma once
// Heatmaps with class names on both axes: confusion matrices (row-normalised, in % of the true class), the
// cross-class cosine similarity of mean logits (Benz et al. 3.2), and CIFAR-100's superclass confusion.
#include <string>
#include <vector>

#include "report/gnuplot.h"

namespace cw::report {

struct Heatmap {
    std::string name, caption, xlabel, ylabel, cblabel;
    std::vector<std::string> rows, columns;       // labels, top to bottom and left to right
    std::vector<std::vector<double>> values;      // [row][column]; NaN: blank cell
    double lo = 0, hi = 1;                        // colour range
    bool diverging = false;                       // red-white-blue around the middle of [lo, hi], else white to blue
    std::string cell_format = "%.0f";             // printf format for the numbers in the cells (shown up to 12 rows)
};

Figure heatmap_figure(const Heatmap& map);

// M[k][j] / N_k in percent (NaN rows for classes without samples).
std::vector<std::vector<double>> row_percentages(const std::vector<std::vector<double>>& counts);

}  // namespace cw::report
