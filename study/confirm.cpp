#include "study/confirm.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <string>
#include <unistd.h>

#include "engine/device.h"
#include "study/study.h"
#include "train/stop_signal.h"
#include "util/format.h"

namespace cw::study {

namespace fs = std::filesystem;

namespace {
std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}
}  // namespace

double estimate_training_seconds(const Study& study, const cli::CommonFlags& common, std::ostream& out) {
    std::vector<const Arm*> training;   // work arms (study/work.h) are not timed: they are not training runs
    for (const Arm& a : study.arms)
        if (!a.is_work()) training.push_back(&a);
    if (training.empty()) return 0;
    const auto probe_arm = std::find_if(training.begin(), training.end(),
                                        [](const Arm* a) { return a->job.method != "natural"; });
    const Arm& probe = probe_arm == training.end() ? *training.front() : **probe_arm;
    // Three optimiser steps in a scratch folder; the first pays for allocation and caches, so the estimate uses
    // the time between the ends of steps 1 and 3.
    // Per process: jobs of one study started side by side (GNU parallel) probe at the same time.
    const fs::path scratch = fs::path(common.out) / (".estimate." + std::to_string(getpid()));
    train::JobConfig job = probe.job;
    job.common = common;
    job.common.out = scratch.string();
    job.common.resume = false;
    job.init.clear();   // a fine-tuning arm's starting weights may not exist yet; the step costs the same
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
    // A signal during the probe stops the probe's trainer like any other; the caller sees it (stop_requested).
    if (ends.size() < 3 || train::stop_requested()) return 0;
    const double per_step = std::chrono::duration<double>(ends[2] - ends[0]).count() / 2;
    if (batches <= 0) return 0;
    double total = 0;
    const double adversarial_steps = probe.job.method_options.steps + 1;
    for (const Arm* a : training) {
        const double cost = a->job.method == "natural" ? 1.0 / adversarial_steps : 1.0;
        total += per_step * cost * batches * static_cast<double>(a->job.common.epochs);
    }
    out << "estimate: one " << probe.job.method << " step takes " << std::fixed << std::setprecision(2) << per_step
        << " s here, so training the " << training.size() << " runs (" << std::setprecision(0) << batches
        << " batches per epoch) takes about " << util::duration_estimate(total) << " on this machine, evaluations on top.\n";
    return total;
}

bool any_started(const std::vector<std::string>& dirs) {
    return std::any_of(dirs.begin(), dirs.end(),
                       [](const std::string& d) { return fs::exists(fs::path(d) / "job.json"); });
}

int confirm_training(const Study& study, const cli::CommonFlags& common, const StudyFlags& flags, bool started,
                     std::ostream& out, std::istream& in, bool in_is_terminal) {
    if (common.quick || (common.resume && started) || !resolve_device(common.device, false).is_cpu()) return -1;
    if (std::all_of(study.arms.begin(), study.arms.end(), [](const Arm& a) { return a.is_work(); })) return -1;
    out << "estimate: timing a few training steps on this CPU (--quick or a GPU skip this)\n" << std::flush;
    const double seconds = estimate_training_seconds(study, common, out);
    if (train::stop_requested()) {
        out << "stopped by a signal during the estimate; nothing has started\n";
        return train::stop_exit_code();
    }
    // A CPU-sized preset was chosen knowingly, its length stated in --help: the estimate is said, nothing asked.
    if (seconds <= flags.ask_above_s || !common.preset.empty()) return -1;
    out << "That is more than " << util::duration_estimate(flags.ask_above_s) << " (--ask-above) on this CPU. Ways forward:\n";
    for (const auto& [flag, what] : common.offered_presets)
        out << "  " << std::left << std::setw(12) << flag << what << "\n";
    out << "  " << std::setw(12) << "a GPU" << "the paper-scale run on a CUDA device (--device cuda; docs/cluster.md spreads it over many)\n"
        << "  " << std::setw(12) << "--yes" << "train here anyway\n";
    if (flags.yes) {
        out << "--yes: training on this CPU\n";
        return -1;
    }
    if (!in_is_terminal) {
        out << "not started: no terminal to ask and no --yes (exit code " << kNotConfirmedExit << ")\n";
        return kNotConfirmedExit;
    }
    out << "Train on this CPU for about " << util::duration_estimate(seconds) << "? [y/N] " << std::flush;
    std::string answer;
    std::getline(in, answer);
    if (train::stop_requested()) {
        out << "\nstopped by a signal at the question; nothing has started\n";
        return train::stop_exit_code();
    }
    answer = lower(answer);
    if (answer == "y" || answer == "yes") return -1;
    out << "not started (answer '" << answer << "'); rerun with --quick, on a GPU, or with --yes\n";
    return kNotConfirmedExit;   // not 0: a binary's analysis after the arms must not run on nothing
}

}  // namespace cw::study
