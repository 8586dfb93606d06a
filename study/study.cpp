#include "study/study.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/device.h"
#include "util/atomic_file.h"
#include "report/compare_page.h"
#include "report/comparison.h"
#include "report/gnuplot.h"
#include "report/run_data.h"
#include "jobs/registry.h"
#include "util/format.h"
#include "util/split_list.h"

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
    for (const std::string& m : util::split_list(methods)) {
        if (std::find(known.begin(), known.end(), m) == known.end())
            throw std::invalid_argument(flag + ": unknown method '" + m + "'");
        if (!seen.insert(m).second) throw std::invalid_argument(flag + ": method '" + m + "' is listed twice");
        arms.push_back(arm(m, base, m));
    }
    if (arms.empty()) throw std::invalid_argument(flag + ": no methods given");
    return arms;
}

void add_methods_flag(CLI::App& app, std::string& methods) {
    app.remove_option(app.get_option("--method"));
    app.add_option("--methods", methods, "the methods compared, in order (each trains and is audited in <out>/<method>)")
        ->capture_default_str();
}

std::string data_and_model(const train::JobConfig& base) {
    return base.data.dataset + ", " + (base.arch.empty() ? train::default_arch(base.data.dataset) : base.arch);
}

bool arm_finished(const Arm& a, const std::string& arm_dir) {
    const auto checkpoints = util::split_list(a.job.final_checkpoints);
    if (checkpoints.empty()) return false;
    // A checkpoint the run never wrote (an averaged model FAWA admitted no epoch to) was skipped by the job.
    const bool last_done = fs::exists(fs::path(arm_dir) / "eval_last" / "results.json");
    for (const std::string& c : checkpoints) {
        if (fs::exists(fs::path(arm_dir) / ("eval_" + c) / "results.json")) continue;
        if (last_done && !fs::exists(fs::path(arm_dir) / (c + ".safetensors"))) continue;
        return false;
    }
    return true;
}

double estimate_training_seconds(const Study& study, const cli::CommonFlags& common, std::ostream& out) {
    const auto probe_arm = std::find_if(study.arms.begin(), study.arms.end(),
                                        [](const Arm& a) { return a.job.method != "natural"; });
    const Arm& probe = probe_arm == study.arms.end() ? study.arms.front() : *probe_arm;
    // Three optimiser steps in a scratch folder; the first pays for allocation and caches, so the estimate uses
    // the time between the ends of steps 1 and 3.
    const fs::path scratch = fs::path(common.out) / ".estimate";
    train::JobConfig job = probe.job;
    job.common = common;
    job.common.out = scratch.string();
    job.common.resume = false;
    job.final_checkpoints = "";
    std::vector<std::chrono::steady_clock::time_point> ends;
    job.trainer.after_step = [&](int64_t) { ends.push_back(std::chrono::steady_clock::now()); };
    double batches = 0;
    job.trainer.on_start = [&](int64_t batches_per_epoch) { batches = static_cast<double>(batches_per_epoch); };
    job.trainer.interrupt_after_steps = 3;
    std::ostringstream quiet;
    try {
        train::run_job(job, quiet);
    } catch (const std::exception& e) {
        fs::remove_all(scratch);
        throw;
    }
    fs::remove_all(scratch);
    if (ends.size() < 3) return 0;
    const double per_step = std::chrono::duration<double>(ends[2] - ends[0]).count() / 2;
    if (batches <= 0) return 0;
    double total = 0;
    const double adversarial_steps = probe.job.method_options.steps + 1;
    for (const Arm& a : study.arms) {
        const double cost = a.job.method == "natural" ? 1.0 / adversarial_steps : 1.0;
        total += per_step * cost * batches * static_cast<double>(a.job.common.epochs);
    }
    out << "estimate: one " << probe.job.method << " step takes " << std::fixed << std::setprecision(2) << per_step
        << " s here, so training the " << study.arms.size() << " runs (" << std::setprecision(0) << batches << " batches per epoch) takes about "
        << util::duration_estimate(total) << " on this machine, evaluations on top. On a GPU it is far less; --quick runs the "
        << "same protocol on a small real subset in minutes.\n";
    return total;
}

int run_arm(const Arm& a, const cli::CommonFlags& common, const std::string& dir, std::ostream& out, bool own_seed) {
    if (common.resume && arm_finished(a, dir)) {
        out << a.name << " finished before; skipped (" << dir << ")\n";
        return 0;
    }
    out << a.name << " (" << a.job.method << ") into " << dir << "\n";
    train::JobConfig job = a.job;
    job.common = common;
    job.common.out = dir;
    job.common.epochs = a.job.common.epochs;   // an arm may train for fewer epochs (FRL's fine-tuning)
    if (own_seed) job.common.seed = a.job.common.seed;
    return train::run_job(job, out);
}

int run_study(const Study& study, const cli::CommonFlags& common, std::ostream& out) {
    if (study.arms.empty()) throw std::invalid_argument("study '" + study.title + "': no arms");
    std::set<std::string> names;
    for (const Arm& a : study.arms)
        if (!names.insert(a.name).second) throw std::invalid_argument("study: two arms named '" + a.name + "'");
    const auto t0 = std::chrono::steady_clock::now();
    out << "== " << study.title << ": " << study.arms.size() << " runs into " << common.out << "\n";
    if (!common.quick && !common.resume && resolve_device(common.device, false).is_cpu())
        estimate_training_seconds(study, common, out);
    std::vector<std::string> dirs;
    for (size_t i = 0; i < study.arms.size(); ++i) {
        Arm a = study.arms[i];
        const std::string dir = (fs::path(common.out) / a.name).string();
        dirs.push_back(dir);
        out << "== run " << i + 1 << "/" << study.arms.size() << ": ";
        if (const int code = run_arm(a, common, dir, out); code != 0) return code;
    }

    std::vector<report::RunData> runs;
    std::vector<std::string> checkpoints;
    for (size_t i = 0; i < dirs.size(); ++i) {
        runs.push_back(report::load_run(dirs[i]));
        std::string checkpoint = (study.arms[i].averaged ? "ema_" : "") + study.checkpoint;
        if (study.arms[i].averaged && !runs.back().evaluation(checkpoint)) {
            // FAWA admits an epoch only when its worst validation class clears the threshold; a short run may
            // admit none, and then there is no averaged model to compare.
            out << "note: " << study.arms[i].name << " has no averaged model (" << checkpoint
                << "); it is compared by its '" << study.checkpoint << "' checkpoint\n";
            checkpoint = study.checkpoint;
        }
        checkpoints.push_back(checkpoint);
    }
    const report::Comparison cmp = report::compare_runs(runs, checkpoints, study.attack);
    const std::string table = report::markdown_table(cmp);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::ostringstream md;
    md << "# " << study.title << "\n\nCheckpoint: " << study.checkpoint << "; accuracies in % on the evaluated test "
       << "images; bottom 3 = mean of the three weakest classes; spread = best − worst class.\n\n" << table
       << "\nWall time: " << std::fixed << std::setprecision(0) << seconds << " s.\n";
    util::write_file_atomic((fs::path(common.out) / "summary.md").string(), md.str());
    out << "\n" << study.title << " (" << study.checkpoint << " checkpoint):\n\n" << table << "\n";
    report::CompareOptions options;
    options.checkpoints = checkpoints;
    options.attack = cmp.attack;
    options.figures = report::gnuplot_available();
    out << "wrote " << (fs::path(common.out) / "summary.md").string() << " and "
        << report::write_compare_page(runs, common.out, options) << " (" << std::fixed << std::setprecision(0)
        << seconds << " s in all)\n";
    return 0;
}

}  // namespace cw::study
