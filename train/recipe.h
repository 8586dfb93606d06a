#pragma once
// The optimisation recipe of a run as flags: optimiser, learning rate and schedule, weight decay (docs/protocols/training.md §3;
// the Benz study varies all of them). Defaults are the Rice / CFA / FAIR-TAT CIFAR recipe: SGD momentum 0.9,
// weight decay 5e-4 on every parameter, lr 0.1, piecewise ÷10 at 50% and 75% of the epochs, updated per iteration.
#include <memory>
#include <string>
#include <vector>

#include "nn/optim.h"
#include "nn/schedule.h"

namespace cw::cli {
class FlagSet;
}

namespace cw::train {

struct Recipe {
    std::string optimizer = "sgd";        // sgd, adam, adamw
    double lr = 0.1;
    double momentum = 0.9;                // SGD
    bool nesterov = false;
    double weight_decay = 5e-4;
    double adam_beta1 = 0.9, adam_beta2 = 0.999;
    std::string schedule = "piecewise";   // constant, piecewise, multistep, cosine, cyclic
    std::vector<double> milestones;       // multistep (epochs)
    double gamma = 0.1;                   // multistep factor
    double warmup_epochs = 0;             // linear warm-up in front of the schedule
    double cyclic_peak_fraction = 0.5;    // cyclic: where the peak lr is reached
};

std::unique_ptr<nn::Optimizer> make_optimizer(const Recipe& r, std::vector<Tensor*> params);
nn::LrSchedulePtr make_schedule(const Recipe& r, double epochs);
// One line for logs: "sgd lr 0.1 momentum 0.9 wd 0.0005, piecewise schedule".
std::string describe(const Recipe& r);

void add_recipe_flags(cli::FlagSet& app, Recipe& r);

}  // namespace cw::train

namespace cw::train {
// Training progress t (epochs) the schedule is read at before batch i of n: Rice's per-iteration convention
// (epoch + (i+1)/n) for all schedules but the cyclic one, which follows torch's CyclicLR (epoch + i/n).
double schedule_time(const Recipe& r, int64_t epoch, int64_t batch, int64_t batches_per_epoch);
}  // namespace cw::train
