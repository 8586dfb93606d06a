// cifar10_fairtat — FAIR-TAT (Medi, Jung, Keuper, WACV 2025), Table 1: every baseline and the FAIR-TAT versions
// trained the same way on CIFAR-10 (or CIFAR-100 with --dataset cifar100), compared class by class on the last
// checkpoint as the paper reports (and on the CFA-selected best one as well).
//
// Protocol (docs/protocols/fair_tat.md §3; the block below, every value a flag):
//   PreAct ResNet-18, SGD momentum 0.9, weight decay 5e-4, lr 0.1 divided by 10 at 50% and 75% of 200 epochs,
//   batch 128, L∞ ε = 8/255, 10-step attacks with α = 2/255, a 2% per-class validation split held out of training
//   for every method (FAWA and the best-checkpoint rule use it); per-epoch PGD-10; final PGD-20 per class.
//   Weight averaging (EMA, FAWA) from epoch 50 with decay 0.85 and FAWA threshold 0.2. FRL fine-tunes PGD-AT's
//   best checkpoint (its "hot start") for a fifth of the epochs at lr 0.001.
//   Beyond Table 1 (only when --arms names them): DAFA and TRIX on the same protocol, each with its own code's warm-up
//   share of the epochs, DAFA 70 of 110 and TRIX 70 of 150 (docs/protocols/dafa.md, trix.md); FAAL (Zhang et al., CVPR 2024; docs/protocols/faal.md)
//   fine-tunes the trades arm's best checkpoint (faal) or the pgd_at arm's (faal_pgd) for 2 epochs at lr 0.01, ÷10
//   after the first.
//   --transfer adds AutoAttack and Square-5000 (Table 2); --corruptions the 18 common corruptions per class (Tables
//   3-4); --ablations adds FAIR-TAT with uniform targets and FAIR-TAT without per-class ε.
//
//   --cpu-scale runs six of the arms at the CPU recipe (study/cifar10_cpu_recipe.h) on the whole training set.
//
//   ./experiments/cifar10_fairtat [--quick | --cpu-scale] [--arms pgd_at,fair_tat,...] [--dataset cifar100] [--transfer]
//                                 [--corruptions] [--ablations] [--epochs 200] [--resume] [--device auto]
// Out of scope: XCiT-S12 (the paper's transformer; no such model here).
#include <filesystem>
#include <iostream>
#include <map>
#include <utility>

#include "study/cifar10_cpu_recipe.h"
#include "study/study.h"
#include "util/flags.h"
#include "util/split_list.h"

using namespace cw;

namespace {

// The arms of Table 1, in the paper's order; each a method plus what the row adds (EMA, FAWA, the CFA parts).
// FRL's fine-tune from PGD-AT's best checkpoint: the paper's lr 0.001 for a fifth of the epochs unless given.
struct FrlFinetune {
    int64_t epochs = 0;   // 0: a fifth of --epochs
    double lr = 0.001;
};

std::vector<study::Arm> table1_arms(const train::JobConfig& base, bool ablations, const FrlFinetune& finetune) {
    std::vector<study::Arm> arms;
    auto add = [&](const std::string& name, const std::string& method) -> study::Arm& {
        arms.push_back(study::arm(name, base, method));
        return arms.back();
    };
    auto ema = [](study::Arm& a, const std::string& kind) -> study::Arm& {
        a.job.trainer.ema.every = kind;   // "epoch" (EMA) or "fawa"
        a.averaged = true;
        a.job.final_checkpoints = "last,ema_last,ema_best_fair";   // last too: the averaging's effect, and a fallback
        return a;
    };
    // FAIR-TAT compares against each base as the CFA code trains it: FAT with CFA's early-stopping (τ = 3).
    auto cfa_fat = [](study::Arm& a) { a.job.method_options.fat_semantics = attacks::FatSemantics::Cfa; };
    // FRL starts from PGD-AT's best checkpoint and fine-tunes it (docs/protocols/frl.md §2; lr 0.001, 40 of 200 epochs).
    auto frl = [&](study::Arm& a) {
        a.init_arm = "pgd_at";   // the pgd_at arm of the same seed (study/jobs.h: a dependency)
        a.init_file = "best_robust.safetensors";
        a.job.trainer.recipe.lr = finetune.lr;
        a.job.trainer.recipe.schedule = "constant";
        a.job.common.epochs = finetune.epochs > 0 ? finetune.epochs : std::max<int64_t>(1, base.common.epochs / 5);
    };

    add("natural", "natural");
    add("pgd_at", "pgd_at");
    ema(add("pgd_at_ema", "pgd_at"), "epoch");
    ema(add("cfa_at", "cfa_at"), "fawa");
    add("trades", "trades");
    ema(add("trades_ema", "trades"), "epoch");
    ema(add("cfa_trades", "cfa_trades"), "fawa");
    cfa_fat(add("fat", "fat"));
    cfa_fat(ema(add("fat_ema", "fat"), "epoch"));
    ema(add("cfa_fat", "cfa_fat"), "fawa");
    frl(add("frl", "frl_rwrm"));
    frl(ema(add("frl_ema", "frl_rwrm"), "epoch"));
    add("bat_trades", "bat");
    add("wat_trades", "wat");
    add("fair_tat", "fair_tat");
    ema(add("fair_tat_ema", "fair_tat"), "epoch");
    ema(add("fair_tat_fawa", "fair_tat"), "fawa");
    add("fair_tat_trades", "fair_tat_trades");
    add("fair_tat_fat", "fair_tat_fat");
    if (ablations) {
        add("fair_tat_uniform_targets", "fair_tat").job.method_options.cfa.tat_random_target = true;
        add("fair_tat_no_class_eps", "fair_tat").job.method_options.cfa.tat_eps_scaling = false;
    }
    return arms;
}

// Beyond Table 1: fair methods newer than FAIR-TAT, trained with the same protocol for comparison. Not part of
// "all" (the paper's table); --arms names them. DAFA and TRIX (docs/protocols/dafa.md, trix.md) keep their own
// codes' warm-up as a fraction of the run, at least 1 epoch — unless --dafa-warmup was given: DAFA's code 70 of 110
// epochs, TRIX's 70 of 150 (its arguments.py and scripts/trix.sh).
std::vector<study::Arm> beyond_table1_arms(const train::JobConfig& base, bool warmup_given) {
    std::vector<study::Arm> arms;
    for (const auto& [method, code_epochs] : {std::pair<std::string, int64_t>{"dafa", 110}, {"trix", 150}}) {
        arms.push_back(study::arm(method, base, method));
        if (!warmup_given)
            arms.back().job.method_options.dafa.warmup =
                static_cast<int>(std::max<int64_t>(1, base.common.epochs * 70 / code_epochs));
    }
    // FAAL fine-tunes a trained arm's best checkpoint for 2 epochs, lr 0.01 then 0.001 (its authors' ft_prn.py).
    auto faal = [&](const std::string& name, const std::string& base_arm) {
        arms.push_back(study::arm(name, base, "faal"));
        study::Arm& a = arms.back();
        a.init_arm = base_arm;   // that arm of the same seed (study/jobs.h: a dependency)
        a.init_file = "best_robust.safetensors";
        a.job.trainer.recipe.lr = 0.01;
        a.job.trainer.recipe.schedule = "multistep";
        a.job.trainer.recipe.milestones = {1};
        a.job.common.epochs = 2;
    };
    faal("faal", "trades");
    faal("faal_pgd", "pgd_at");
    return arms;
}

// --arms: a subset of the table and the rows beyond it, in that order ("all": the table's rows); FRL needs the
// PGD-AT arm it starts from.
std::vector<study::Arm> select_arms(std::vector<study::Arm> table, std::vector<study::Arm> beyond,
                                    const std::string& wanted) {
    if (wanted == "all") return table;
    std::vector<study::Arm> all = std::move(table);
    all.insert(all.end(), beyond.begin(), beyond.end());
    std::vector<std::string> names = util::split_list(wanted);
    for (const auto& n : names)
        if (std::none_of(all.begin(), all.end(), [&](const study::Arm& a) { return a.name == n; })) {
            std::string known;
            for (const auto& a : all) known += (known.empty() ? "" : ", ") + a.name;
            throw std::invalid_argument("--arms: no arm '" + n + "' (arms: " + known + ", or all)");
        }
    std::vector<study::Arm> out;
    for (const auto& a : all)
        if (std::find(names.begin(), names.end(), a.name) != names.end()) out.push_back(a);
    auto base_of = [](const study::Arm& a) { return a.init_arm; };
    for (const auto& a : out) {
        if (a.init_arm.empty()) continue;
        const std::string base = base_of(a);
        if (std::any_of(out.begin(), out.end(), [&](const study::Arm& b) { return b.name == base; })) continue;
        std::vector<std::string> users;   // every arm of the table that starts from `base`
        for (const auto& b : all)
            if (!b.init_arm.empty() && base_of(b) == base) users.push_back(b.name);
        std::string who;
        for (size_t i = 0; i < users.size(); ++i)
            who += (i == 0 ? "" : i + 1 == users.size() ? " and " : ", ") + users[i];
        throw std::invalid_argument("--arms: " + who + (users.size() > 1 ? " fine-tune" : " fine-tunes") + " the " +
                                    base + " arm's best checkpoint: list " + base + " too");
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    // ---- the paper's protocol (docs/protocols/fair_tat.md §3) ----------------------------------------------------------------
    train::JobConfig base;
    base.experiment = "cifar10_fairtat";
    base.common.out = "runs/cifar10_fairtat";
    base.common.epochs = 200;
    base.data.dataset = "cifar10";
    base.data.val_split = "fraction:0.02";
    base.data.batch_size = 128;
    base.arch = "preact_resnet18";
    base.trainer.recipe.lr = 0.1;                  // piecewise: ÷10 at 50% and 75% of the epochs
    base.trainer.ema.decay = 0.85f;
    base.trainer.ema.start_epoch = 50;
    base.trainer.ema.fawa_threshold = 0.2f;
    base.method_options.cfa.tat_lambda = 0.5f;
    base.method_options.cfa.tat_begin = 1;
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last,best_fair";
    std::string arms = "all";
    FrlFinetune frl_finetune;
    bool transfer = false, ablations = false, corruptions = false;
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "cifar10_fairtat";
    spec.epochs_help = "training epochs of every method (FRL fine-tunes for a fifth of them)";
    spec.quick_preset = {{"--arch", "gtsrb_cnn"},  {"--train-n", "2000"},    {"--epochs", "3"},
                         {"--eval-n", "300"},      {"--epoch-eval-n", "100"}, {"--batch-size", "64"},
                         {"--lr", "0.05"},         {"--cfa-begin", "1"},      {"--ema-start", "1"},
                         {"--val-split", "first:20"},
                         {"--arms", "natural,pgd_at,trades,cfa_at,fair_tat"}, {"--out", "runs/cifar10_fairtat_quick"}};
    spec.quick_what = "five of the arms with a small CNN on 2,000 real CIFAR-10 images, a few minutes on two cores";
    // Between the two: the CPU recipe on the whole training set (study/cifar10_cpu_recipe.h), six of the arms,
    // one seed; the time is the pilot's, measured on two Zen 3 cores (docs/reproduction.md, "CIFAR-10").
    spec.presets.push_back({"--cpu-scale",
                            "the CPU recipe (WideResNet-16-1, PGD-2 training, 9 one-cycle epochs) on all 49,000 "
                            "training images for six arms, one seed, about 4 hours on two cores; per-class tables of "
                            "clean and PGD-20 accuracy on the whole test set, into runs/cifar10_fairtat_cpu",
                            study::cifar10_cpu_recipe({{"--arms", "natural,pgd_at,trades,cfa_at,frl,fair_tat"},
                                                           {"--finetune-epochs", "2"}, {"--finetune-lr", "0.01"},
                                                           {"--out", "runs/cifar10_fairtat_cpu"}})});
    cli::FlagSet app{"classwise cifar10_fairtat: FAIR-TAT's Table 1, class by class", "cifar10_fairtat"};
    study::StudyFlags study_flags;
    study::add_experiment_flags(app, base, spec, study_flags, {});
    app.remove("--method");
    app.option("--arms", arms, "the rows to run, comma-separated (default all: Table 1's rows; the rows beyond "
                                   "Table 1, dafa, trix, faal and faal_pgd, only when named; see the list in the source or an error "
                                   "message)").show_default();
    app.option("--finetune-epochs", frl_finetune.epochs, "epochs of the FRL arms from PGD-AT's best checkpoint (0: a "
                                                             "fifth of --epochs, the paper's 40 of 200)")
        .range(int64_t{0}, int64_t{1000000}).show_default();
    app.option("--finetune-lr", frl_finetune.lr, "constant learning rate of the FRL arms (the paper's 0.001)")
        .range(1e-9, 1e3).show_default();
    app.flag("--transfer", transfer, "also evaluate under AutoAttack and Square-5000 (Table 2)");
    app.flag("--corruptions", corruptions, "also evaluate per class on the 18 common corruptions of FAIR-TAT's "
                                               "Tables 3-4 (CIFAR-10-C files when present, else generated)");
    app.flag("--ablations", ablations, "add FAIR-TAT with uniform targets and FAIR-TAT without per-class eps");
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    const bool warmup_given = app.get("--dafa-warmup").given() > 0;
    return cli::run_guarded("cifar10_fairtat", [&] {
        if (transfer) base.final_attacks += ",autoattack,square5000";
        if (corruptions && base.final_corruptions.empty()) base.final_corruptions = "fair-tat";
        study::Study s;
        s.title = "FAIR-TAT Table 1 on " + base.data.dataset + ": average and worst class, clean and under PGD-20";
        s.arms = select_arms(table1_arms(base, ablations, frl_finetune), beyond_table1_arms(base, warmup_given), arms);
        s.attack = "pgd20";
        return study::run_study(s, base.common, std::cout, study_flags);
    });
}
