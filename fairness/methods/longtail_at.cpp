#include "fairness/methods/longtail_at.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "engine/attack_ops.h"
#include "engine/ops.h"
#include "fairness/methods/critical_targets.h"
#include "fairness/methods/longtail_losses.h"
#include "train/state_vectors.h"
#include "fairness/methods/longtail_weights.h"
#include "train/methods/method_util.h"
#include "train/methods/pgd_at.h"

namespace cw::train {

namespace {
attacks::PgdConfig pgd_config(const MethodOptions& o, bool targeted) {
    attacks::PgdConfig c =
        pgd_at_attack_config(o, "longtail-pgd" + std::to_string(o.steps) + (targeted ? "-targeted" : ""));
    c.targeted = targeted;
    return c;
}

int resolve_drw_epoch(LongTailKind kind, const LongTailOptions& lt) {
    if (kind != LongTailKind::LdamDrw || lt.drw_epoch >= 0) return lt.drw_epoch;
    if (lt.run_epochs <= 0)
        throw std::invalid_argument("at_ldam_drw: --drw-epoch not given and the run length is unknown; pass --drw-epoch");
    return static_cast<int>(std::lround(0.8 * lt.run_epochs));
}

void check_options(LongTailKind kind, const LongTailOptions& lt) {
    auto fail = [](const std::string& what) { throw std::invalid_argument("long-tail method options: " + what); };
    if (!(lt.cs_power >= 0)) fail("--cs-power must be >= 0, got " + std::to_string(lt.cs_power));
    if (!(lt.critical_weight > 0)) fail("--critical-weight must be > 0, got " + std::to_string(lt.critical_weight));
    if (!(lt.cb_beta > 0 && lt.cb_beta < 1)) fail("--cb-beta must be in (0, 1), got " + std::to_string(lt.cb_beta));
    if (!(lt.ldam_max_margin >= 0)) fail("--ldam-max-margin must be >= 0, got " + std::to_string(lt.ldam_max_margin));
    if (!(lt.ldam_scale > 0)) fail("--ldam-scale must be > 0, got " + std::to_string(lt.ldam_scale));
    if (!(lt.cos_lambda >= 0)) fail("--cos-lambda must be >= 0, got " + std::to_string(lt.cos_lambda));
    if (!(lt.target_prob >= 0 && lt.target_prob <= 1))
        fail("--target-prob must be in [0, 1], got " + std::to_string(lt.target_prob));
    if (kind == LongTailKind::TargetClass && lt.critical_class < 0)
        fail("at_target_class needs --critical-class (the class c* the attacks aim at)");
}

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}
}  // namespace

LongTailAt::LongTailAt(LongTailKind kind, const MethodOptions& o)
    : kind_(kind),
      lt_(o.longtail),
      attack_(pgd_config(o, false)),
      toward_critical_(pgd_config(o, true)),
      clean_forward_(resolve_clean_forward(o.clean_forward, CleanForward::Train)),
      drw_epoch_((check_options(kind, o.longtail), resolve_drw_epoch(kind, o.longtail))) {}

std::string LongTailAt::name() const {
    switch (kind_) {
        case LongTailKind::CostSensitive: return "at_cost_sensitive";
        case LongTailKind::ClassBalanced: return "at_class_balanced";
        case LongTailKind::LdamDrw: return "at_ldam_drw";
        case LongTailKind::CosineReg: return "at_cosine_reg";
        case LongTailKind::TargetClass: return "at_target_class";
    }
    return "";
}

std::string LongTailAt::describe() const {
    const auto& c = attack_.settings();
    std::string base = "PGD-" + std::to_string(c.steps) + " Linf CE, eps " + over_255(c.eps) + ", alpha " +
                       over_255(c.alpha) + ", " + (c.start == attacks::RandomStart::None ? "no random start" : "uniform start") +
                       ", attack in " + attacks::mode_name(c.mode) + " mode; clean forward after step: " +
                       clean_forward_name(clean_forward_) + "; ";
    const std::string counts = "n_k = robustly-correct training samples of the previous epoch (our proposal, docs/protocols/longtail.md §2)";
    switch (kind_) {
        case LongTailKind::CostSensitive:
            if (lt_.critical_class >= 0)
                return name() + ": " + base + "loss sum_i w_y CE_i / sum_i w_y with w_{c*} = " + fmt(lt_.critical_weight) +
                       " for c* = " + std::to_string(lt_.critical_class) + ", others 1, normalised to sum C (docs/protocols/longtail.md §1 scenario 2)";
            return name() + ": " + base + "loss sum_i w_y CE_i / sum_i w_y, w_k ∝ (1 - r_k)^" + fmt(lt_.cs_power) +
                   " from the previous epoch's training robust accuracy r_k, normalised to sum C (docs/protocols/longtail.md §1 scenario 1)";
        case LongTailKind::ClassBalanced:
            return name() + ": " + base + "loss sum_i w_y CE_i / sum_i w_y, w_k = (1-beta)/(1-beta^n_k), beta " +
                   fmt(lt_.cb_beta) + ", normalised to sum C; " + counts;
        case LongTailKind::LdamDrw:
            return name() + ": " + base + "LDAM CE(s (z - Delta_y e_y)) on the adversarial logits, s " + fmt(lt_.ldam_scale) +
                   ", Delta_k ∝ n_k^-1/4 with max " + fmt(lt_.ldam_max_margin) +
                   " (linear head, margin relative to the logit scale: untested, docs/protocols/longtail.md §3); DRW: uniform weights "
                   "before epoch " + std::to_string(drw_epoch_) + " (0-based), then class-balanced weights beta " +
                   fmt(lt_.cb_beta) + "; " + counts;
        case LongTailKind::CosineReg:
            return name() + ": " + base + "loss mean CE + " + fmt(lt_.cos_lambda) +
                   " * R_cos, R_cos = mean over ordered pairs of present classes of max(0, cos) of the batch's class "
                   "means of the adversarial logits (formula ours, docs/protocols/longtail.md §4; spread as R_cos/B per sample)";
        case LongTailKind::TargetClass:
            return name() + ": " + base + "with probability " + fmt(lt_.target_prob) +
                   " per sample (never when y = c*) the attack is targeted PGD toward c* = " +
                   std::to_string(lt_.critical_class) +
                   " (both attacks run on the whole batch, rows picked per sample); loss mean CE (docs/protocols/longtail.md §5)";
    }
    return name();
}

void LongTailAt::ensure_classes(int num_classes) {
    const size_t c = static_cast<size_t>(num_classes);
    if (weights_.size() == c) return;
    if (lt_.critical_class >= num_classes)
        throw std::invalid_argument(name() + ": --critical-class " + std::to_string(lt_.critical_class) +
                                    " is not a class of a " + std::to_string(num_classes) + "-class problem");
    n_eff_.assign(c, 0);
    n_seen_.assign(c, 0);
    weights_.assign(c, 1.0);
    margins_.assign(c, lt_.ldam_max_margin);   // equal counts: every margin is the maximum
    cos_sum_.assign(c, 0.0);
    cos_batches_.assign(c, 0.0);
    targeted_.assign(c, 0.0);
    seen_.assign(c, 0.0);
    if (kind_ == LongTailKind::CostSensitive && lt_.critical_class >= 0)
        weights_ = critical_class_weights(num_classes, lt_.critical_class, lt_.critical_weight);
}

void LongTailAt::refresh(int64_t epoch) {
    refreshed_for_ = epoch;
    const int c = static_cast<int>(weights_.size());
    std::vector<double> r;
    for (size_t k = 0; k < n_eff_.size(); ++k)
        r.push_back(n_seen_[k] > 0 ? static_cast<double>(n_eff_[k]) / static_cast<double>(n_seen_[k]) : 0.0);
    switch (kind_) {
        case LongTailKind::CostSensitive:
            weights_ = lt_.critical_class >= 0 ? critical_class_weights(c, lt_.critical_class, lt_.critical_weight)
                       : have_stats_       ? cost_sensitive_weights(r, lt_.cs_power)
                                           : std::vector<double>(weights_.size(), 1.0);
            break;
        case LongTailKind::ClassBalanced:
            if (have_stats_) weights_ = class_balanced_weights(n_eff_, lt_.cb_beta);
            break;
        case LongTailKind::LdamDrw:
            if (have_stats_) margins_ = ldam_margins(n_eff_, lt_.ldam_max_margin);
            weights_ = have_stats_ && epoch >= drw_epoch_ ? class_balanced_weights(n_eff_, lt_.cb_beta)
                                                           : std::vector<double>(weights_.size(), 1.0);
            break;
        case LongTailKind::CosineReg:
        case LongTailKind::TargetClass: break;
    }
}

void LongTailAt::start_epoch(const EpochStart& start) {
    if (weights_.empty()) return;   // classes unknown until the first batch: epoch 0 of a fresh run, all uniform
    std::fill(cos_sum_.begin(), cos_sum_.end(), 0.0);
    std::fill(cos_batches_.begin(), cos_batches_.end(), 0.0);
    std::fill(targeted_.begin(), targeted_.end(), 0.0);
    std::fill(seen_.begin(), seen_.end(), 0.0);
    refresh(start.epoch);
}

EpochDecision LongTailAt::end_epoch(const EpochEnd& end) {
    ensure_classes(end.train.num_classes());
    n_eff_ = end.train.correct;
    n_seen_ = end.train.seen;
    have_stats_ = true;
    return {};
}

Tensor LongTailAt::adversarial(const BatchInput& in) {
    if (kind_ != LongTailKind::TargetClass) return attack_.run(in.model, in.images, in.labels, in.rng).x_adv;
    const std::vector<int32_t> pick = draw_critical_targets(in.host_labels, lt_.critical_class, lt_.target_prob, in.rng);
    std::vector<float> mask;
    attacks::PerSample ps;
    bool any = false;
    for (size_t i = 0; i < pick.size(); ++i) {
        const int32_t y = in.host_labels[i];
        mask.push_back(pick[i] >= 0 ? 1.f : 0.f);
        // rows not targeted still need a valid target ≠ y; their targeted result is discarded
        ps.targets.push_back(pick[i] >= 0 ? pick[i] : (y + 1) % in.num_classes);
        seen_[static_cast<size_t>(y)] += 1;
        if (pick[i] >= 0) {
            targeted_[static_cast<size_t>(y)] += 1;
            any = true;
        }
    }
    const Tensor untargeted = attack_.run(in.model, in.images, in.labels, in.rng).x_adv;
    if (!any) return untargeted;
    const Tensor toward = toward_critical_.run(in.model, in.images, in.labels, in.rng, ps).x_adv;
    NoGradGuard no_grad;
    return where_rows(Tensor::from_vector(mask, {static_cast<int64_t>(mask.size())}, in.images.device()), toward,
                      untargeted);
}

BatchLoss LongTailAt::batch_loss(const BatchInput& in) {
    ensure_classes(in.num_classes);
    const Tensor x_adv = adversarial(in);
    in.model.train();
    const Tensor logits = in.model(x_adv);
    switch (kind_) {
        case LongTailKind::CostSensitive:
        case LongTailKind::ClassBalanced:
            return {weighted_ce_terms(logits, in.labels, in.host_labels, weights_), logits.detach()};
        case LongTailKind::LdamDrw:
            return {weighted_ce_terms(ldam_logits(logits, in.host_labels, margins_, lt_.ldam_scale), in.labels,
                                      in.host_labels, weights_),
                    logits.detach()};
        case LongTailKind::CosineReg: {
            std::vector<double> rows;
            const Tensor r = cosine_regulariser(logits, in.host_labels, in.num_classes, &rows);
            for (size_t k = 0; k < rows.size(); ++k)
                if (rows[k] >= 0) {
                    cos_sum_[k] += rows[k];
                    cos_batches_[k] += 1;
                }
            const float b = static_cast<float>(logits.size(0));
            // the batch-level term spread evenly over the samples, so the per-sample terms still sum to the loss
            return {add(per_sample_mean_ce(logits, in.labels), mul(r, lt_.cos_lambda / b)), logits.detach()};
        }
        case LongTailKind::TargetClass: break;
    }
    return {per_sample_mean_ce(logits, in.labels), logits.detach()};
}

std::vector<std::string> LongTailAt::class_state_names() const {
    switch (kind_) {
        case LongTailKind::CostSensitive: return {"weight", "robust_acc"};
        case LongTailKind::ClassBalanced: return {"weight", "n_eff"};
        case LongTailKind::LdamDrw: return {"weight", "margin", "n_eff"};
        case LongTailKind::CosineReg: return {"cos_penalty"};
        case LongTailKind::TargetClass: return {"targeted_frac"};
    }
    return {};
}

std::vector<std::vector<double>> LongTailAt::class_state() const {
    const std::vector<double> n(n_eff_.begin(), n_eff_.end());
    const std::vector<double> seen(n_seen_.begin(), n_seen_.end());
    auto ratio = [](const std::vector<double>& a, const std::vector<double>& b) {
        std::vector<double> r;
        for (size_t k = 0; k < a.size(); ++k) r.push_back(b[k] > 0 ? a[k] / b[k] : 0.0);
        return r;
    };
    switch (kind_) {
        case LongTailKind::CostSensitive: return {weights_, ratio(n, seen)};
        case LongTailKind::ClassBalanced: return {weights_, n};
        case LongTailKind::LdamDrw: return {weights_, margins_, n};
        case LongTailKind::CosineReg: return {ratio(cos_sum_, cos_batches_)};
        case LongTailKind::TargetClass: return {ratio(targeted_, seen_)};
    }
    return {};
}

namespace {
// Counts are integers below 2^24 per class and epoch: exact in float.
Tensor counts_tensor(const std::vector<int64_t>& v) {
    return Tensor::from_vector(std::vector<float>(v.begin(), v.end()), {static_cast<int64_t>(v.size())});
}
}  // namespace

void LongTailAt::save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const {
    if (weights_.empty()) return;
    tensors["n_eff"] = counts_tensor(n_eff_);
    tensors["n_seen"] = counts_tensor(n_seen_);
    put_vector(meta, "cos_sum", cos_sum_);
    put_vector(meta, "cos_batches", cos_batches_);
    put_vector(meta, "targeted", targeted_);
    put_vector(meta, "seen", seen_);
    meta["have_stats"] = have_stats_ ? "1" : "0";
    meta["refreshed_for"] = std::to_string(refreshed_for_);
}

void LongTailAt::load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) {
    if (tensors.find("n_eff") == tensors.end()) return;   // saved before the first batch: nothing learned yet
    const size_t c = tensors.at("n_eff").to_vector().size();
    auto get = [&](const std::string& key, size_t entries) {
        const auto t = tensors.find(key);
        if (t == tensors.end()) throw std::runtime_error(name() + " state: tensor '" + key + "' missing");
        std::vector<float> v = t->second.to_vector();
        if (v.size() != entries)
            throw std::runtime_error(name() + " state: tensor '" + key + "' has " + std::to_string(v.size()) +
                                     " entries, expected " + std::to_string(entries));
        return v;
    };
    auto key = [&](const std::string& k) {
        const auto it = meta.find(k);
        if (it == meta.end()) throw std::runtime_error(name() + " state: metadata '" + k + "' missing");
        return it->second;
    };
    weights_.clear();
    ensure_classes(static_cast<int>(c));
    const std::vector<float> n = get("n_eff", c), seen = get("n_seen", c);
    for (size_t k = 0; k < c; ++k) {
        n_eff_[k] = static_cast<int64_t>(n[k]);
        n_seen_[k] = static_cast<int64_t>(seen[k]);
    }
    cos_sum_ = get_vector<double>(meta, "cos_sum", static_cast<long>(c));
    cos_batches_ = get_vector<double>(meta, "cos_batches", static_cast<long>(c));
    targeted_ = get_vector<double>(meta, "targeted", static_cast<long>(c));
    seen_ = get_vector<double>(meta, "seen", static_cast<long>(c));
    have_stats_ = key("have_stats") == "1";
    refreshed_for_ = std::stoll(key("refreshed_for"));
    if (refreshed_for_ >= 0) refresh(refreshed_for_);
}

}  // namespace cw::train
