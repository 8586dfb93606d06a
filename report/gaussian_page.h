#pragma once
// The HTML page of experiments/gaussian_theory: the configuration, the theory-vs-trained table, and for each sweep
// two figures (clean and robust class-wise errors against the swept parameter): the theorems as lines over a fine
// grid, the trained models' exact errors as points on them.
#include <string>
#include <utility>
#include <vector>

#include "datasets/gaussian_comparison.h"

namespace cw::report {

struct GaussianSweepPlot {
    std::string name;                                     // figure file stem part: "K", "eps"
    std::string xlabel;
    std::vector<fairness::GaussianComparison> rows;       // the trained points
    std::vector<double> rows_x;                           // their x
    std::vector<double> dense_x;                          // the theory curve: x and the parameters there
    std::vector<fairness::GaussianTheoryParams> dense;
};

struct GaussianPage {
    std::string title, intro;                             // intro: plain text, one paragraph
    std::vector<std::pair<std::string, std::string>> config;   // parameter, value
    std::string command_line;
    std::vector<fairness::GaussianComparison> rows;       // the table
    std::vector<GaussianSweepPlot> plots;
    std::vector<std::string> files;                       // other outputs to list, relative to the page
};

// Writes <out_dir>/report.html; with `figures`, draws them with gnuplot into <out_dir>/figures first. Returns the
// page's path.
std::string write_gaussian_page(const GaussianPage& page, const std::string& out_dir, bool figures);

}  // namespace cw::report
