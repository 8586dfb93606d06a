// reproduction_report: docs/reproduction.md from the committed result files of the reproduction study
// (scripts/reproduction.sh); the page itself is report/reproduction_page.h. Reads only results.json, history.csv and
// the runs' small text files, so the page can be rebuilt anywhere without training. With --readme it also rewrites
// the verdict table in the README (between its two marker lines) from the same results; `--readme -` prints that
// table alone and writes nothing (tests/check_docs.sh compares it with the README's).
//
//   build/tools/reproduction_report --results results/reproduction --out docs/reproduction.md --readme README.md
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
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
    // CIFAR-10 first: the papers' own dataset leads the page and the table once its results are committed.
    std::vector<std::string> datasets = {"cifar10", "fashion-mnist", "gtsrb32"};
    std::string readme;
    cli::CommonFlags common;
    common.out = "docs/reproduction.md";
    cli::CommonSpec spec;
    spec.program = "reproduction_report";
    spec.epochs_help = "accepted for a uniform command line; ignored";
    spec.resume_help = "accepted for a uniform command line; ignored";
    cli::FlagSet app{"docs/reproduction.md from the committed results of scripts/reproduction.sh", "reproduction_report"};
    cli::add_common_flags(app, common, spec);
    app.option("--results", results, "the results tree").show_default();
    app.option("--datasets", datasets, "datasets, in page order (those without results are left out)").show_default();
    app.option("--readme", readme,
               "also rewrite the verdict table between the marker lines of this file ('-': print the table alone and "
               "write nothing)");
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("reproduction_report", [&] {
        if (!std::filesystem::is_directory(results)) throw std::runtime_error("--results " + results + ": no such folder");
        const auto present = report::reproduction::datasets_present(results, datasets);
        const std::string table = report::reproduction::verdict_table(results, present);
        if (readme == "-") {  // the table alone, for the check that the README's is current
            std::cout << table;
            return 0;
        }
        const std::string page = report::reproduction::reproduction_page(results, datasets);
        if (common.out == "-") std::cout << page;
        else util::write_file_atomic(common.out, page);
        if (readme.empty()) return 0;
        std::ifstream in(readme);
        if (!in) throw std::runtime_error("--readme " + readme + ": cannot read it");
        std::ostringstream text;
        text << in.rdbuf();
        util::write_file_atomic(readme, report::reproduction::replace_marked_block(text.str(), table));
        return 0;
    });
}
