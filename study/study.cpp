#include "study/study.h"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <set>
#include <stdexcept>

#include "eval/atomic_file.h"
#include "report/compare_page.h"
#include "report/comparison.h"
#include "report/gnuplot.h"
#include "report/run_data.h"
#include "train/methods/registry.h"

namespace cw::study {

namespace fs = std::filesystem;

Arm arm(const std::string& name, const train::JobConfig& base, const std::string& method) {
    Arm a{name, base};
    a.job.method = method;
    return a;
}

std::vector<Arm> arms_for_methods(const std::string& flag, const std::string& methods, const train::JobConfig& base) {
    std::vector<Arm> arms;
    std::set<std::string> seen;
    const auto& known = train::method_names();
    for (const std::string& m : cli::split_list(methods)) {
        if (std::find(known.begin(), known.end(), m) == known.end())
            throw std::invalid_argument(flag + ": unknown method '" + m + "'");
        if (!seen.insert(m).second) throw std::invalid_argument(flag + ": method '" + m + "' is listed twice");
        arms.push_back(arm(m, base, m));
    }
    if (arms.empty()) throw std::invalid_argument(flag + ": no methods given");
    return arms;
}

bool arm_finished(const Arm& a, const std::string& arm_dir) {
    const auto checkpoints = cli::split_list(a.job.final_checkpoints);
    if (checkpoints.empty()) return false;
    for (const std::string& c : checkpoints)
        if (!fs::exists(fs::path(arm_dir) / ("eval_" + c) / "results.json")) return false;
    return true;
}

int run_study(const Study& study, const cli::CommonFlags& common, std::ostream& out) {
    if (study.arms.empty()) throw std::invalid_argument("study '" + study.title + "': no arms");
    std::set<std::string> names;
    for (const Arm& a : study.arms)
        if (!names.insert(a.name).second) throw std::invalid_argument("study: two arms named '" + a.name + "'");
    const auto t0 = std::chrono::steady_clock::now();
    out << "== " << study.title << ": " << study.arms.size() << " runs into " << common.out << "\n";
    std::vector<std::string> dirs;
    for (size_t i = 0; i < study.arms.size(); ++i) {
        Arm a = study.arms[i];
        const std::string dir = (fs::path(common.out) / a.name).string();
        dirs.push_back(dir);
        if (common.resume && arm_finished(a, dir)) {
            out << "== run " << i + 1 << "/" << study.arms.size() << ": " << a.name << " finished before; skipped ("
                << dir << ")\n";
            continue;
        }
        out << "== run " << i + 1 << "/" << study.arms.size() << ": " << a.name << " (" << a.job.method << ") into "
            << dir << "\n";
        train::JobConfig job = a.job;
        const std::string experiment = job.experiment;
        job.common = common;
        job.common.out = dir;
        job.common.epochs = a.job.common.epochs;
        job.experiment = experiment;
        if (const int code = train::run_job(job, out); code != 0) return code;
    }

    std::vector<report::RunData> runs;
    for (const std::string& d : dirs) runs.push_back(report::load_run(d));
    const report::Comparison cmp = report::compare_runs(runs, study.checkpoint, study.attack);
    const std::string table = report::markdown_table(cmp);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::ostringstream md;
    md << "# " << study.title << "\n\nCheckpoint: " << study.checkpoint << "; accuracies in % on the evaluated test "
       << "images; bottom 3 = mean of the three weakest classes; spread = best − worst class.\n\n" << table
       << "\nWall time: " << std::fixed << std::setprecision(0) << seconds << " s.\n";
    eval::write_file_atomic((fs::path(common.out) / "summary.md").string(), md.str());
    out << "\n" << study.title << " (" << study.checkpoint << " checkpoint):\n\n" << table << "\n";
    report::CompareOptions options;
    options.checkpoint = study.checkpoint;
    options.attack = cmp.attack;
    options.figures = report::gnuplot_available();
    out << "wrote " << (fs::path(common.out) / "summary.md").string() << " and "
        << report::write_compare_page(runs, common.out, options) << " (" << std::fixed << std::setprecision(0)
        << seconds << " s in all)\n";
    return 0;
}

}  // namespace cw::study
