#pragma once
// One self-contained HTML page per run: the run's configuration, command line, device, seed and durations, the
// per-class tables of every evaluated checkpoint, and the figures (report/run_figures.h) inline. Written as
// <out_dir>/report.html with the figures' SVG, PNG, gnuplot scripts and data in <out_dir>/figures/.
#include <ostream>
#include <string>

#include "report/run_data.h"

namespace cw::report {

struct PageOptions {
    bool figures = true;            // false: tables only (no gnuplot needed)
};

// Returns the page's path. Throws std::runtime_error (naming the file) when a figure or the page cannot be written.
std::string write_run_page(const RunData& run, const std::string& out_dir, const PageOptions& options = {});

// What the training and audit binaries call at the end: the page for the run in `run_dir`, written there; a figure
// that cannot be drawn (no gnuplot) leaves a page with tables only and one warning line on `log`, never a failed run.
void write_run_page_after_run(const std::string& run_dir, std::ostream& log);

}  // namespace cw::report
