#include "train/trainer.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attacks/registry.h"
#include "engine/autograd.h"
#include "engine/cpu/precision_scope.h"
#include "engine/layout_copy.h"
#include "util/atomic_file.h"
#include "nn/ema.h"
#include "nn/progress.h"
#include "nn/training_state.h"
#include "train/history.h"
#include "train/state_vectors.h"
#include "train/step_audit.h"
#include "train/stop_signal.h"

namespace cw::train {

namespace {

const std::string& need(const nn::Metadata& meta, const std::string& key, const std::string& path) {
    auto it = meta.find(key);
    if (it == meta.end())
        throw nn::CheckpointError(path + ": not a training state of this trainer (no '" + key + "' entry)");
    return it->second;
}

int64_t count_equal(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    int64_t n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += a[i] == b[i];
    return n;
}

std::vector<double> ratio(const std::vector<double>& sum, const std::vector<int64_t>& count) {
    std::vector<double> r(sum.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t k = 0; k < sum.size(); ++k)
        if (count[k] > 0) r[k] = sum[k] / static_cast<double>(count[k]);
    return r;
}

}  // namespace

const std::vector<std::string>& checkpoint_names() {
    static const std::vector<std::string> names = {"last",     "best_robust",     "best_fair",
                                                   "ema_last", "ema_best_robust", "ema_best_fair"};
    return names;
}

std::string best_checkpoint_name(const std::string& key) {
    const std::string ema = "ema_";
    return key.rfind(ema, 0) == 0 ? ema + "best_" + key.substr(ema.size()) : "best_" + key;
}

struct Trainer::Impl {
    TrainSetup s;
    TrainerConfig c;
    int C = 0;
    std::unique_ptr<nn::Optimizer> opt;
    nn::LrSchedulePtr schedule;
    std::unique_ptr<nn::ModelEma> ema;
    std::unique_ptr<attacks::Attack> eval_attack;
    Rng method_rng;

    // Progress of the run, saved in the training state.
    int64_t epoch = 0, step = 0, batches_done = 0;
    std::vector<uint64_t> epoch_loader_rng;   // the loader's stream at the start of the epoch in progress
    ClassStats stats;
    int64_t clean_correct = 0, clean_seen = 0;
    int64_t fawa_accepted = 0, fawa_rejected = 0;
    std::map<std::string, SelectedCheckpoint> best;

    std::string path(const std::string& file) const { return (std::filesystem::path(c.out_dir) / file).string(); }

    Impl(TrainSetup setup, TrainerConfig config) : s(std::move(setup)), c(std::move(config)) {
        if (!s.model || !s.method || !s.loader) throw std::invalid_argument("Trainer: model, method and loader are required");
        if (c.out_dir.empty()) throw std::invalid_argument("Trainer: out_dir is required");
        if (c.epochs < 1) throw std::invalid_argument("--epochs: expected at least 1, got " + std::to_string(c.epochs));
        C = static_cast<int>(s.class_names.size());
        if (C < 2) throw std::invalid_argument("Trainer: class_names must list the classes");
        opt = make_optimizer(c.recipe, s.model->parameters());
        schedule = make_schedule(c.recipe, static_cast<double>(c.epochs));
        if (c.ema.every != "off") {
            if (c.ema.every != "epoch" && c.ema.every != "step" && c.ema.every != "fawa")
                throw std::invalid_argument("--ema: expected off, epoch, step or fawa, got '" + c.ema.every + "'");
            bool has_val = false;
            for (const auto& e : s.evals) has_val = has_val || e.name == "val";
            if (c.ema.every == "fawa" && !has_val)
                throw std::invalid_argument("--ema fawa: needs a validation split (--val-split first:K, CFA's 2%)");
            if (!s.new_model) throw std::invalid_argument("Trainer: EMA needs TrainSetup::new_model");
            // The average's model is overwritten by its first update, so building it must not draw from the global
            // stream the trained model's dropout masks come from: it did, and turning the average on changed every
            // later mask (the trained model of a run with dropout was no longer the run's without the average).
            const std::vector<uint64_t> stream = global_rng().state();
            auto avg = s.new_model();
            global_rng().set_state(stream);
            avg->to(s.model->device());
            ema = std::make_unique<nn::ModelEma>(
                avg, nn::EmaOptions{c.ema.decay, c.ema.every == "step" ? nn::EmaEvery::Step : nn::EmaEvery::Epoch,
                                    c.ema.start_epoch});
        }
        attacks::AttackOptions ao;
        ao.eps = c.eval_eps;
        ao.alpha = c.eval_alpha;
        eval_attack = attacks::make_attack("pgd" + std::to_string(c.eval_steps), ao);
        eval_attack->set_log(nullptr);
        method_rng.reseed(c.seed * 0x9E3779B97F4A7C15ULL + 0x5EED);
        stats = ClassStats(C);
        if (c.select_split.empty() && !s.evals.empty()) {
            c.select_split = s.evals.front().name;
            for (const auto& e : s.evals)
                if (e.name == "val") c.select_split = "val";
        } else if (!c.select_split.empty()) {
            std::string have;
            bool found = false;
            for (const auto& e : s.evals) {
                have += (have.empty() ? "" : ", ") + e.name;
                found = found || e.name == c.select_split;
            }
            if (!found)
                throw std::invalid_argument("--select-split: no evaluation split '" + c.select_split + "' (this run has: " +
                                            (have.empty() ? std::string("none") : have) + ")");
        }
    }

    nn::TrainingState state_view() {
        nn::TrainingState st;
        st.model = s.model.get();
        st.optimizer = opt.get();
        st.ema = ema.get();
        st.rngs = {{"global", &global_rng()}, {"method", &method_rng}};
        st.model_metadata = s.model_metadata;
        return st;
    }

    void save_state() {
        nn::TrainingState st = state_view();
        st.epoch = epoch;
        st.step = step;
        std::map<std::string, Tensor> method_tensors;
        nn::Metadata method_meta;
        s.method->save_state(method_tensors, method_meta);
        for (auto& [k, v] : method_tensors) st.method_tensors["method." + k] = v;
        for (auto& [k, v] : method_meta) st.method_metadata["method." + k] = v;
        auto& m = st.method_metadata;
        m["trainer.method"] = s.method->name();
        m["trainer.batches_done"] = std::to_string(batches_done);
        put_vector(m, "trainer.epoch_loader_rng", epoch_loader_rng);
        put_vector(m, "trainer.stats.seen", stats.seen);
        put_vector(m, "trainer.stats.correct", stats.correct);
        put_vector(m, "trainer.stats.predicted", stats.predicted);
        put_vector(m, "trainer.stats.loss_sum", stats.loss_sum);
        put_vector(m, "trainer.clean", std::vector<int64_t>{clean_correct, clean_seen});
        put_vector(m, "trainer.fawa", std::vector<int64_t>{fawa_accepted, fawa_rejected});
        for (const auto& [rule, b] : best)
            put_vector(m, "trainer.best." + rule, std::vector<double>{static_cast<double>(b.epoch), b.score});
        nn::save_training_state(path("state.safetensors"), st);
    }

    // Returns true if a state was loaded.
    bool load_state() {
        const std::string p = path("state.safetensors");
        if (!c.resume || !std::filesystem::exists(p)) return false;
        nn::TrainingState st = state_view();
        nn::load_training_state(p, st);
        const auto& m = st.method_metadata;
        if (need(m, "trainer.method", p) != s.method->name())
            throw nn::CheckpointError(p + ": was trained with method '" + m.at("trainer.method") + "', not '" +
                                      s.method->name() + "' (--resume continues the same run)");
        epoch = st.epoch;
        step = st.step;
        try {
            batches_done = get_vector<int64_t>(m, "trainer.batches_done", 1).front();
            epoch_loader_rng = get_vector<uint64_t>(m, "trainer.epoch_loader_rng");
            stats.seen = get_vector<int64_t>(m, "trainer.stats.seen", C);
            stats.correct = get_vector<int64_t>(m, "trainer.stats.correct", C);
            stats.predicted = get_vector<int64_t>(m, "trainer.stats.predicted", C);
            stats.loss_sum = get_vector<double>(m, "trainer.stats.loss_sum", C);
            const auto clean = get_vector<int64_t>(m, "trainer.clean", 2);
            clean_correct = clean[0];
            clean_seen = clean[1];
            const auto fawa = get_vector<int64_t>(m, "trainer.fawa", 2);
            fawa_accepted = fawa[0];
            fawa_rejected = fawa[1];
        } catch (const std::invalid_argument& e) {
            throw nn::CheckpointError(p + ": " + e.what() + " (the data has " + std::to_string(C) + " classes)");
        }
        try {
            for (const auto& [k, v] : m) {
                if (k.rfind("trainer.best.", 0) != 0) continue;
                const auto parts = get_vector<double>(m, k, 2);
                const std::string rule = k.substr(13);
                best[rule] = {static_cast<int64_t>(parts.at(0)), parts.at(1), path(best_checkpoint_name(rule) + ".safetensors")};
            }
        } catch (const std::invalid_argument& e) {
            throw nn::CheckpointError(p + ": " + e.what());
        }
        std::map<std::string, Tensor> method_tensors;
        nn::Metadata method_meta;
        for (const auto& [k, v] : st.method_tensors)
            if (k.rfind("method.", 0) == 0) method_tensors[k.substr(7)] = v;
        for (const auto& [k, v] : m)
            if (k.rfind("method.", 0) == 0) method_meta[k.substr(7)] = v;
        try {
            s.method->load_state(method_tensors, method_meta);
        } catch (const std::logic_error& e) {  // a count that does not read as one (std::stoi), or of the wrong size
            throw nn::CheckpointError(p + ": the saved state of method " + s.method->name() + " does not read back (" +
                                      e.what() + ")");
        }
        return true;
    }

    Validation validation() const {
        for (const auto& e : s.evals)
            if (e.name == "val") return {&e, c.seed};
        return {};
    }

    void log_line(const std::string& line) {
        if (c.log) *c.log << line << std::endl;
    }

    // Per-epoch evaluation of one model (prefix "" for the trained model, "ema_" for the average) on every split:
    // history rows, the epoch summary line, best checkpoints on the selection split. Returns the scores by split.
    std::map<std::string, SplitScores> evaluate_model(const std::string& prefix, nn::Module& model, HistoryCsv& history) {
        std::map<std::string, SplitScores> scores;
        const std::string pgd = eval_attack->name();
        for (const EvalSplit& split : s.evals) {
            const SplitScores sc = evaluate_split(model, split, *eval_attack, C, c.seed);
            scores[split.name] = sc;
            history.row(epoch, prefix + split.name + "_clean", sc.clean.accuracy, sc.clean.per_class_accuracy);
            history.row(epoch, prefix + split.name + "_" + pgd, sc.robust.accuracy, sc.robust.per_class_accuracy);
            std::ostringstream line;
            line.setf(std::ios::fixed);
            line.precision(1);
            line << "  " << prefix << split.name << ": clean " << 100 * sc.clean.accuracy << "%, " << pgd << " "
                 << 100 * sc.robust.accuracy << "% (worst class " << s.class_names[static_cast<size_t>(std::max(0, sc.robust.worst_class))]
                 << " " << 100 * worst_class_accuracy(sc.robust) << "%)";
            if (split.name == c.select_split) {
                for (SelectRule rule : {SelectRule::Robust, SelectRule::Fair}) {
                    const std::string key = prefix + rule_name(rule);
                    const double score = selection_score(rule, sc);
                    auto it = best.find(key);
                    if (it == best.end() || score > it->second.score) {
                        const std::string file = path(best_checkpoint_name(key) + ".safetensors");
                        nn::save_model(model, file, checkpoint_meta(prefix, best_checkpoint_name(key)));
                        best[key] = {epoch, score, file};
                        line << "  new best " << key;
                    }
                }
            }
            log_line(line.str());
        }
        return scores;
    }

    static double worst_class_accuracy(const fairness::ClassMetrics& m) {
        return m.worst_class >= 0 ? m.per_class_accuracy[static_cast<size_t>(m.worst_class)] : 0.0;
    }

    // CFA's fairness-aware weight averaging (docs/protocols/cfa.md §3): the average takes the epoch's model only if every
    // class keeps at least the threshold of robust accuracy on the validation split.
    void fawa_update(const std::map<std::string, SplitScores>& scores, int64_t finished_epoch, HistoryCsv& history) {
        if (finished_epoch < c.ema.start_epoch) return;
        auto it = scores.find("val");
        const SplitScores val = it != scores.end() ? it->second : evaluate_split(*s.model, *validation().split, *eval_attack, C, c.seed);
        const double worst = worst_class_accuracy(val.robust);
        const bool accept = worst >= c.ema.fawa_threshold;
        if (accept) {
            ema->update(*s.model);
            ++fawa_accepted;
        } else {
            ++fawa_rejected;
        }
        history.row(epoch, "fawa", accept ? 1.0 : 0.0, val.robust.per_class_accuracy);
        std::ostringstream line;
        line.setf(std::ios::fixed);
        line.precision(1);
        line << "  fawa: worst validation class " << 100 * worst << "% " << (accept ? ">=" : "<") << " threshold "
             << 100 * c.ema.fawa_threshold << "%: " << (accept ? "averaged in" : "rejected") << " (" << fawa_accepted
             << " accepted, " << fawa_rejected << " rejected so far)";
        log_line(line.str());
    }

    nn::Metadata checkpoint_meta(const std::string& prefix, const std::string& which) const {
        nn::Metadata m = s.model_metadata;
        m["epoch"] = std::to_string(epoch);
        m["checkpoint"] = which;
        if (!prefix.empty()) m["weight_averaging"] = "ema " + c.ema.every + " decay " + std::to_string(c.ema.decay);
        return m;
    }

    void write_selection() const {
        nlohmann::json j;
        j["split"] = c.select_split;
        j["attack"] = eval_attack->config();
        j["rules"] = {{"robust", "highest overall PGD accuracy on the selection split (Rice et al.)"},
                      {"fair", "highest overall + worst-class PGD accuracy on the selection split (CFA)"},
                      {"last", "the model after the last completed epoch (FAIR-TAT)"}};
        for (const auto& [key, b] : best) j["best"][key] = {{"epoch", b.epoch}, {"score", b.score}, {"path", b.path}};
        if (c.ema.every == "fawa")
            j["fawa"] = {{"threshold", c.ema.fawa_threshold}, {"accepted", fawa_accepted}, {"rejected", fawa_rejected}};
        j["last"] = {{"epoch", epoch}, {"path", path("last.safetensors")}};
        util::write_file_atomic(path("selection.json"), j.dump(2) + "\n");
    }

    // One optimiser step on batch i of the epoch at rate `lr`: the method's loss, the backward pass (through the
    // step audit every --audit-steps steps), the step, the averaged model, and the epoch's running statistics.
    void train_batch(const data::Batch& b, int64_t i, double lr, StepsCsv* steps_csv, const std::vector<Tensor*>& params,
                     nn::Progress& progress) {
        const ConvPrecisionScope precision(c.step_precision);
        // The parameters are written only by the optimiser's step (a fresh write access): convolutions may keep
        // their weights' conversions for the attack's steps and the training step (engine/layout_copy.h).
        const layout_copy::KeepScope keep_converted_weights;
        opt->set_lr(static_cast<float>(lr));
        const std::vector<int32_t> y = b.labels.to_int_vector();
        BatchInput in{*s.model, b.images, b.labels, y, epoch, i, C, method_rng};
        BatchLoss bl = s.method->batch_loss(in);
        if (!bl.per_sample.defined() || bl.per_sample.numel() != b.size())
            throw std::logic_error("method " + s.method->name() + ": per-sample loss must have " +
                                   std::to_string(b.size()) + " entries");
        Tensor loss = sum(bl.per_sample);
        const float loss_value = loss.item();
        if (!std::isfinite(loss_value))
            throw TrainingDiverged("training diverged: the loss is " + std::to_string(loss_value) + " at epoch " +
                                   std::to_string(epoch + 1) + ", batch " + std::to_string(i + 1) + " (step " +
                                   std::to_string(step + 1) + "); no step was taken and " +
                                   path("state.safetensors") + " still holds the last good state (epoch " +
                                   std::to_string(epoch) + "); lower --lr or check the data");
        opt->zero_grad();
        if (steps_csv && step % c.audit_steps == 0) {
            const StepShares shares = audit_gradient_shares(bl.per_sample, y, C, params);
            steps_csv->write(step, epoch + 1, i + 1, lr, shares, s.method->class_state());
        } else {
            loss.backward();
        }
        opt->step();
        ++step;
        batches_done = i + 1;
        if (ema) ema->after_step(*s.model, epoch);

        std::vector<int32_t> pred = argmax(bl.logits, 1).to_int_vector();
        std::vector<float> terms = bl.per_sample.detach().to_vector();
        for (float& t : terms) t *= static_cast<float>(b.size());   // the unnormalised per-sample loss
        stats.add(y, pred, terms);
        const CleanForward cf = s.method->clean_forward_after_step();
        if (cf != CleanForward::Off) {
            NoGradGuard no_grad;
            const bool was_training = s.model->is_training();
            s.model->train(cf == CleanForward::Train);
            clean_correct += count_equal(argmax((*s.model)(b.images), 1).to_int_vector(), y);
            clean_seen += b.size();
            s.model->train(was_training);
        }
        progress.update(i, loss_value, count_equal(pred, y), b.size());
    }

    // Ctrl-C, SIGTERM or a test's request, after batch i: the state saved, one line saying how to continue.
    TrainResult stop_after_batch(int64_t i, TrainResult result) {
        save_state();
        result.interrupted = true;
        result.signal = stop_requested();
        log_line(std::string("stopped by ") + (result.signal == 2 ? "SIGINT" : result.signal ? "SIGTERM" : "request") +
                 " after epoch " + std::to_string(epoch + 1) + " batch " + std::to_string(i + 1) + "; state saved to " +
                 path("state.safetensors") + " — continue with --resume");
        result.epochs_completed = epoch;
        result.steps = step;
        result.best = best;
        return result;
    }

    TrainResult run() {
        std::filesystem::create_directories(c.out_dir);
        data::Loader& loader = *s.loader;
        const bool resumed = load_state();
        if (!resumed) epoch_loader_rng = loader.rng_state();
        if (resumed)
            log_line("resumed from " + path("state.safetensors") + ": epoch " + std::to_string(epoch + 1) + ", batch " +
                     std::to_string(batches_done) + " done, step " + std::to_string(step));
        log_line("method: " + s.method->describe());
        log_line("optimiser: " + describe(c.recipe) + "; " + std::to_string(c.epochs) + " epochs of " +
                 std::to_string(loader.batches_per_epoch()) + " batches of " + std::to_string(loader.options().batch_size));
        if (c.on_start) c.on_start(loader.batches_per_epoch());
        HistoryCsv history(path("history.csv"), s.class_names, resumed ? epoch : -1);
        TrainLogCsv train_log(path("train_log.csv"), resumed ? epoch : -1);
        std::unique_ptr<StepsCsv> steps_csv;
        if (c.audit_steps > 0)
            steps_csv = std::make_unique<StepsCsv>(path("steps.csv"), s.class_names, s.method->class_state_names(),
                                                   resumed ? step - 1 : -1);

        StopSignalScope signals;
        nn::Progress progress(c.log ? *c.log : null_stream(), c.epochs, loader.batches_per_epoch(), c.print_every);
        TrainResult result;
        const std::vector<Tensor*> params = s.model->parameters();
        int64_t steps_this_call = 0;
        const int64_t n_batches = loader.batches_per_epoch();

        while (epoch < c.epochs) {
            // The epoch starts from the loader state saved with it; a resumed epoch replays the batches already
            // trained on (same order, same augmentation) without training on them.
            loader.set_rng_state(epoch_loader_rng);
            loader.start_epoch();
            data::Batch b;
            for (int64_t i = 0; i < batches_done; ++i)
                if (!loader.next(b)) throw std::runtime_error("resume: the epoch has fewer batches than the saved state says");
            if (batches_done == 0) s.method->start_epoch(EpochStart{epoch, *s.model, validation()});
            progress.start_epoch(epoch);
            s.model->train();
            // The lr of the last batch trained (the log's value even when a resumed epoch has no batch left).
            double lr = schedule->lr(schedule_time(c.recipe, epoch, std::max<int64_t>(0, batches_done - 1), n_batches));
            for (int64_t i = batches_done; loader.next(b); ++i) {
                lr = schedule->lr(schedule_time(c.recipe, epoch, i, n_batches));
                train_batch(b, i, lr, steps_csv.get(), params, progress);
                ++steps_this_call;
                if (c.after_step) c.after_step(step);
                const bool test_interrupt = c.interrupt_after_steps >= 0 && steps_this_call >= c.interrupt_after_steps;
                if (stop_requested() || test_interrupt) return stop_after_batch(i, result);
            }
            end_epoch(history, train_log, progress, lr, result);
            if (result.stopped_early) break;
        }
        result.epochs_completed = epoch;
        result.steps = step;
        result.best = best;
        result.last_path = path("last.safetensors");
        if (ema && ema->num_updates() > 0) result.ema_last_path = path("ema_last.safetensors");
        return result;
    }

    void end_epoch(HistoryCsv& history, TrainLogCsv& train_log, nn::Progress& progress, double lr, TrainResult& result) {
        EpochDecision decision = s.method->end_epoch(EpochEnd{epoch, stats, *s.model, validation()});
        if (decision.stop && !decision.restore_state.empty()) {
            auto state = s.model->state();
            if (state.size() != decision.restore_state.size())
                throw std::logic_error("method " + s.method->name() + ": restore_state does not match the model");
            for (size_t j = 0; j < state.size(); ++j) state[j].tensor->copy_from(decision.restore_state[j]);
        }
        const int64_t done = epoch + 1;
        const std::vector<double> train_acc = stats.accuracy();
        history.row(done, "train_adv", stats.total_seen() ? static_cast<double>(stats.total_correct()) / stats.total_seen() : 0.0,
                    train_acc);
        double loss_total = 0;
        for (double l : stats.loss_sum) loss_total += l;
        history.row(done, "train_loss", stats.total_seen() ? loss_total / stats.total_seen() : 0.0, ratio(stats.loss_sum, stats.seen));
        const auto names = s.method->class_state_names();
        const auto state = s.method->class_state();
        for (size_t j = 0; j < names.size() && j < state.size(); ++j)
            history.row(done, "state_" + names[j], std::numeric_limits<double>::quiet_NaN(), state[j]);
        train_log.row(done, lr, stats.total_seen() ? loss_total / stats.total_seen() : 0.0,
                      stats.total_seen() ? static_cast<double>(stats.total_correct()) / stats.total_seen() : 0.0,
                      clean_seen ? static_cast<double>(clean_correct) / clean_seen : std::numeric_limits<double>::quiet_NaN(),
                      progress.epoch_seconds() > 0 ? static_cast<double>(stats.total_seen()) / progress.epoch_seconds() : 0.0,
                      progress.epoch_seconds());

        epoch = done;   // from here on `epoch` counts completed epochs, as checkpoints and history rows record
        const bool last_epoch = done == c.epochs || decision.stop;
        const bool eval_now = !s.evals.empty() && c.eval_every > 0 && (done % c.eval_every == 0 || last_epoch);
        std::map<std::string, SplitScores> scores;
        if (eval_now) scores = evaluate_model("", *s.model, history);
        if (ema && c.ema.every == "fawa") fawa_update(scores, done - 1, history);
        else if (ema) ema->after_epoch(*s.model, done - 1);
        if (eval_now && ema && ema->num_updates() > 0) evaluate_model("ema_", ema->averaged(), history);
        nn::save_model(*s.model, path("last.safetensors"), checkpoint_meta("", "last"));
        if (ema && ema->num_updates() > 0) nn::save_model(ema->averaged(), path("ema_last.safetensors"), checkpoint_meta("ema_", "ema_last"));
        write_selection();

        batches_done = 0;
        stats.clear();
        clean_correct = clean_seen = 0;
        epoch_loader_rng = s.loader->rng_state();
        save_state();
        if (decision.stop) {
            result.stopped_early = true;
            result.stop_reason = decision.reason;
            log_line("method stopped training after epoch " + std::to_string(done) + ": " + decision.reason);
        }
    }

    static std::ostream& null_stream() {
        static std::ostream null(nullptr);
        return null;
    }
};

Trainer::Trainer(TrainSetup setup, TrainerConfig config)
    : impl_(std::make_unique<Impl>(std::move(setup), std::move(config))) {}
Trainer::~Trainer() = default;
TrainResult Trainer::run() { return impl_->run(); }

}  // namespace cw::train
