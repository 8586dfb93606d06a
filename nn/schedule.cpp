#include "nn/schedule.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"

namespace cw::nn {

double progress_after_step(int64_t epoch, int64_t batch, int64_t batches_per_epoch) {
    return static_cast<double>(epoch) + static_cast<double>(batch + 1) / static_cast<double>(batches_per_epoch);
}

double progress_before_step(int64_t epoch, int64_t batch, int64_t batches_per_epoch) {
    return static_cast<double>(epoch) + static_cast<double>(batch) / static_cast<double>(batches_per_epoch);
}

PiecewiseLr::PiecewiseLr(double base, double epochs) : base_(base), epochs_(epochs) {
    if (!(epochs > 0)) throw Error("PiecewiseLr: epochs must be positive");
}

double PiecewiseLr::lr(double t) const {
    // Rice et al. compare t / E (not t with 0.5 E): kept so that the step positions match bit for bit.
    if (t / epochs_ < 0.5) return base_;
    if (t / epochs_ < 0.75) return base_ / 10.0;
    return base_ / 100.0;
}

MultiStepLr::MultiStepLr(double base, std::vector<std::pair<double, double>> milestone_factors)
    : base_(base), steps_(std::move(milestone_factors)) {
    std::sort(steps_.begin(), steps_.end());
}

MultiStepLr::MultiStepLr(double base, const std::vector<double>& milestones, double gamma) : base_(base) {
    std::vector<double> sorted = milestones;
    std::sort(sorted.begin(), sorted.end());
    double factor = 1.0;
    for (double m : sorted) steps_.emplace_back(m, factor *= gamma);
}

double MultiStepLr::lr(double t) const {
    double factor = 1.0;
    for (const auto& [milestone, f] : steps_)
        if (t >= milestone) factor = f;
    return base_ * factor;
}

CosineLr::CosineLr(double base, double epochs, double final_lr) : base_(base), epochs_(epochs), final_(final_lr) {
    if (!(epochs > 0)) throw Error("CosineLr: epochs must be positive");
}

double CosineLr::lr(double t) const {
    const double x = std::clamp(t / epochs_, 0.0, 1.0);
    return final_ + (base_ - final_) * 0.5 * (1.0 + std::cos(M_PI * x));
}

LinearInterpLr::LinearInterpLr(std::vector<double> knots, std::vector<double> values)
    : knots_(std::move(knots)), values_(std::move(values)) {
    if (knots_.empty() || knots_.size() != values_.size())
        throw Error("LinearInterpLr: need as many values as knots, at least one");
    for (size_t i = 1; i < knots_.size(); ++i)
        if (!(knots_[i] >= knots_[i - 1])) throw Error("LinearInterpLr: knots must be non-decreasing");
}

double LinearInterpLr::lr(double t) const {
    if (t <= knots_.front()) return values_.front();
    if (t >= knots_.back()) return values_.back();
    size_t i = 1;
    while (knots_[i] < t) ++i;  // knots_[i-1] < t <= knots_[i]
    const double span = knots_[i] - knots_[i - 1];
    if (span == 0) return values_[i];
    return values_[i - 1] + (values_[i] - values_[i - 1]) * (t - knots_[i - 1]) / span;
}

LrSchedulePtr cyclic_lr(double peak, double epochs, double peak_fraction) {
    if (!(epochs > 0) || !(peak_fraction > 0 && peak_fraction < 1))
        throw Error("cyclic_lr: epochs must be positive and peak_fraction in (0, 1)");
    return std::make_shared<LinearInterpLr>(std::vector<double>{0.0, peak_fraction * epochs, epochs},
                                            std::vector<double>{0.0, peak, 0.0});
}

WarmupLr::WarmupLr(LrSchedulePtr inner, double warmup_epochs, double start_factor)
    : inner_(std::move(inner)), warmup_(warmup_epochs), start_(start_factor) {
    if (!inner_) throw Error("WarmupLr: no inner schedule");
    if (warmup_ < 0) throw Error("WarmupLr: negative warm-up length");
}

double WarmupLr::lr(double t) const {
    const double base = inner_->lr(t);
    if (t >= warmup_) return base;
    return base * (start_ + (1.0 - start_) * std::max(t, 0.0) / warmup_);
}

LrSchedulePtr make_lr_schedule(const std::string& name, double base_lr, double epochs,
                               const std::vector<double>& milestones, double gamma) {
    if (name == "constant") return std::make_shared<ConstantLr>(base_lr);
    if (name == "piecewise") return std::make_shared<PiecewiseLr>(base_lr, epochs);
    if (name == "cosine") return std::make_shared<CosineLr>(base_lr, epochs);
    if (name == "cyclic") return cyclic_lr(base_lr, epochs);
    if (name == "multistep") {
        if (milestones.empty()) throw Error("lr schedule 'multistep' needs milestones");
        return std::make_shared<MultiStepLr>(base_lr, milestones, gamma);
    }
    throw Error("unknown lr schedule '" + name + "'; known: constant, piecewise, multistep, cosine, cyclic");
}

}  // namespace cw::nn
