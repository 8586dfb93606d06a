#include "train/methods/family.h"

#include <map>

#include "train/methods/fat.h"
#include "train/methods/fgsm_rs.h"
#include "train/methods/mart.h"
#include "train/methods/natural.h"
#include "train/methods/pgd_at.h"
#include "train/methods/trades.h"
#include "util/flags.h"

namespace cw::train {

namespace {
void add_baseline_flags(cli::FlagSet& app, MethodOptions& o) {
    const std::map<std::string, ModeChoice> modes{
        {"default", ModeChoice::Default}, {"train", ModeChoice::Train}, {"eval", ModeChoice::Eval}};
    const std::map<std::string, CleanForwardChoice> clean{{"default", CleanForwardChoice::Default},
                                                          {"off", CleanForwardChoice::Off},
                                                          {"train", CleanForwardChoice::Train},
                                                          {"eval", CleanForwardChoice::Eval}};
    const std::map<std::string, TradesForm> forms{{"original", TradesForm::Original}, {"cfa", TradesForm::CfaNormalised}};
    const std::map<std::string, attacks::FatSemantics> fat{{"original", attacks::FatSemantics::Original},
                                                           {"cfa", attacks::FatSemantics::Cfa}};
    const std::string g = "Training method";
    app.option("--alpha", o.alpha,
               "attack step of pgd_at/trades/fat/mart (default 2.5*eps/steps: 2/255 at eps 8/255, 10 steps; "
               "TRADES/FAT/MART codes use 0.007 at eps 0.031)")
        .group(g);
    app.option("--attack-steps", o.steps, "attack steps K of pgd_at/trades/fat/mart and of fair_tat's targeted PGD")
        .range(1, 100000)
        .show_default()
        .group(g);
    app.option("--attack-mode", o.attack_mode,
               "model mode while crafting: default (train for pgd_at, fgsm_rs, fat-cfa; eval for trades, mart, "
               "fat-original, as in the reference codes) | train | eval")
        .choice(modes, "default|train|eval")
        .group(g);
    app.flag("!--no-random-start", o.random_start,
             "ablation: pgd_at/fgsm_rs start at x; trades/mart skip the 0.001*N(0,I) noise (trades then never "
             "moves x'); not supported by fat")
        .group(g);
    app.option("--clean-forward", o.clean_forward,
               "clean forward after each step, for training clean accuracy: default (train for pgd_at, as Rice/CFA: "
               "BN running statistics also see clean batches; off otherwise) | off | train | eval")
        .choice(clean, "default|off|train|eval")
        .group(g);
    app.option("--beta", o.beta, "trades: KL weight (default 6, CIFAR; paper uses 1 on MNIST); mart: KL weight "
                                     "(default 5, MART's ResNet-18 code; 6 for WRN)")
        .range(0.f, 1e6f)
        .group(g);
    app.option("--trades-form", o.trades_form,
               "original: CE + beta*KL (Zhang et al.) | cfa: (1-b)*CE + b*KL with b = beta/(1+beta), the CFA / "
               "FAIR-TAT code form (= original/(1+beta)); default original")
        .choice(forms, "original|cfa")
        .group(g);
    app.option("--fat-semantics", o.fat_semantics,
               "original: Zhang et al.'s FAT (eval-mode attack, omega 0.001, dynamic tau) | cfa: CFA/FAIR-TAT's "
               "FAT baseline (train mode, omega 0, tau 3; a counter that never re-arms); default original")
        .choice(fat, "original|cfa")
        .group(g);
    app.option("--fat-tau", o.fat_tau,
               "fat: early-stop budget tau (default -1: original -> dynamic 0/1/2 for epochs 1-50/51-90/91+; cfa -> 3)")
        .group(g);
    app.option("--fat-omega", o.fat_omega, "fat: noise per step (default -1: original 0.001, cfa 0)").group(g);
    app.option("--fgsm-alpha-factor", o.fgsm_alpha_factor, "fgsm_rs: step = factor*eps (default 1.25, Wong et al.)")
        .group(g);
    app.flag("--fgsm-guard", o.fgsm_guard,
             "fgsm_rs: catastrophic-overfitting guard (Wong's --early-stop): PGD on each epoch's first batch "
             "(eval mode); stop and restore the previous check's weights when its accuracy drops")
        .group(g);
    app.option("--fgsm-guard-steps", o.fgsm_guard_steps, "fgsm_rs guard: PGD steps (default 5)").group(g);
    app.option("--fgsm-guard-alpha", o.fgsm_guard_alpha, "fgsm_rs guard: PGD step (default -1: eps/4, 2/255 at 8/255)")
        .group(g);
    app.option("--fgsm-guard-drop", o.fgsm_guard_drop,
               "fgsm_rs guard: stop when robust accuracy falls by more than this (default 0.2)")
        .group(g);
}

}  // namespace

MethodFamily baseline_family() {
    MethodFamily f;
    f.title = "Training method";
    f.names = {"natural", "pgd_at", "fgsm_rs", "trades", "fat", "mart"};
    f.make = [](const std::string& name, const MethodOptions& o) -> MethodPtr {
        if (name == "natural") return std::make_unique<Natural>(o);
        if (name == "pgd_at") return std::make_unique<PgdAt>(o);
        if (name == "fgsm_rs") return std::make_unique<FgsmRs>(o);
        if (name == "trades") return std::make_unique<Trades>(o);
        if (name == "fat") return std::make_unique<Fat>(o);
        return std::make_unique<Mart>(o);
    };
    f.add_flags = add_baseline_flags;
    return f;
}

}  // namespace cw::train
