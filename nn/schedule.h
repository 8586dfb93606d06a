#pragma once
// Learning-rate schedules as pure functions of the training progress t, in epochs (fractional). The training
// loop sets optimizer.set_lr(schedule.lr(t)) before each step:
//   per iteration, Rice et al. style: t = progress_after_step(epoch, i, n)  = epoch + (i+1)/n
//   per iteration, torch CyclicLR style (Wong et al.): t = progress_before_step(epoch, i, n) = epoch + i/n
//   per epoch (torch MultiStepLR): t = epoch
// with 0-based epoch and batch index i of n batches per epoch.
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cw::nn {

double progress_after_step(int64_t epoch, int64_t batch, int64_t batches_per_epoch);
double progress_before_step(int64_t epoch, int64_t batch, int64_t batches_per_epoch);

class LrSchedule {
public:
    virtual ~LrSchedule() = default;
    virtual double lr(double t) const = 0;
};
using LrSchedulePtr = std::shared_ptr<const LrSchedule>;

class ConstantLr : public LrSchedule {
public:
    explicit ConstantLr(double lr) : lr_(lr) {}
    double lr(double) const override { return lr_; }
private:
    double lr_;
};

// Rice et al. "piecewise" (docs/protocols/training.md §3): base if t/E < 0.5, base/10 if t/E < 0.75, else base/100.
class PiecewiseLr : public LrSchedule {
public:
    PiecewiseLr(double base, double epochs);
    double lr(double t) const override;
private:
    double base_, epochs_;
};

// Multi-step: base times the factor of the last milestone <= t (1 before the first). Factors are absolute
// (FAT: {60: 0.1, 90: 0.01, 110: 0.005}); the gamma constructor gives gamma^k at the k-th milestone.
class MultiStepLr : public LrSchedule {
public:
    MultiStepLr(double base, std::vector<std::pair<double, double>> milestone_factors);
    MultiStepLr(double base, const std::vector<double>& milestones, double gamma);
    double lr(double t) const override;
private:
    double base_;
    std::vector<std::pair<double, double>> steps_;  // sorted by milestone
};

// Cosine annealing from base (t = 0) to final_lr (t >= E).
class CosineLr : public LrSchedule {
public:
    CosineLr(double base, double epochs, double final_lr = 0.0);
    double lr(double t) const override;
private:
    double base_, epochs_, final_;
};

// Piecewise-linear interpolation through (t_k, lr_k), constant beyond the ends (numpy.interp).
class LinearInterpLr : public LrSchedule {
public:
    LinearInterpLr(std::vector<double> knots, std::vector<double> values);
    double lr(double t) const override;
private:
    std::vector<double> knots_, values_;
};

// One cycle (Wong et al. fast AT): 0 -> peak linearly over the first peak_fraction of E epochs, then -> 0 at E.
// CIFAR: peak 0.2, fraction 0.5 (torch CyclicLR, use progress_before_step); MNIST: peak 5e-3, fraction 0.4.
LrSchedulePtr cyclic_lr(double peak, double epochs, double peak_fraction = 0.5);

// Linear warm-up in front of any schedule: inner.lr(t) * (start_factor + (1 - start_factor) * t / warmup)
// for t < warmup_epochs, inner.lr(t) afterwards.
class WarmupLr : public LrSchedule {
public:
    WarmupLr(LrSchedulePtr inner, double warmup_epochs, double start_factor = 0.0);
    double lr(double t) const override;
private:
    LrSchedulePtr inner_;
    double warmup_, start_;
};

// By name, for command lines: "constant", "piecewise", "multistep" (milestones, gamma), "cosine", "cyclic".
LrSchedulePtr make_lr_schedule(const std::string& name, double base_lr, double epochs,
                               const std::vector<double>& milestones = {}, double gamma = 0.1);

}  // namespace cw::nn
