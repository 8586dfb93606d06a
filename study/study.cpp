#include "study/study.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <csignal>
#include <iostream>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "engine/device.h"
#include "util/atomic_file.h"
#include "report/compare_page.h"
#include "report/comparison.h"
#include "report/gnuplot.h"
#include "report/run_data.h"
#include "jobs/registry.h"
#include "study/job_lock.h"
#include "study/jobs.h"
#include "study/slurm.h"
#include "train/stop_signal.h"
#include "util/format.h"
#include "util/split_list.h"

namespace cw::study {

namespace fs = std::filesystem;

Arm arm(const std::string& name, const train::JobConfig& base, const std::string& method) {
    Arm a;
    a.name = name;
    a.job = base;
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

int run_arm(const Arm& a, const cli::CommonFlags& common, const std::string& dir, std::ostream& out, bool own_seed) {
    if (common.resume && arm_finished(a, dir)) {
        out << a.name << " finished before; skipped (" << dir << ")\n";
        return 0;
    }
    out << a.name << " (" << a.job.method << ") into " << dir << std::endl;
    train::JobConfig job = a.job;
    job.common = common;
    job.common.out = dir;
    job.common.epochs = a.job.common.epochs;   // an arm may train for fewer epochs (FRL's fine-tuning)
    if (own_seed) job.common.seed = a.job.common.seed;
    return train::run_job(job, out);
}

namespace {

// The job's arm: its seed (with --seeds) and the checkpoint it starts from in the folder of the arm it needs.
Arm job_arm(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs, const cli::CommonFlags& common) {
    Arm a = study.arms[job.arm];
    if (job.seed) a.job.common.seed = common.seed + *job.seed;
    if (!a.init_arm.empty()) {
        const std::string id = job.seed ? a.init_arm + "/seed" + std::to_string(*job.seed) : a.init_arm;
        a.job.init = (fs::path(find_job(jobs, id).dir) / a.init_file).string();
    }
    return a;
}

// One job, locked; a failure leaves its one line in <dir>/job_error.txt for --summary.
int run_one(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs, const cli::CommonFlags& common,
            std::ostream& out) {
    JobLock lock(job.dir, "job " + job.id);
    const Arm a = job_arm(study, job, jobs, common);
    const fs::path error_file = fs::path(job.dir) / "job_error.txt";
    try {
        const int code = run_arm(a, common, job.dir, out, job.seed.has_value());
        fs::remove(error_file);
        return code;
    } catch (const std::exception& e) {
        util::write_file_atomic(error_file.string(), std::string(e.what()) + "\n");
        throw;
    }
}

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

// Every job stopped here leaves its state on disk (a finished arm's files, or the stopped arm's state).
int stopped(std::ostream& out, const std::string& when);

// The summary of the finished jobs (all of them after a full run): summary.md and the comparison page.
int write_summary(const Study& study, const std::vector<StudyJob>& jobs, bool seeded, const cli::CommonFlags& common,
                  std::ostream& out, std::chrono::steady_clock::time_point t0) {
    std::vector<report::RunData> runs;
    std::vector<std::string> checkpoints;
    std::map<std::string, std::vector<size_t>> by_seed;   // seed id → indices into runs (list order)
    std::vector<std::string> arm_of_run;
    for (const StudyJob& j : jobs) {
        if (!arm_finished(study.arms[j.arm], j.dir)) continue;
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

}  // namespace

int run_study(const Study& study, const cli::CommonFlags& common, std::ostream& out, const StudyFlags& flags) {
    // One scope over every phase (probe, each arm's training and final evaluation, the summary): the first
    // SIGINT / SIGTERM stops the phase it arrives in with its state saved, and no later phase starts.
    train::StopSignalScope signals;
    if (study.arms.empty()) throw std::invalid_argument("study '" + study.title + "': no arms");
    std::set<std::string> names;
    for (const Arm& a : study.arms)
        if (!names.insert(a.name).second) throw std::invalid_argument("study: two arms named '" + a.name + "'");
    const std::vector<uint64_t> seeds = parse_seeds(flags.seeds);
    const std::vector<StudyJob> jobs = study_jobs(study, common.out, seeds);
    const auto t0 = std::chrono::steady_clock::now();

    if (flags.list_jobs) {
        for (const StudyJob& j : jobs)
            if (flags.level < 0 || j.level == flags.level) out << j.id << "\n";
        throw cli::ExitRequest{0};
    }
    if (flags.slurm) {
        const std::string dir = (fs::path(common.out) / "slurm").string();
        const std::string submit = write_slurm_scripts(jobs, dir, study.title, flags.slurm_options,
                                                       rerun_command(own_argv()), fs::current_path().string());
        out << "wrote the Slurm scripts of " << jobs.size() << " jobs to " << dir << "; submit them with:\n  " << submit
            << "\n";
        throw cli::ExitRequest{0};
    }
    if (!flags.job.empty()) {
        const StudyJob& job = find_job(jobs, flags.job);
        std::vector<std::string> waiting;
        for (const std::string& n : job.needs)
            if (!arm_finished(study.arms[find_job(jobs, n).arm], find_job(jobs, n).dir)) waiting.push_back(n);
        if (!waiting.empty()) {
            std::string list;
            for (const std::string& w : waiting) list += (list.empty() ? "" : ", ") + w;
            throw std::runtime_error("job " + job.id + " needs " + list + " finished first (not finished yet)");
        }
        cli::CommonFlags c = common;
        c.resume = true;   // a job runs again as often as it is started, and continues where it stopped
        Study one{study.title, {job_arm(study, job, jobs, common)}, study.checkpoint, study.attack};
        if (const int code = confirm_training(one, c, flags, any_started({job.dir}), out, std::cin, isatty(0) == 1);
            code >= 0)
            throw cli::ExitRequest{code};
        out << "== job " << job.index << " of " << jobs.size() << ": ";
        throw cli::ExitRequest{run_one(study, job, jobs, c, out)};
    }
    if (flags.summary) {
        std::vector<std::string> unfinished;
        for (const StudyJob& j : jobs) {
            const JobState st = job_state(study, j);
            if (st == JobState::Finished) continue;
            std::string line = j.id + ": " + job_state_name(st);
            if (st == JobState::Failed) line += ": " + util::read_file_text((fs::path(j.dir) / "job_error.txt").string());
            while (!line.empty() && line.back() == '\n') line.pop_back();
            unfinished.push_back(line);
        }
        out << "== " << study.title << ": " << jobs.size() - unfinished.size() << " of " << jobs.size()
            << " jobs finished in " << common.out << "\n";
        for (const std::string& u : unfinished) out << "  " << u << "\n";
        const int code = write_summary(study, jobs, !seeds.empty(), common, out, t0);
        if (code > 0) return code;
        if (code < 0) out << "nothing to summarise yet\n";
        if (!unfinished.empty()) {
            out << unfinished.size() << " jobs not finished: run them (--job ID, or the whole study with --resume), "
                << "then --summary again\n";
            throw cli::ExitRequest{kIncompleteExit};
        }
        return 0;
    }

    out << "== " << study.title << ": " << jobs.size() << " runs into " << common.out << "\n";
    std::vector<std::string> dirs;
    for (const StudyJob& j : jobs) dirs.push_back(j.dir);
    if (const int code = confirm_training(study, common, flags, any_started(dirs), out, std::cin, isatty(0) == 1);
        code >= 0)
        return code;
    for (const StudyJob& j : jobs) {
        out << "== run " << j.index + 1 << "/" << jobs.size() << ": ";
        if (const int code = run_one(study, j, jobs, common, out); code != 0) return code;
        if (train::stop_requested()) return stopped(out, "after " + j.id + " finished");
    }
    return write_summary(study, jobs, !seeds.empty(), common, out, t0);
}

namespace {
int stopped(std::ostream& out, const std::string& when) {
    out << "stopped by " << (train::stop_requested() == SIGINT ? "SIGINT" : "SIGTERM") << " " << when
        << "; every finished arm is saved — continue with --resume\n";
    return train::stop_exit_code();
}
}  // namespace

}  // namespace cw::study
