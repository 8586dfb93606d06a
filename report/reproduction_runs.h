#pragma once
// The reproduction study's committed results (scripts/reproduction.sh), read back for docs/reproduction.md:
// results/<dataset>/<arm>/seed<k>/ holds one run's evaluations (eval_<checkpoint>/results.json,
// autoattack/results.json), its selection.json, cpu.txt and, where a machine was lost, the retrained hot start its
// fine-tunes started from (hot_start/, hot_start.txt). Only these small files are read, never checkpoints, so the page
// can be rebuilt anywhere without training.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cw::report::reproduction {

// One evaluation of one checkpoint of one run, reduced to the numbers the claims use (fractions in [0, 1]).
struct Eval {
    std::vector<double> per_class;
    std::vector<double> boundary;  // per-class boundary error (robust evaluations only)
    double overall = NAN;
};

struct Run {
    std::map<std::string, std::map<std::string, Eval>> evals;  // checkpoint -> evaluation name -> numbers
    // From selection.json, for runs that average with FAWA: how many epochs it accepted. FAWA averages only epochs
    // whose worst validation class reaches its threshold; none accepted means no averaged model (no ema_last).
    std::optional<int> fawa_accepted;
    std::string cpu;  // the first line of cpu.txt: the processor that trained the run ("" where not recorded)
    std::optional<double> eps;  // the training radius, from job.json (none without one)
    // A hot start retrained on another CPU after its machine was lost (scripts/reproduction.sh): seed<k>/hot_start/,
    // the model the fine-tunes of this seed started from where it differs from the committed run.
    std::shared_ptr<const Run> hot_start;
    bool from_retrained_hot_start = false;  // a fine-tune that started from that model (its hot_start.txt)
    // The model's identity: a retrained hot start's checksum (checkpoint.sha256), and the checksum a fine-tune's
    // hot_start.txt names ("checkpoint sha256: ..."); "" where not recorded (records written before checksums).
    std::string checkpoint_sha256;
    std::string hot_start_sha256;
    std::string autoattack_device;  // the device autoattack/results.json was computed on ("cpu", "cuda"; "" without one)
    // The model AutoAttack attacked where it is not this run's: the seed retrained on another machine after the run's
    // checkpoint was lost (autoattack/model/, scripts/reproduction.sh AA_RETRAIN=1); null where it attacked the run.
    std::shared_ptr<const Run> autoattack_model;
};
using Arm = std::map<int, Run>;  // seed -> run

// results/<dataset>/: every arm's runs by seed (runs without an evaluation left out; an empty map without the
// folder). `classes` is set from the first results.json; a file naming other classes is an error.
std::map<std::string, Arm> load_arms(const std::filesystem::path& dataset_dir, std::vector<std::string>& classes);

// Smallest and largest element, leaving out NaN (a class without test samples); NaN when none is left.
double min_of(const std::vector<double>& v);
double max_of(const std::vector<double>& v);
// The index of the lowest per-class value (the first on ties), NaN left out; per_class.size() when none is left.
size_t worst_class(const std::vector<double>& per_class);
// classes[k], or "—" past the end (no class left).
std::string class_name(const std::vector<std::string>& classes, size_t k);

// The per-epoch test PGD accuracy of a run, in percent, epoch by epoch (history.csv's "test_pgd<K>" rows); empty
// without the file. A history without the columns eval and overall is an error naming the file.
std::vector<double> per_epoch_test_pgd(const std::filesystem::path& history);

// A metric of one run at one checkpoint, in percent; NaN where the evaluation is missing. Names: "clean",
// "clean worst", "clean spread", "PGD-20", "PGD-20 worst", "PGD-20 spread", "boundary worst".
double metric(const Run& run, const std::string& checkpoint, const std::string& name);

// The arm a fine-tune starts from (its hot start): PGD-AT for FRL, TRADES for FAAL; "" for the others.
std::string hot_start_arm_of(const std::string& arm);

// The base run a seed of the arm is compared with. A fine-tune that started from a retrained hot start is compared
// with that model, not with the committed run of its seed (another CPU's model); two runs of which only one started
// from it are not a pair (nullptr). Throws where the records contradict each other (a missing or replaced model).
const Run* partner(const std::string& arm_name, const Run& run, const std::string& base_name, const Run& base, int seed);

// The arm's seeds, comma-separated; with `only`, those whose run it accepts.
std::string seeds_of(const Arm& arm, bool (*only)(const Run&) = nullptr);
// The seeds of an arm whose FAWA accepted no epoch, so they have no averaged model ("" when there are none).
std::string seeds_without_average(const Arm& arm);
// "seed 2" or "seeds 1,3".
std::string seeds_text(const std::string& list);

}  // namespace cw::report::reproduction
