#pragma once
// Line figures over training: per-class curves over epochs (history.csv) and the per-step class shares of a fair
// method's gradient step (steps.csv).
#include <string>
#include <vector>

#include "report/figure_bars.h"
#include "report/gnuplot.h"

namespace cw::report {

struct LineChart {
    std::string name, caption, xlabel, ylabel;
    std::vector<double> x;
    std::vector<Series> lines;          // each as long as x
    int emphasised = -1;                // drawn thick and black (the overall curve)
    bool stacked = false;               // stacked columns (shares that add up to 100%) instead of lines
    // Optional, per line (empty: every series "linespoints" in its own colour). A theory curve ("lines") and the
    // measurements on it ("points", NaN where there is none) can share a colour slot.
    std::vector<std::string> style;     // "linespoints", "lines" or "points"
    std::vector<int> colour_slot;
};

Figure line_figure(const LineChart& chart);

}  // namespace cw::report
