#include "jobs/job_checks.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/registry.h"
#include "train/trainer.h"
#include "util/atomic_file.h"
#include "util/format.h"
#include "util/split_list.h"

namespace cw::train {

// The settings that shape training must be the ones the run started with (the state carries the weights, not the
// recipe: a new --lr would silently train the rest of the run differently). Checked against the folder's job.json
// before it is rewritten, so a refused resume leaves the record as it was. What may differ: the epochs (a run can be
// extended), the device, the test images evaluated, the audit interval, the command line and the CPU convolution
// setting (both recorded).
const std::vector<std::string>& training_keys() {
    static const std::vector<std::string> keys = {"dataset",    "arch",       "method",    "eps",  "recipe",
                                                  "batch_size", "train_images", "train_file", "val_split",
                                                  "seed",       "ema",        "init",      "precision"};
    return keys;
}

void check_same_run(const std::string& job_file, const nlohmann::json& now, const std::vector<std::string>& keys,
                    const std::string& flag) {
    nlohmann::json before;
    try {
        before = nlohmann::json::parse(util::read_file_text(job_file));
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(flag + ": " + job_file + ": not a job record (" + util::one_line(e.what()) + ")");
    }
    for (const std::string& key : keys) {
        const bool had = before.contains(key), has = now.contains(key);
        if (!had && !has) continue;
        if (had && has && before[key] == now[key]) continue;
        const auto shown = [&](const nlohmann::json& j) { return !j.contains(key) ? std::string("(none)")
                                                                 : j[key].is_string() ? "'" + j[key].get<std::string>() + "'"
                                                                                      : j[key].dump(); };
        throw std::invalid_argument(flag + ": " + job_file + " was started with " + key + " " + shown(before) +
                                    ", this command gives " + shown(now) + "; a run continues with the settings it "
                                    "started with (another --out starts a new one)");
    }
}

// The checkpoints --final-checkpoints names, checked before training: a typo would otherwise be found after it.
std::vector<std::string> final_checkpoint_list(const std::string& list, const std::string& ema) {
    const std::vector<std::string>& known = checkpoint_names();
    const std::vector<std::string> names = util::split_list(list);
    for (const std::string& name : names) {
        if (std::find(known.begin(), known.end(), name) == known.end()) {
            throw std::invalid_argument("--final-checkpoints: unknown checkpoint '" + name + "' (known: " +
                                        util::join_list(known) + ")");
        }
        if (name.rfind("ema_", 0) == 0 && ema == "off")
            throw std::invalid_argument("--final-checkpoints: " + name + " is an averaged model and needs --ema (epoch, "
                                        "step or fawa)");
    }
    return names;
}

void note_late_averaging(const std::vector<std::string>& checkpoints, int64_t ema_start, int64_t epochs,
                         std::ostream& out) {
    // Said now rather than at the end: a study's averaged arm then runs as its plain twin (compared by its plain model).
    const bool averaged_asked = std::any_of(checkpoints.begin(), checkpoints.end(),
                                            [](const std::string& c) { return c.rfind("ema_", 0) == 0; });
    if (averaged_asked && ema_start >= epochs)
        out << "note: --ema-start " << ema_start << " (0-based) starts after the run's " << epochs
            << (epochs == 1 ? " epoch" : " epochs") << ": no averaged model will be written, and the ema_ checkpoints "
            << "will be skipped\n";
}

void check_fine_tune_start(const std::string& method, const std::string& init, bool from_scratch) {
    if (method.rfind("faal", 0) != 0 || !init.empty() || from_scratch) return;
    throw std::invalid_argument("--init: " + method + " fine-tunes a trained robust model; give its checkpoint with "
                                "--init (or --faal-from-scratch to start from random weights)");
}

FinalAttacks final_attacks(const std::string& names, float eps, std::ostream& log) {
    attacks::AttackOptions ao;
    ao.eps = eps;
    ao.alpha = eps / 4;
    FinalAttacks a;
    for (const auto& name : util::split_list(names)) {
        if (name == "clean") continue;
        try {
            a.owned.push_back(attacks::make_attack(name, ao));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--final-attacks: ") + e.what());
        }
        a.owned.back()->set_log(&log);
        a.list.push_back(a.owned.back().get());
    }
    return a;
}

}  // namespace cw::train
