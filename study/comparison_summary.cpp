#include "study/comparison_summary.h"

#include <csignal>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "report/compare_page.h"
#include "report/comparison.h"
#include "report/gnuplot.h"
#include "report/run_data.h"
#include "study/study.h"
#include "train/stop_signal.h"
#include "util/atomic_file.h"

namespace cw::study {

namespace fs = std::filesystem;

int stopped(std::ostream& out, const std::string& when) {
    out << "stopped by " << (train::stop_requested() == SIGINT ? "SIGINT" : "SIGTERM") << " " << when
        << "; every finished arm is saved — continue with --resume\n";
    return train::stop_exit_code();
}

namespace {

// The column a job is compared by: its averaged model when it has one.
std::string compared_checkpoint(const Study& study, const Arm& a, const report::RunData& run, std::ostream& out) {
    std::string checkpoint = (a.averaged ? "ema_" : "") + study.checkpoint;
    if (a.averaged && !run.evaluation(checkpoint)) {
        // FAWA admits an epoch only when its worst validation class clears the threshold; a short run may
        // admit none, and then there is no averaged model to compare.
        out << "note: " << a.name << " has no averaged model (" << checkpoint << "); it is compared by its '"
            << study.checkpoint << "' checkpoint\n";
        checkpoint = study.checkpoint;
    }
    return checkpoint;
}

std::string mean_sd(const std::vector<double>& v) {
    double m = 0, ss = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    for (double x : v) ss += (x - m) * (x - m);
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << 100 * m;
    if (v.size() > 1) os << " ± " << 100 * std::sqrt(ss / static_cast<double>(v.size() - 1));
    return os.str();
}

// Over seeds: per arm the mean ± sample std of clean and robust average, worst class and spread.
struct SeedValues {
    std::vector<double> clean_avg, clean_worst, robust_avg, robust_worst, robust_spread;
    void add(const report::RunColumn& col) {
        const auto worst = [](const fairness::ClassMetrics& m) {
            return m.num_classes ? m.per_class_accuracy.at(static_cast<size_t>(m.worst_class)) : 0.0;
        };
        clean_avg.push_back(col.clean.accuracy);
        clean_worst.push_back(worst(col.clean));
        robust_avg.push_back(col.robust.accuracy);
        robust_worst.push_back(worst(col.robust));
        robust_spread.push_back(col.robust.spread);
    }
};

std::string seeds_table(const std::vector<std::string>& arm_names, const std::map<std::string, SeedValues>& values,
                        const std::string& attack) {
    std::ostringstream t;
    t << "| arm | seeds | clean avg | clean worst | " << attack << " avg | " << attack << " worst | " << attack
      << " spread |\n|---|---|---|---|---|---|---|\n";
    for (const std::string& name : arm_names) {
        const auto it = values.find(name);
        if (it == values.end()) continue;
        const SeedValues& v = it->second;
        t << "| " << name << " | " << v.clean_avg.size() << " | " << mean_sd(v.clean_avg) << " | "
          << mean_sd(v.clean_worst) << " | " << mean_sd(v.robust_avg) << " | " << mean_sd(v.robust_worst) << " | "
          << mean_sd(v.robust_spread) << " |\n";
    }
    return t.str();
}

}  // namespace

int write_comparison_summary(const Study& study, const std::vector<StudyJob>& jobs, bool seeded,
                             const cli::CommonFlags& common, std::ostream& out,
                             std::chrono::steady_clock::time_point t0) {
    std::vector<report::RunData> runs;
    std::vector<std::string> checkpoints;
    std::map<std::string, std::vector<size_t>> by_seed;   // seed id → indices into runs (list order)
    std::vector<std::string> arm_of_run;
    for (const StudyJob& j : jobs) {
        if (study.arms[j.arm].is_work() || !arm_finished(study.arms[j.arm], j.dir)) continue;
        runs.push_back(report::load_run(j.dir));
        checkpoints.push_back(compared_checkpoint(study, study.arms[j.arm], runs.back(), out));
        by_seed[j.seed ? std::to_string(*j.seed) : ""].push_back(runs.size() - 1);
        arm_of_run.push_back(study.arms[j.arm].name);
    }
    if (runs.empty()) return -1;
    if (train::stop_requested()) return stopped(out, "before the summary");
    std::string table;
    std::string attack;
    if (!seeded) {
        const report::Comparison cmp = report::compare_runs(runs, checkpoints, study.attack);
        table = report::markdown_table(cmp);
        attack = cmp.attack;
    } else {
        std::map<std::string, SeedValues> values;
        std::string tables;
        for (const auto& [seed, idx] : by_seed) {
            std::vector<report::RunData> r;
            std::vector<std::string> c;
            for (size_t i : idx) {
                r.push_back(runs[i]);
                c.push_back(checkpoints[i]);
            }
            const report::Comparison cmp = report::compare_runs(r, c, study.attack);   // points into r
            for (size_t k = 0; k < idx.size(); ++k) values[arm_of_run[idx[k]]].add(cmp.columns[k]);
            tables += "\nSeed " + seed + ":\n\n" + report::markdown_table(cmp);
            if (attack.empty()) attack = cmp.attack;
        }
        std::vector<std::string> names;
        for (const Arm& a : study.arms) names.push_back(a.name);
        table = "Mean ± std over seeds (sample std; % of the evaluated test images):\n\n" +
                seeds_table(names, values, attack.empty() ? "robust" : attack) + tables;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::ostringstream md;
    md << "# " << study.title << "\n\nCheckpoint: " << study.checkpoint << "; accuracies in % on the evaluated test "
       << "images; bottom 3 = mean of the three weakest classes; spread = best − worst class.\n\n" << table
       << "\nWall time: " << std::fixed << std::setprecision(0) << seconds << " s.\n";
    util::write_file_atomic((fs::path(common.out) / "summary.md").string(), md.str());
    out << "\n" << study.title << " (" << study.checkpoint << " checkpoint):\n\n" << table << std::endl;
    if (train::stop_requested()) return stopped(out, "before the comparison page");
    report::CompareOptions options;
    options.checkpoints = checkpoints;
    options.attack = attack;
    options.figures = report::gnuplot_available();
    out << "wrote " << (fs::path(common.out) / "summary.md").string() << " and "
        << report::write_compare_page(runs, common.out, options) << " (" << std::fixed << std::setprecision(0)
        << seconds << " s in all)\n";
    // A signal while the page's figures were drawn: the page is whole, but the signal asked to stop.
    if (train::stop_requested()) return stopped(out, "during the comparison page");
    return 0;
}

}  // namespace cw::study
