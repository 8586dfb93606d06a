// quickstart — the main job, on a dataset that needs no download (Fashion-MNIST from the Debian package): the
// class-wise robustness gap and what a fair method does to it, in about seven minutes on two cores (docs/quickstart.md).
//
// Protocol (one visible block below; every value is a flag):
//   1. train the small CNN three ways on the same images and seed: natural training, PGD-AT (Madry et al., PGD-5), and a
//      fair adversarial training method (FAIR-TAT: targets drawn toward the classes that absorb the errors, and a
//      per-class ε);
//   2. audit each last model class by class (clean, FGSM, PGD-20) on the same test images;
//   3. compare them: a per-class table, the Markdown summary, one page per run and one comparison page.
//
//   ./experiments/quickstart [--quick] [--methods natural,pgd_at,fair_tat] [--epochs 3] [--eps 0.1] [--resume]
// Every flag of `train` works here too (see --help) and applies to every method; --methods replaces --method.
#include <iostream>

#include "study/study.h"
#include "util/flags.h"

int main(int argc, char** argv) {
    using namespace cw;
    // ---- the protocol's defaults -----------------------------------------------------------------------------
    train::JobConfig base;
    base.experiment = "quickstart";
    base.common.out = "runs/quickstart";
    base.common.epochs = 3;
    base.data.dataset = "fashion-mnist";
    base.data.train_n = 20000;          // a third of the training set: three methods in about seven minutes on two cores
    base.data.eval_n = 2000;
    base.data.epoch_eval_n = 500;
    base.trainer.recipe.lr = 0.05;
    // PGD-5 crafts the training examples of PGD-AT and FAIR-TAT (step 2.5 eps / 5 = 0.05): 6 passes per image instead of
    // PGD-10's 11, the same lesson on two seeds (docs/quickstart.md). The audit keeps PGD-20.
    base.method_options.steps = 5;
    base.final_attacks = "fgsm,pgd20";
    base.final_checkpoints = "last";
    // Fair methods that calibrate from the previous epoch start doing so after the first one (the papers' warm-ups
    // of 10 epochs are longer than this whole run).
    base.method_options.cfa.begin = 1;
    base.method_options.cfa.tat_begin = 1;
    std::string methods = "natural,pgd_at,fair_tat";
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "quickstart";
    spec.epochs_help = "training epochs of every method";
    // CI runs the quick preset on every change, so it is sized for CI's 20 minutes: it checks the machinery (three
    // methods trained, audited and compared), not the gap, which needs the full job's 20,000 images.
    spec.quick_preset = {{"--train-n", "2000"}, {"--epochs", "3"},          {"--batch-size", "64"},
                         {"--eval-n", "500"},   {"--epoch-eval-n", "200"}, {"--out", "runs/quickstart_quick"}};
    spec.quick_what = "the same three methods on 2,000 real Fashion-MNIST images, about 75 seconds on two cores";
    cli::FlagSet app{"classwise quickstart: natural vs PGD-AT vs a fair method, class by class", "quickstart"};
    cli::add_common_flags(app, base.common, spec);
    study::StudyFlags study_flags;
    study::add_study_flags(app, study_flags);
    train::add_job_flags(app, base);
    study::add_methods_flag(app, methods);
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("quickstart", [&] {
        study::Study s;
        s.title = "Fashion-MNIST, small CNN: per-class accuracy after natural, adversarial and fair adversarial training";
        s.arms = study::arms_for_methods("--methods", methods, base);
        s.attack = "pgd20";
        return study::run_study(s, base.common, std::cout, study_flags);
    });
}
