#include "eval/corruption_eval.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "attacks/attack.h"
#include "attacks/oracle.h"
#include "datasets/batch.h"
#include "datasets/corruptions.h"
#include "datasets/loaders.h"
#include "datasets/paths.h"
#include "util/atomic_file.h"
#include "eval/corruption_state.h"
#include "eval/fingerprint_difference.h"
#include "eval/evaluator.h"
#include "eval/class_metrics.h"
#include "util/format.h"

namespace cw::eval {

namespace {
using Clock = std::chrono::steady_clock;

uint64_t splitmix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
// Severities and corruptions draw independent fields, as CIFAR-10-C's unseeded script did.
uint64_t field_seed(uint64_t seed, const std::string& name, int severity) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
    return splitmix(splitmix(seed ^ h) + static_cast<uint64_t>(severity));
}

class Run {
public:
    Run(nn::Module& model, const data::Dataset& test, const std::vector<int64_t>& indices,
        const CorruptionEvalOptions& opt)
        : model_(model), test_(test), indices_(indices), opt_(opt), data_dir_(data::resolve_data_dir(opt.data_dir)) {}
    CorruptionOutcome go();

private:
    nlohmann::json fingerprint() const;
    void load_or_start();
    void save() const;
    std::vector<int32_t> predict(const data::Dataset& d, const std::vector<int64_t>& idx);
    bool whole_test_set() const;
    std::string official_file(const std::string& name, std::string& why_not) const;
    CorruptionRun evaluate(const std::string& name);
    void log(const std::string& s) const {
        if (opt_.log) *opt_.log << s << std::endl;
    }
    std::string path(const std::string& f) const { return (std::filesystem::path(opt_.out_dir) / f).string(); }

    nn::Module& model_;
    const data::Dataset& test_;
    const std::vector<int64_t>& indices_;
    const CorruptionEvalOptions& opt_;
    const std::string data_dir_;
    std::vector<std::string> names_;
    CorruptionState state_;
    data::Dataset subset_;     // the evaluated images, in order (the generated corruptions' input)
};

nlohmann::json Run::fingerprint() const {
    return {{"severities", opt_.severities}, {"corruption_seed", opt_.corruption_seed},
            {"classes", opt_.info.classes}, {"num_examples", indices_.size()}, {"run", opt_.run_key}};
}

void Run::load_or_start() {
    state_ = CorruptionState{};
    state_.fingerprint = fingerprint();
    const std::string file = opt_.out_dir.empty() ? "" : path("corruption_state.json");
    if (!opt_.resume || file.empty() || !std::filesystem::exists(file)) return;
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(util::read_file_text(file));
    } catch (const nlohmann::json::parse_error&) {
        throw std::runtime_error(file + ": malformed JSON; remove it or run without --resume");
    }
    CorruptionState saved = corruption_state_from_json(j, file);
    if (saved.fingerprint != state_.fingerprint || saved.index != indices_) {
        const std::string what = saved.fingerprint != state_.fingerprint
                                     ? fingerprint_difference(saved.fingerprint, state_.fingerprint)
                                     : "the test images it drew differ";
        throw std::runtime_error(file + ": written by a different corruption evaluation (" + what +
                                 "); remove it or run without --resume");
    }
    // Class indices end up indexing the confusion matrices: a damaged file must not reach them.
    const int32_t C = static_cast<int32_t>(opt_.info.classes.size());
    bool ok = class_indices_in_range(saved.label, C) && class_indices_in_range(saved.clean_pred, C);
    for (const CorruptionRun& r : saved.done) {
        ok = ok && r.severities == opt_.severities;
        for (const auto& p : r.pred) ok = ok && class_indices_in_range(p, C);
    }
    if (!ok)
        throw std::runtime_error(file + ": malformed corruption evaluation state: a class index outside the " +
                                 std::to_string(C) + " classes, or a corruption's severities not this evaluation's; "
                                 "remove it or run without --resume");
    state_ = std::move(saved);
    log("resuming from " + file + ": " + std::to_string(state_.done.size()) + " corruptions already done");
}

void Run::save() const {
    if (!opt_.out_dir.empty())
        util::write_file_atomic(path("corruption_state.json"), corruption_state_to_json(state_).dump());
}

std::vector<int32_t> Run::predict(const data::Dataset& d, const std::vector<int64_t>& idx) {
    const Device device = model_.device();
    attacks::ModeScope eval(model_, attacks::ModelMode::Eval);
    attacks::ModelOracle oracle(model_, device);
    std::vector<int32_t> out;
    const int64_t n = static_cast<int64_t>(idx.size()), bs = std::max<int64_t>(1, opt_.batch_size);
    for (int64_t b = 0; b < n; b += bs) {
        const data::Batch batch =
            data::make_batch(d, std::vector<int64_t>(idx.begin() + b, idx.begin() + std::min(n, b + bs)), device);
        const std::vector<int32_t> p = oracle.predict(batch.images);
        out.insert(out.end(), p.begin(), p.end());
    }
    return out;
}

bool Run::whole_test_set() const {
    if (static_cast<int64_t>(indices_.size()) != test_.size()) return false;
    for (size_t i = 0; i < indices_.size(); ++i)
        if (indices_[i] != static_cast<int64_t>(i)) return false;
    return true;
}

// The CIFAR-10-C file for `name`, or "" with the reason in why_not.
std::string Run::official_file(const std::string& name, std::string& why_not) const {
    if (opt_.info.dataset != "cifar10") {
        why_not = "dataset " + opt_.info.dataset + " is not cifar10";
        return "";
    }
    if (!whole_test_set()) {
        why_not = "not the whole CIFAR-10 test set in order";
        return "";
    }
    const std::string file = data::cifar10c_file(data_dir_, name);
    if (file.empty()) why_not = "no CIFAR-10-C/" + name + ".npy with labels.npy under " + data_dir_;
    return file;
}

CorruptionRun Run::evaluate(const std::string& name) {
    CorruptionRun run;
    run.name = name;
    run.severities = opt_.severities;
    std::string why_not;
    run.file = official_file(name, why_not);
    std::vector<int64_t> all(indices_.size());
    std::iota(all.begin(), all.end(), 0);
    for (size_t k = 0; k < run.severities.size(); ++k) {
        const int s = run.severities[k];
        const auto t0 = Clock::now();
        data::Dataset images;
        if (!run.file.empty()) {
            images = data::load_cifar10c(data_dir_, name, s);
            if (images.size() != test_.size() || images.labels != test_.labels) {
                // Not the test set we evaluate (another copy, cut files): regenerate rather than mix.
                if (k > 0)
                    throw std::runtime_error(run.file + ": severity " + std::to_string(s) +
                                             " does not line up with the test set but earlier severities did");
                why_not = run.file + " does not line up with the test set (" + std::to_string(images.size()) +
                          " images per severity for " + std::to_string(test_.size()) + ", or other labels)";
                run.file.clear();
            }
        }
        run.source = run.file.empty() ? "generated" : "cifar10-c";
        if (run.file.empty()) {
            run.seed = opt_.corruption_seed;
            images = data::corrupted(subset_, name, s, field_seed(opt_.corruption_seed, name, s));
        }
        run.pred.push_back(predict(images, all));
        run.time_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::ostringstream os;
    os << "corruption " << name << " ("
       << (run.source == "cifar10-c" ? "CIFAR-10-C file " + run.file : "generated, seed " + std::to_string(run.seed) +
                                                                          (why_not.empty() ? "" : ": " + why_not))
       << "):";
    std::vector<int32_t> pooled_label, pooled_pred;
    for (size_t k = 0; k < run.severities.size(); ++k) {
        int64_t ok = 0;
        for (size_t i = 0; i < state_.label.size(); ++i) ok += run.pred[k][i] == state_.label[i];
        os << " s" << run.severities[k] << " " << util::percent(state_.label.empty() ? 0 : double(ok) / state_.label.size(), 2) << "%";
        pooled_label.insert(pooled_label.end(), state_.label.begin(), state_.label.end());
        pooled_pred.insert(pooled_pred.end(), run.pred[k].begin(), run.pred[k].end());
    }
    const auto m = fairness::class_metrics(pooled_label, pooled_pred, static_cast<int64_t>(opt_.info.classes.size()));
    double time = 0;
    for (double t : run.time_s) time += t;
    os << "; pooled " << util::percent(m.accuracy, 2) << "%";
    if (m.worst_class >= 0)
        os << ", worst class " << opt_.info.classes[m.worst_class] << " " << util::percent(m.per_class_accuracy[m.worst_class], 2) << "%";
    os << " (" << std::fixed << std::setprecision(1) << time << " s)";
    log(os.str());
    return run;
}

CorruptionOutcome Run::go() {
    if (opt_.info.classes.empty()) throw std::invalid_argument("corruption evaluation: no class names (info.classes)");
    if (indices_.empty()) throw std::invalid_argument("corruption evaluation: no test images to evaluate");
    if (opt_.severities.empty()) throw std::invalid_argument("corruption evaluation: no severities");
    names_ = opt_.corruptions.empty() ? data::corruption_names() : opt_.corruptions;
    for (const std::string& n : names_)
        for (int s : opt_.severities) data::check_corruption(n, s);
    subset_ = data::take(test_, indices_);
    for (int32_t y : subset_.labels)
        if (y < 0 || y >= static_cast<int32_t>(opt_.info.classes.size()))
            throw std::invalid_argument("corruption evaluation: label " + std::to_string(y) + " is not one of the " +
                                        std::to_string(opt_.info.classes.size()) + " classes");

    load_or_start();
    if (state_.index.empty()) {
        state_.index = indices_;
        state_.label = subset_.labels;
        std::vector<int64_t> all(indices_.size());
        std::iota(all.begin(), all.end(), 0);
        state_.clean_pred = predict(subset_, all);
        save();
    }
    int64_t ok = 0;
    for (size_t i = 0; i < state_.label.size(); ++i) ok += state_.clean_pred[i] == state_.label[i];
    log("clean accuracy: " + util::percent(double(ok) / state_.label.size(), 2) + "% (" + std::to_string(state_.label.size()) +
        " samples); " + std::to_string(names_.size()) + " corruptions x " + std::to_string(opt_.severities.size()) +
        " severities");

    int64_t this_call = 0;
    for (const std::string& name : names_) {
        if (state_.find(name)) continue;
        state_.done.push_back(evaluate(name));
        save();
        if (opt_.stop_after_corruptions >= 0 && ++this_call >= opt_.stop_after_corruptions)
            throw EvalInterrupted("corruption evaluation stopped after " + std::to_string(this_call) +
                                  " corruptions (as asked)");
        if (opt_.should_stop && opt_.should_stop())
            throw EvalInterrupted("corruption evaluation stopped by a signal after " + name + "; state saved");
    }

    CorruptionOutcome out;
    for (const std::string& name : names_) out.runs.push_back(*state_.find(name));
    out.records = corruption_records(state_.index, state_.label, state_.clean_pred, out.runs);
    out.results = corruption_results_json(opt_.info, state_.index, state_.label, state_.clean_pred, out.runs);
    for (const auto& e : out.results.at("evaluations"))
        if (e.at("name") == all_corruptions_name()) {
            const int worst = e.at("worst_class").get<int>();
            log("all corruptions pooled: " + util::percent(e.at("accuracy").get<double>(), 2) + "%" +
                (worst >= 0 ? ", worst class " + opt_.info.classes[worst] + " " +
                                  util::percent(e.at("per_class_accuracy").at(worst).get<double>(), 2) + "%"
                            : std::string()));
        }
    if (!opt_.out_dir.empty()) {
        util::write_file_atomic(path("results.json"), out.results.dump(2) + "\n");
        util::write_file_atomic(path("records.csv"), records_csv(out.records));
    }
    return out;
}
}  // namespace

CorruptionEvalOptions corruption_options_like(const EvalOptions& evaluation, const std::string& out_dir) {
    CorruptionEvalOptions co;
    co.info = evaluation.info;
    co.out_dir = out_dir;
    co.resume = evaluation.resume;
    co.log = evaluation.log;
    co.should_stop = evaluation.should_stop;
    co.run_key = evaluation.run_key;
    return co;
}

CorruptionOutcome evaluate_corruptions(nn::Module& model, const data::Dataset& test,
                                       const std::vector<int64_t>& indices, const CorruptionEvalOptions& options) {
    Run run(model, test, indices, options);
    return run.go();
}

}  // namespace cw::eval
