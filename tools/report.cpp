// report: rebuild one run's HTML page, or compare several runs side by side.
//
//   build/tools/report runs/quickstart                          # runs/quickstart/report.html (+ figures/)
//   build/tools/report runs/fair/*/seed0 --out runs/compare     # runs/compare/compare.html
//   build/tools/report runs/a runs/b --out cmp --checkpoint best_robust --attack pgd20
//
// A RUN_DIR is any folder written by train, quickstart, an experiment or audit (or a results.json itself).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "report/compare_page.h"
#include "report/gnuplot.h"
#include "report/run_page.h"

int main(int argc, char** argv) {
    using namespace cw::report;
    std::vector<std::string> dirs;
    std::string out;
    CompareOptions compare;
    bool no_figures = false;
    CLI::App app{"classwise report: one run's HTML page, or several runs compared (methods as columns)", "report"};
    app.add_option("RUN_DIR", dirs, "run folders (or results.json files)")->required();
    app.add_option("--out", out, "output folder (default for one run: the run's own folder)");
    app.add_option("--checkpoint", compare.checkpoint, "comparison: which evaluation of each run (last, best_robust, "
                                                       "...; default: each run's first)");
    app.add_option("--attack", compare.attack, "comparison: the robust column (default: the first attack all runs share)");
    app.add_flag("--no-figures", no_figures, "tables only (no gnuplot)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::cerr << "report: " << e.what() << " (see --help)\n";
        return 1;
    }
    try {
        if (!no_figures && !gnuplot_available())
            throw std::runtime_error("gnuplot not found (" + gnuplot_program() + "): install gnuplot-nox "
                                     "(scripts/setup_debian.sh) or pass --no-figures");
        std::vector<RunData> runs;
        for (const auto& d : dirs) runs.push_back(load_run(d));
        PageOptions page;
        page.figures = compare.figures = !no_figures;
        if (runs.size() == 1) {
            if (out.empty())
                out = std::filesystem::is_regular_file(runs[0].dir)
                          ? std::filesystem::path(runs[0].dir).parent_path().string()
                          : runs[0].dir;
            std::cout << "wrote " << write_run_page(runs[0], out, page) << "\n";
        } else {
            if (out.empty()) throw std::runtime_error("--out: needed when comparing several runs");
            std::cout << "wrote " << write_compare_page(runs, out, compare) << "\n";
        }
    } catch (const std::exception& e) {
        std::cerr << "report: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
