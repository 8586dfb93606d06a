// report: rebuild one run's HTML page, or compare several runs side by side.
//
//   build/tools/report runs/quickstart                          # runs/quickstart/report.html (+ figures/)
//   build/tools/report runs/fair/*/seed0 --out runs/compare     # runs/compare/compare.html
//   build/tools/report runs/a runs/b --out cmp --checkpoint best_robust --attack pgd20
//
// A RUN_DIR is any folder written by train, quickstart, an experiment or audit (or a results.json itself). Of the
// common flags only --out means something here (nothing trains, nothing is evaluated).
#include <filesystem>
#include <iostream>

#include "cli/common_flags.h"
#include "report/compare_page.h"
#include "report/gnuplot.h"
#include "report/run_page.h"
#include "util/flags.h"

int main(int argc, char** argv) {
    using namespace cw;
    using namespace cw::report;
    std::vector<std::string> dirs;
    CompareOptions compare;
    bool no_figures = false;
    cli::CommonFlags common;
    cli::CommonSpec spec;
    spec.program = "report";
    cli::FlagSet app{"classwise report: one run's HTML page, or several runs compared (methods as columns)", "report"};
    cli::add_common_flags(app, common, spec);
    app.get("--out").description("output folder (default for one run: the run's own folder; needed to compare)");
    app.option("RUN_DIR", dirs, "run folders (or results.json files)");
    app.option("--checkpoint", compare.checkpoint, "comparison: which evaluation of each run (last, best_robust, "
                                                       "...; default: each run's first)");
    app.option("--attack", compare.attack, "comparison: the robust column (default: the first attack all runs share)");
    app.flag("--no-figures", no_figures, "tables only (no gnuplot)");
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("report", [&] {
        if (dirs.empty()) throw std::runtime_error("RUN_DIR: give at least one run folder (see --help)");
        if (!no_figures && !gnuplot_available())
            throw std::runtime_error("gnuplot not found (" + gnuplot_program() + "): install gnuplot-nox "
                                     "(scripts/setup_debian.sh) or pass --no-figures");
        std::vector<RunData> runs;
        for (const auto& d : dirs) runs.push_back(load_run(d));
        PageOptions page;
        page.figures = compare.figures = !no_figures;
        std::string out = common.out;
        if (runs.size() == 1) {
            if (out.empty())
                out = std::filesystem::is_regular_file(runs[0].dir)
                          ? std::filesystem::path(runs[0].dir).parent_path().string()
                          : runs[0].dir;
            const std::string written = write_run_page(runs[0], out, page);  // before "wrote": it may throw
            std::cout << "wrote " << written << "\n";
        } else {
            if (out.empty()) throw std::runtime_error("--out: needed when comparing several runs");
            const std::string written = write_compare_page(runs, out, compare);
            std::cout << "wrote " << written << "\n";
        }
        return 0;
    });
}
