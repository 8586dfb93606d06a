#include "study/study.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <stdexcept>
#include <unistd.h>

#include "jobs/job_checks.h"
#include "jobs/registry.h"
#include "study/comparison_summary.h"
#include "study/job_run.h"
#include "study/jobs.h"
#include "study/slurm.h"
#include "train/stop_signal.h"
#include "util/atomic_file.h"
#include "util/flags.h"
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

void add_methods_flag(cli::FlagSet& app, std::string& methods) {
    app.remove("--method");
    app.option("--methods", methods, "the methods compared, in order (each trains and is audited in <out>/<method>)")
        .show_default();
}

std::string data_and_model(const train::JobConfig& base) {
    return base.data.dataset + ", " + (base.arch.empty() ? train::default_arch(base.data.dataset) : base.arch);
}

bool arm_finished(const Arm& a, const std::string& arm_dir) {
    if (a.is_work()) return a.work.finished(arm_dir);
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

namespace {

// The job an arm runs in `dir` under this command's common flags.
train::JobConfig arm_job(const Arm& a, const cli::CommonFlags& common, const std::string& dir, bool own_seed) {
    train::JobConfig job = a.job;
    job.common = common;
    job.common.out = dir;
    job.common.epochs = a.job.common.epochs;   // an arm may train for fewer epochs (FRL's fine-tuning)
    if (own_seed) job.common.seed = a.job.common.seed;
    return job;
}

// A finished arm is used without running its job (skipped by --resume, gathered by --summary), so run_job's own
// check does not run: a command with another --lr would otherwise report the old run's numbers as its own. The
// training images need the data, and are left to run_job.
void check_finished_arm(const Arm& a, const train::JobConfig& job, const std::string& dir, const std::string& flag) {
    const fs::path job_file = fs::path(dir) / "job.json";
    if (a.is_work() || !fs::exists(job_file)) return;
    std::vector<std::string> keys = train::training_keys();
    keys.erase(std::remove(keys.begin(), keys.end(), "train_images"), keys.end());
    train::check_same_run(job_file.string(), train::training_settings(job), keys, flag);
}

}  // namespace

int run_arm(const Arm& a, const cli::CommonFlags& common, const std::string& dir, std::ostream& out, bool own_seed) {
    train::JobConfig job = arm_job(a, common, dir, own_seed);
    if (common.resume && arm_finished(a, dir)) {
        check_finished_arm(a, job, dir, "--resume");
        out << a.name << " finished before; skipped (" << dir << ")\n";
        return 0;
    }
    out << a.name << " (" << a.job.method << ") into " << dir << std::endl;
    return train::run_job(job, out);
}

namespace {

// The finished jobs' summary: the study's own, or the training arms side by side.
int write_summary(const Study& study, const std::vector<StudyJob>& jobs, bool seeded, const cli::CommonFlags& common,
                  std::ostream& out, std::chrono::steady_clock::time_point t0) {
    if (!study.summary) return write_comparison_summary(study, jobs, seeded, common, out, t0);
    std::vector<StudyJob> finished;
    for (const StudyJob& j : jobs)
        if (arm_finished(study.arms[j.arm], j.dir)) finished.push_back(j);
    if (train::stop_requested()) return stopped(out, "before the summary");
    fs::create_directories(common.out);
    return study.summary(finished, out);
}

// --summary: what has finished, gathered; every other job listed with its state.
int summary_only(const Study& study, const std::vector<StudyJob>& jobs, bool seeded, const cli::CommonFlags& common,
                 std::ostream& out, std::chrono::steady_clock::time_point t0) {
    std::vector<std::string> unfinished;
    for (const StudyJob& j : jobs) {
        const JobState st = job_state(study, j);
        if (st == JobState::Finished) {
            // The arm as its job ran it (its seed, the input it fine-tuned), as run_one builds it.
            const Arm a = job_arm(study, j, jobs, common);
            check_finished_arm(a, arm_job(a, common, j.dir, j.seed.has_value()), j.dir, "--summary");
            continue;
        }
        std::string line = j.id + ": " + job_state_name(st);
        if (st == JobState::Failed) line += ": " + util::read_file_text((fs::path(j.dir) / "job_error.txt").string());
        while (!line.empty() && line.back() == '\n') line.pop_back();
        unfinished.push_back(line);
    }
    out << "== " << study.title << ": " << jobs.size() - unfinished.size() << " of " << jobs.size()
        << " jobs finished in " << common.out << "\n";
    for (const std::string& u : unfinished) out << "  " << u << "\n";
    const int code = write_summary(study, jobs, seeded, common, out, t0);
    if (code > 0) return code;
    if (code < 0) out << "nothing to summarise yet\n";
    if (!unfinished.empty()) {
        out << unfinished.size() << " jobs not finished: run them (--job ID, or the whole study with --resume), "
            << "then --summary again\n";
        throw cli::ExitRequest{kIncompleteExit};
    }
    return 0;
}

// --job ID: the one job, refused at once while its inputs are unfinished. Ends the program.
[[noreturn]] void one_job(const Study& study, const std::vector<StudyJob>& jobs, const cli::CommonFlags& common,
                          const StudyFlags& flags, std::ostream& out) {
    const StudyJob& job = find_job(jobs, flags.job);
    require_inputs(study, job, jobs);
    cli::CommonFlags c = common;
    c.resume = true;   // a job runs again as often as it is started, and continues where it stopped
    Study one = study;
    one.arms = {job_arm(study, job, jobs, common)};
    int code = -1;
    try {   // the probe of the CPU estimate trains the job's arm: its failure (no data here) is the job's
        code = confirm_training(one, c, flags, any_started({job.dir}), out, std::cin, isatty(0) == 1);
    } catch (const std::exception& e) {
        record_failure(job.dir, e.what());
        throw;
    }
    if (code >= 0) throw cli::ExitRequest{code};
    out << "== job " << job.index << " of " << jobs.size() << ": ";
    throw cli::ExitRequest{run_one(study, job, jobs, c, out)};
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
    if (!flags.job.empty()) one_job(study, jobs, common, flags, out);
    if (flags.summary) return summary_only(study, jobs, !seeds.empty(), common, out, t0);

    out << "== " << study.title << ": " << jobs.size() << " runs into " << common.out << "\n";
    std::vector<std::string> dirs;
    for (const StudyJob& j : jobs) dirs.push_back(j.dir);
    if (const int code = confirm_training(study, common, flags, any_started(dirs), out, std::cin, isatty(0) == 1);
        code >= 0)
        return code;
    std::vector<std::string> failed;
    for (const StudyJob& j : jobs) {
        out << "== run " << j.index + 1 << "/" << jobs.size() << ": ";
        int code = 0;
        try {
            if (study.keep_going) require_inputs(study, j, jobs);   // in order, only a failed input is unfinished
            code = run_one(study, j, jobs, common, out);
        } catch (const std::exception& e) {
            if (!study.keep_going) throw;
            out << "job " << j.id << " failed: " << e.what() << "\n";
            failed.push_back(j.id);
            continue;
        }
        if (code != 0) return code;
        if (train::stop_requested()) return stopped(out, "after " + j.id + " finished");
    }
    const int code = write_summary(study, jobs, !seeds.empty(), common, out, t0);
    if (code > 0 || failed.empty()) return code < 0 ? 0 : code;
    out << failed.size() << " of " << jobs.size() << " jobs failed (" << util::join_list(failed) << "); their errors are in "
        << "<job>/job_error.txt and --summary lists them\n";
    return 1;
}

}  // namespace cw::study
