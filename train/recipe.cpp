#include "train/recipe.h"

#include <sstream>
#include <stdexcept>

#include "util/flags.h"

namespace cw::train {

std::unique_ptr<nn::Optimizer> make_optimizer(const Recipe& r, std::vector<Tensor*> params) {
    if (r.optimizer == "sgd")
        return std::make_unique<nn::SGD>(std::move(params),
                                         nn::SgdOptions{static_cast<float>(r.lr), static_cast<float>(r.momentum), 0.f,
                                                        static_cast<float>(r.weight_decay), r.nesterov});
    if (r.optimizer == "adam" || r.optimizer == "adamw") {
        nn::AdamOptions o;
        o.lr = static_cast<float>(r.lr);
        o.beta1 = static_cast<float>(r.adam_beta1);
        o.beta2 = static_cast<float>(r.adam_beta2);
        o.weight_decay = static_cast<float>(r.weight_decay);
        o.decoupled_weight_decay = r.optimizer == "adamw";
        return std::make_unique<nn::Adam>(std::move(params), o);
    }
    throw std::invalid_argument("--optimizer: expected sgd, adam or adamw, got '" + r.optimizer + "'");
}

nn::LrSchedulePtr make_schedule(const Recipe& r, double epochs) {
    nn::LrSchedulePtr s = r.schedule == "cyclic" ? nn::cyclic_lr(r.lr, epochs, r.cyclic_peak_fraction)
                                                 : nn::make_lr_schedule(r.schedule, r.lr, epochs, r.milestones, r.gamma);
    if (r.warmup_epochs > 0) s = std::make_shared<nn::WarmupLr>(s, r.warmup_epochs);
    return s;
}

std::string describe(const Recipe& r) {
    std::ostringstream s;
    s << r.optimizer << " lr " << r.lr;
    if (r.optimizer == "sgd") s << " momentum " << r.momentum << (r.nesterov ? " nesterov" : "");
    s << " wd " << r.weight_decay << ", " << r.schedule << " schedule";
    if (r.schedule == "multistep") {
        s << " (milestones";
        for (double m : r.milestones) s << " " << m;
        s << ", gamma " << r.gamma << ")";
    }
    if (r.warmup_epochs > 0) s << " after " << r.warmup_epochs << " warm-up epochs";
    return s.str();
}

void add_recipe_flags(cli::FlagSet& app, Recipe& r) {
    app.option("--optimizer", r.optimizer, "sgd, adam or adamw")
        .one_of({"sgd", "adam", "adamw"}).show_default();
    app.option("--lr", r.lr, "base learning rate").range(1e-9, 1e3).show_default();
    app.option("--momentum", r.momentum, "SGD momentum").range(0.0, 1.0).show_default();
    app.flag("--nesterov", r.nesterov, "SGD with Nesterov momentum");
    app.option("--weight-decay,--wd", r.weight_decay, "weight decay (all parameters, as the reference codes)")
        .range(0.0, 1.0).show_default();
    app.option("--schedule", r.schedule,
               "learning-rate schedule, updated every iteration: constant; piecewise (÷10 at 50% and 75%: "
               "Rice/CFA/FAIR-TAT); multistep (--milestones, --gamma); cosine; cyclic (0 → lr → 0, Wong et al.)")
        .one_of({"constant", "piecewise", "multistep", "cosine", "cyclic"}).show_default();
    app.option("--milestones", r.milestones, "multistep: epochs where the lr is multiplied by --gamma")
        .list_separator(',');
    app.option("--gamma", r.gamma, "multistep factor").range(1e-9, 1.0).show_default();
    app.option("--warmup-epochs", r.warmup_epochs, "linear warm-up from 0 over this many epochs")
        .range(0.0, 1e6).show_default();
    app.option("--cyclic-peak", r.cyclic_peak_fraction, "cyclic: fraction of training at the peak lr (CIFAR 0.5, MNIST 0.4)")
        .range(0.01, 0.99).show_default();
}

}  // namespace cw::train

namespace cw::train {
double schedule_time(const Recipe& r, int64_t epoch, int64_t batch, int64_t batches_per_epoch) {
    return r.schedule == "cyclic" ? nn::progress_before_step(epoch, batch, batches_per_epoch)
                                  : nn::progress_after_step(epoch, batch, batches_per_epoch);
}
}  // namespace cw::train
