// reproduction_report: docs/reproduction.md from the committed result files of the reproduction study
// (scripts/reproduction.sh); the page itself is report/reproduction_page.h. Reads only results.json, history.csv and
// the runs' small text files, so the page can be rebuilt anywhere without training.
//
//   build/tools/reproduction_report --results results/reproduction --out docs/reproduction.md
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/common_flags.h"
#include "util/atomic_file.h"
#include "util/flags.h"
#include "report/reproduction_page.h"

int main(int argc, char** argv) {
    using namespace cw;
    std::string results = "results/reproduction";
    std::vector<std::string> datasets = {"fashion-mnist", "gtsrb32"};
    cli::CommonFlags common;
    common.out = "docs/reproduction.md";
    cli::CommonSpec spec;
    spec.program = "reproduction_report";
    spec.epochs_help = "accepted for a uniform command line; ignored";
    spec.resume_help = "accepted for a uniform command line; ignored";
    cli::FlagSet app{"docs/reproduction.md from the committed results of scripts/reproduction.sh", "reproduction_report"};
    cli::add_common_flags(app, common, spec);
    app.option("--results", results, "the results tree").show_default();
    app.option("--datasets", datasets, "datasets, in page order").show_default();
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("reproduction_report", [&] {
        if (!std::filesystem::is_directory(results)) throw std::runtime_error("--results " + results + ": no such folder");
        const std::string page = report::reproduction::reproduction_page(results, datasets);
        if (common.out == "-") std::cout << page;
        else util::write_file_atomic(common.out, page);
        return 0;
    });
}
