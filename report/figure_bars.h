#pragma once
// Per-class bar charts: one group of bars per class, one bar per series (clean, each attack; or one per run in a
// comparison). Used for accuracies (the papers' Figures 1-2), accuracies minus their class mean, and CFP scores.
#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "report/table_values.h"   // argmin_defined, mean_defined (the charts' worst-class marker and mean lines)

namespace cw::report {

struct Series {
    std::string label;             // the key: "clean", "pgd20", a run's name
    std::vector<double> values;    // one per class, in the chart's unit (NaN: no bar)
};

struct BarChart {
    std::string name, caption, ylabel;
    std::vector<std::string> classes;
    std::vector<Series> series;
    bool centred = false;          // values around 0 (a mean subtracted): symmetric y range and a zero line
    double y_max = 0;              // fixed top of the y axis (0: from the data)
    int marked_series = -1;        // mark this series' lowest class as "worst" (-1: no marker)
    bool mean_lines = false;       // a dashed line at each series' class mean, in its colour
};

Figure bar_figure(const BarChart& chart);

// A gnuplot-readable number: fixed with `digits` decimals, "NaN" for NaN.
std::string gp_number(double v, int digits = 4);

}  // namespace cw::report
