#include "eval/evaluator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "util/atomic_file.h"
#include "attacks/checks.h"
#include "eval/class_logits.h"
#include "eval/class_table.h"
#include "attacks/ensemble.h"
#include "eval/eval_state.h"
#include "eval/fingerprint_difference.h"
#include "engine/layout_copy.h"
#include "engine/ops.h"
#include "util/format.h"

namespace cw::eval {

using attacks::Attack;
using attacks::AttackResult;
using attacks::Ensemble;
using attacks::ModeScope;
using attacks::ModelMode;
using attacks::ModelOracle;
using attacks::StageResult;
using attacks::from_tensor;
using attacks::model_is_deterministic;

BatchSource batches_from(std::vector<EvalBatch> batches) {
    auto shared = std::make_shared<std::vector<EvalBatch>>(std::move(batches));
    return {static_cast<int64_t>(shared->size()), [shared](int64_t b) { return shared->at(static_cast<size_t>(b)); }};
}

namespace {
using Clock = std::chrono::steady_clock;

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    return h;
}
uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
// The seed of one (attack, batch) step: independent of which other attacks run and of interruptions.
uint64_t step_seed(uint64_t seed, const std::string& attack, int64_t batch) {
    return mix(mix(seed, fnv1a(attack)), static_cast<uint64_t>(batch));
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// One eval-mode forward pass, on the host: predictions and logits [n, C].
struct Forward {
    std::vector<int32_t> pred;
    std::vector<float> logits;
};

class Run {
public:
    Run(nn::Module& model, const BatchSource& data, const std::vector<Attack*>& attacks, const EvalOptions& opt)
        : model_(model), data_(data), attacks_(attacks), opt_(opt) {}

    EvalOutcome go();

private:
    nlohmann::json fingerprint() const;
    void load_or_start();
    void check_resumable(const EvalState& saved, const std::string& file) const;
    void save();
    void step_done();                       // counts a step, saves, honours stop_after_steps
    bool skip() { return step_++ < state_.steps_done; }
    EvalBatch fetch(int64_t b) const;
    int64_t classes() const { return static_cast<int64_t>(opt_.info.classes.size()); }
    std::vector<std::vector<double>> fresh_logit_sums() const;
    Forward eval_forward(const Tensor& x);
    void add_logits(size_t evaluation, const std::vector<float>& logits, int64_t offset);
    void clean_pass();
    void init_attack_records();
    void plain_attack(size_t a);
    void ensemble_attack(size_t a, Ensemble& ens);
    double accuracy_of(const std::vector<int32_t>& pred) const;
    std::string path(const std::string& file) const { return (std::filesystem::path(opt_.out_dir) / file).string(); }
    void log_line(const std::string& s) const {
        if (opt_.log) *opt_.log << s << std::endl;
    }

    nn::Module& model_;
    const BatchSource& data_;
    const std::vector<Attack*>& attacks_;
    const EvalOptions& opt_;
    EvalState state_;
    int64_t step_ = 0, steps_this_call_ = 0;
};

nlohmann::json Run::fingerprint() const {
    nlohmann::json attacks = nlohmann::json::array();
    for (const Attack* a : attacks_) attacks.push_back({{"name", a->name()}, {"config", a->config()}});
    return {{"seed", opt_.info.seed}, {"num_batches", data_.num_batches}, {"classes", opt_.info.classes},
            {"attacks", attacks}, {"run", opt_.run_key}};
}

// Clean and every plain attack sum logits; an ensemble has no single returned point per sample (each part returns
// its own, and only for the samples still robust), so it gets no sums and no mean logits.
std::vector<std::vector<double>> Run::fresh_logit_sums() const {
    const size_t cc = static_cast<size_t>(classes() * classes());
    std::vector<std::vector<double>> sums(1, std::vector<double>(cc, 0.0));
    for (const Attack* a : attacks_)
        sums.push_back(dynamic_cast<const Ensemble*>(a) ? std::vector<double>{} : std::vector<double>(cc, 0.0));
    return sums;
}

// What a saved state must satisfy for this run, beyond its shape (eval_state.h): no more batches than the run has,
// every batch once the attacks have started, the run's attacks in order, and class indices inside the run's classes
// (they index the confusion matrices).
void Run::check_resumable(const EvalState& saved, const std::string& file) const {
    auto require = [&](bool ok, const std::string& what) {
        if (!ok) throw std::runtime_error(file + ": malformed evaluation state: " + what + "; remove it or run without "
                                                 "--resume");
    };
    const int64_t batches_seen = saved.batch_offsets.empty() ? 0 : static_cast<int64_t>(saved.batch_offsets.size()) - 1;
    require(batches_seen <= data_.num_batches, "more batches than this evaluation has");
    if (!saved.records.attacks.empty()) {
        require(batches_seen == data_.num_batches, "attack records before the clean pass finished");
        std::vector<std::string> names;
        for (const Attack* a : attacks_) names.push_back(a->name());
        require(saved.records.attacks == names, "its attacks are not this evaluation's");
    }
    const int32_t C = static_cast<int32_t>(opt_.info.classes.size());
    require(class_indices_in_range(saved.records.label, C) && class_indices_in_range(saved.records.clean_pred, C),
            "a label or clean prediction is not one of the " + std::to_string(C) + " classes");
    for (const auto& pred : saved.records.adv_pred)
        require(class_indices_in_range(pred, C, -1), "an attack's prediction is not one of the " + std::to_string(C) + " classes");
}

void Run::load_or_start() {
    state_ = EvalState{};
    state_.fingerprint = fingerprint();
    state_.logit_sums = fresh_logit_sums();
    const std::string file = opt_.out_dir.empty() ? "" : path("eval_state.json");
    if (!opt_.resume || file.empty() || !std::filesystem::exists(file)) return;
    EvalState saved;
    try {
        saved = state_from_json(nlohmann::json::parse(util::read_file_text(file)));
    } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(file + ": not an evaluation state (malformed JSON at byte " + std::to_string(e.byte) +
                                 "); remove it or run without --resume");
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(file + ": " + e.what() + "; remove it or run without --resume");
    }
    if (saved.fingerprint != state_.fingerprint)
        throw std::runtime_error(file + ": written by a different evaluation (" +
                                 fingerprint_difference(saved.fingerprint, state_.fingerprint) +
                                 "); remove it or run without --resume");
    check_resumable(saved, file);
    if (saved.logit_sums.empty()) {
        log_line("note: " + file + " keeps no logit sums (written by an older version); this run reports no mean "
                 "logits");
    } else {
        const auto fresh = fresh_logit_sums();
        bool same_shape = saved.logit_sums.size() == fresh.size();
        for (size_t e = 0; same_shape && e < fresh.size(); ++e)
            same_shape = saved.logit_sums[e].size() == fresh[e].size();
        if (!same_shape)
            throw std::runtime_error(file + ": malformed evaluation state: logit_sums do not match the classes and "
                                            "attacks of this evaluation");
    }
    state_ = std::move(saved);
    log_line("resuming from " + file + ": " + std::to_string(state_.steps_done) + " steps already done");
}

void Run::save() {
    if (!opt_.out_dir.empty()) util::write_file_atomic(path("eval_state.json"), state_to_json(state_).dump());
}

void Run::step_done() {
    state_.steps_done = step_;
    save();
    if (opt_.stop_after_steps >= 0 && ++steps_this_call_ >= opt_.stop_after_steps)
        throw EvalInterrupted("evaluation stopped after " + std::to_string(steps_this_call_) + " steps (as asked)");
    if (opt_.should_stop && opt_.should_stop())
        throw EvalInterrupted("evaluation stopped by a signal after step " + std::to_string(step_) + "; state saved to " +
                              path("eval_state.json"));
}

EvalBatch Run::fetch(int64_t b) const {
    EvalBatch batch = data_.batch(b);
    const int64_t n = static_cast<int64_t>(batch.indices.size());
    CW_CHECK(batch.images.ndim() == 4 && batch.images.size(0) == n, ShapeError,
             "evaluator: batch " + std::to_string(b) + " has images " + batch.images.describe() + " for " +
                 std::to_string(n) + " indices");
    CW_CHECK(batch.labels.dtype() == DType::I32 && batch.labels.ndim() == 1 && batch.labels.size(0) == n,
             ShapeError, "evaluator: batch " + std::to_string(b) + " labels must be int32 [" + std::to_string(n) + "]");
    if (static_cast<int64_t>(state_.batch_offsets.size()) > b + 1) {
        // after the clean pass: the batch must be the one recorded then
        const int64_t off = state_.batch_offsets[b];
        CW_CHECK(state_.batch_offsets[b + 1] - off == n &&
                     std::equal(batch.indices.begin(), batch.indices.end(), state_.records.index.begin() + off),
                 Error, "evaluator: batch " + std::to_string(b) + " differs from the one seen by the clean pass");
    }
    return batch;
}

// The argmax is taken on the device exactly as ModelOracle::predict does (lowest index on ties), so the
// predictions are the ones a separate predict() would give; the logits come along in the same pass.
Forward Run::eval_forward(const Tensor& x) {
    ModeScope eval(model_, ModelMode::Eval);
    ModelOracle oracle(model_, x.device());
    if (x.size(0) == 0) return {};
    const Tensor z = oracle.logits(x);
    CW_CHECK(z.ndim() == 2 && z.size(1) == classes(), ShapeError,
             "evaluator: the model outputs logits " + z.describe() + " but there are " + std::to_string(classes()) +
                 " classes (EvalOptions::info.classes); it must give one logit per class");
    return {argmax(z, 1).to_int_vector(), z.to_vector()};
}

// Adds a batch's logits (its first sample at `offset` in the records) to evaluation's sums, unless this run keeps
// none (resumed from an older state).
void Run::add_logits(size_t evaluation, const std::vector<float>& logits, int64_t offset) {
    if (state_.logit_sums.empty()) return;
    const int64_t n = static_cast<int64_t>(logits.size()) / classes();
    const auto& label = state_.records.label;
    add_class_logits(state_.logit_sums[evaluation], logits,
                     std::vector<int32_t>(label.begin() + offset, label.begin() + offset + n), classes());
}

double Run::accuracy_of(const std::vector<int32_t>& pred) const {
    const auto& y = state_.records.label;
    int64_t ok = 0;
    for (size_t i = 0; i < y.size(); ++i) ok += pred[i] == y[i];
    return y.empty() ? 0.0 : double(ok) / double(y.size());
}

void Run::clean_pass() {
    for (int64_t b = 0; b < data_.num_batches; ++b) {
        if (skip()) continue;
        const EvalBatch batch = fetch(b);
        if (b == 0) {
            ModeScope eval(model_, ModelMode::Eval);
            if (!model_is_deterministic(model_, batch.images))
                log_line("warning: two forward passes of the same batch differ; results may not be reproducible");
        }
        EvalRecords& r = state_.records;
        if (state_.batch_offsets.empty()) state_.batch_offsets.push_back(0);
        const std::vector<int32_t> labels = batch.labels.to_int_vector();
        for (int32_t y : labels)
            CW_CHECK(y >= 0 && y < static_cast<int32_t>(opt_.info.classes.size()), Error,
                     "evaluator: label " + std::to_string(y) + " is not one of the " +
                         std::to_string(opt_.info.classes.size()) + " classes");
        const Forward f = eval_forward(batch.images);
        const int64_t off = r.size();
        r.index.insert(r.index.end(), batch.indices.begin(), batch.indices.end());
        r.label.insert(r.label.end(), labels.begin(), labels.end());
        r.clean_pred.insert(r.clean_pred.end(), f.pred.begin(), f.pred.end());
        add_logits(0, f.logits, off);
        state_.batch_offsets.push_back(r.size());
        if (b == data_.num_batches - 1) {
            init_attack_records();
            log_line("clean accuracy: " + util::percent(accuracy_of(r.clean_pred), 2) + "% (" + std::to_string(r.size()) +
                     " samples)");
        }
        step_done();
    }
}

void Run::init_attack_records() {
    EvalRecords& r = state_.records;
    const size_t n = static_cast<size_t>(r.size());
    for (const Attack* a : attacks_) {
        r.attacks.push_back(a->name());
        const bool ensemble = dynamic_cast<const Ensemble*>(a) != nullptr;
        // An ensemble starts from the clean predictions (clean-wrong points are never attacked, §8).
        r.adv_pred.push_back(ensemble ? r.clean_pred : std::vector<int32_t>(n, -1));
        state_.broken_by.push_back(ensemble ? std::vector<int32_t>(n, -1) : std::vector<int32_t>{});
        state_.time_s.push_back(0);
        state_.sanity_violations.push_back(0);
    }
}

void Run::plain_attack(size_t a) {
    Attack& attack = *attacks_[a];
    const std::string name = attack.name();
    for (int64_t b = 0; b < data_.num_batches; ++b) {
        if (skip()) continue;
        const auto t0 = Clock::now();
        const EvalBatch batch = fetch(b);
        Rng rng(step_seed(opt_.info.seed, name, b));
        const AttackResult res = attack.run(model_, batch.images, batch.labels, rng);
        const int64_t off = state_.batch_offsets[b];
        // One forward at x_adv serves the mean-logit sums and, where the attack kept no predictions, the predictions.
        std::vector<int32_t> pred = res.pred;
        if (!state_.logit_sums.empty() || pred.empty()) {
            Forward f = eval_forward(res.x_adv);
            if (pred.empty()) pred = std::move(f.pred);
            add_logits(a + 1, f.logits, off);
        }

        const std::string bad = check_adversarial(from_tensor(batch.images), from_tensor(res.x_adv),
                                                  std::vector<float>(pred.size(), attack.eps()), attack.norm());
        if (!bad.empty()) {
            ++state_.sanity_violations[a];
            log_line("warning: " + name + " batch " + std::to_string(b + 1) + ": " + bad);
        }
        // AutoAttack's rule: robust = clean-correct and not broken. A clean-wrong sample keeps its clean prediction
        // (AutoAttack never moves it), even where the attack happened to flip it to the right class.
        int64_t correct = 0, broken = 0, flipped_right = 0;
        for (size_t i = 0; i < pred.size(); ++i) {
            const size_t k = static_cast<size_t>(off) + i;
            const bool clean_ok = state_.records.clean_pred[k] == state_.records.label[k];
            state_.records.adv_pred[a][k] = clean_ok ? pred[i] : state_.records.clean_pred[k];
            correct += clean_ok;
            broken += clean_ok && pred[i] != state_.records.label[k];
            flipped_right += !clean_ok && pred[i] == state_.records.label[k];
        }
        state_.time_s[a] += std::chrono::duration<double>(Clock::now() - t0).count();
        log_line(name + " - batch " + std::to_string(b + 1) + "/" + std::to_string(data_.num_batches) + " - " +
                 std::to_string(broken) + " of " + std::to_string(correct) + " successfully perturbed" +
                 (flipped_right ? " (" + std::to_string(flipped_right) +
                                      " clean-wrong flipped to the label, not counted as robust)"
                                : std::string()));
        if (b == data_.num_batches - 1) {
            std::ostringstream os;
            os << "robust accuracy after " << upper(name) << ": " << util::percent(accuracy_of(state_.records.adv_pred[a]), 2) << "%"
               << " (total time " << std::fixed << std::setprecision(1) << state_.time_s[a] << " s)";
            log_line(os.str());
        }
        step_done();
    }
}

void Run::ensemble_attack(size_t a, Ensemble& ens) {
    const std::string name = ens.name();
    std::vector<int32_t>& pred = state_.records.adv_pred[a];
    std::vector<int32_t>& broken_by = state_.broken_by[a];
    const auto& label = state_.records.label;
    const auto& clean = state_.records.clean_pred;
    for (size_t s = 0; s < ens.parts().size(); ++s) {
        const std::string part = ens.parts()[s]->name();
        for (int64_t b = 0; b < data_.num_batches; ++b) {
            if (skip()) continue;
            const auto t0 = Clock::now();
            const EvalBatch batch = fetch(b);
            const int64_t off = state_.batch_offsets[b];
            const int64_t n = static_cast<int64_t>(batch.indices.size());
            std::vector<uint8_t> robust(static_cast<size_t>(n));
            std::vector<int32_t> y(label.begin() + off, label.begin() + off + n);
            for (int64_t i = 0; i < n; ++i) robust[i] = clean[off + i] == y[i] && broken_by[off + i] < 0;

            const StageResult r = ens.run_stage(s, model_, batch.images, y, robust, step_seed(opt_.info.seed, name, b));
            if (!r.sanity.empty()) {
                ++state_.sanity_violations[a];
                log_line("warning: " + part + " batch " + std::to_string(b + 1) + ": " + r.sanity);
            }
            int64_t broken = 0;
            for (size_t j = 0; j < r.attacked.size(); ++j) {
                const size_t k = static_cast<size_t>(off + r.attacked[j]);
                pred[k] = r.pred[j];   // the model's prediction at the returned point
                if (r.broken[j]) {
                    broken_by[k] = static_cast<int32_t>(s);
                    ++broken;
                }
            }
            state_.time_s[a] += std::chrono::duration<double>(Clock::now() - t0).count();
            log_line(part + " - batch " + std::to_string(b + 1) + "/" + std::to_string(data_.num_batches) + " - " +
                     std::to_string(broken) + " of " + std::to_string(r.attacked.size()) +
                     " successfully perturbed");
            if (b == data_.num_batches - 1) {
                std::ostringstream os;
                os << "robust accuracy after " << upper(part) << ": " << util::percent(accuracy_of(pred), 2) << "%"
                   << " (total time " << std::fixed << std::setprecision(1) << state_.time_s[a] << " s)";
                log_line(os.str());
            }
            step_done();
        }
    }
}

EvalOutcome Run::go() {
    CW_CHECK(!opt_.info.classes.empty(), Error, "evaluator: no class names (EvalOptions::info.classes)");
    CW_CHECK(data_.num_batches > 0, Error, "evaluator: no batches to evaluate");
    load_or_start();
    {
        // Nothing writes the model during an evaluation: convolutions convert their weights once
        // (engine/layout_copy.h).
        const layout_copy::KeepScope keep_converted_weights;
        clean_pass();
        for (size_t a = 0; a < attacks_.size(); ++a) {
            if (auto* ens = dynamic_cast<Ensemble*>(attacks_[a])) ensemble_attack(a, *ens);
            else plain_attack(a);
        }
    }

    EvalOutcome out;
    out.records = state_.records;
    for (size_t a = 0; a < attacks_.size(); ++a) {
        AttackSummary s{attacks_[a]->name(), attacks_[a]->config(), state_.time_s[a], state_.sanity_violations[a], {}};
        if (auto* ens = dynamic_cast<Ensemble*>(attacks_[a])) {
            // robust after stage k = clean-correct and not broken by stages 0..k
            for (size_t k = 0; k < ens->parts().size(); ++k) {
                int64_t ok = 0;
                for (int64_t i = 0; i < out.records.size(); ++i)
                    ok += out.records.clean_pred[i] == out.records.label[i] &&
                          (state_.broken_by[a][i] < 0 || state_.broken_by[a][i] > static_cast<int32_t>(k));
                s.stages.emplace_back(ens->parts()[k]->name(), double(ok) / double(out.records.size()));
            }
        }
        out.attacks.push_back(std::move(s));
    }
    out.results = results_json(opt_.info, out.records, out.attacks, state_.logit_sums);
    if (opt_.log) print_class_table(*opt_.log, out.records, opt_.info.classes);
    if (!opt_.out_dir.empty()) {
        util::write_file_atomic(path("results.json"), out.results.dump(2) + "\n");
        util::write_file_atomic(path("records.csv"), records_csv(out.records));
    }
    return out;
}
}  // namespace

EvalOutcome evaluate(nn::Module& model, const BatchSource& data, const std::vector<Attack*>& attacks,
                     const EvalOptions& options) {
    for (const Attack* a : attacks)
        CW_CHECK(a->mode() == ModelMode::Eval, Error,
                 "evaluator: attack '" + a->name() + "' is configured to run in train mode; it would update the BN "
                 "running statistics in the middle of the evaluation (evaluate with an eval-mode attack)");
    for (size_t a = 0; a < attacks.size(); ++a)
        for (size_t b = 0; b < a; ++b)
            CW_CHECK(attacks[a]->name() != attacks[b]->name(), Error,
                     "evaluator: attack '" + attacks[a]->name() + "' appears twice");
    Run run(model, data, attacks, options);
    return run.go();
}

}  // namespace cw::eval
