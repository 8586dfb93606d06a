#include "fairness/methods/frl.h"
#include "fairness/methods/frl_baseline_rw.h"
#include "fairness/methods/wat.h"
#include "fairness/methods/families.h"
#include "util/flags.h"

namespace cw::train {

namespace {
void add_frl_wat_flags(cli::FlagSet& app, MethodOptions& o) {
    FrlOptions& f = o.frl;
    const std::string g = "FRL and WAT";
    app.option("--frl-tau1", f.tau1,
               "frl_*: clean-error violation tolerance tau1 (default -1: the variant's script, 0.10 frl_rw and "
               "frl_rm, 0.07 frl_rwrm; the paper's text gives 0.05)")
        .group(g);
    app.option("--frl-tau2", f.tau2,
               "frl_*: boundary-error violation tolerance tau2 (default -1: the variant's script, 0.10 frl_rw and "
               "frl_rm, 0.07 frl_rwrm; the paper's text gives 0.07)")
        .group(g);
    app.option("--frl-r1", f.r1, "frl_*, frl_baseline_rw: multiplier step r1 (lambda_bdy takes 2*r1; default 0.05)")
        .group(g);
    app.option("--frl-halve-every", f.halve_every,
               "frl_*: r1 <- r1/2 at every multiple of this 1-based epoch, before its update (default 40; 0: never)")
        .range(0, 1000000)
        .group(g);
    app.option("--frl-r2", f.r2, "frl_rm, frl_rwrm: step of lambda_m (default -1: 0.2 rwrm, 0.1 rm)").group(g);
    app.option("--frl-beta", f.beta,
               "frl_*: KL weight of the cost-sensitive TRADES loss (default -1: 1.5 frl_rw and frl_rwrm, 1.0 frl_rm, "
               "the scripts' values; frl_rm normalises as its script, sum(w_nat*CE + beta*w_bdy*KL)/sum(w_nat + "
               "w_bdy), the others sum w_nat*CE/sum w_nat + beta*sum w_bdy*KL/sum w_bdy)")
        .range(0.f, 1e6f)
        .group(g);
    app.option("--frl-lim", f.lim,
               "frl_*, frl_baseline_rw: Norm projection bound sum(lambda) <= lim (default -1: 0.5, frl_rm 0.3 as "
               "its script)")
        .group(g);
    app.option("--frl-m-lo", f.m_lo, "frl_rm, frl_rwrm: eps multiplier lower clip (default 0.98)").group(g);
    app.option("--frl-m-hi", f.m_hi, "frl_rm, frl_rwrm: eps multiplier upper clip (default -1: 3.0 rwrm, 2.5 rm)")
        .group(g);
    app.option("--frl-attack-step", f.attack_step,
               "frl_*: TRADES attack step (default -1: eps/4, 2/255 at 8/255; rwrm: max_b(eps_b)/4 per batch)")
        .group(g);
    app.option("--frl-val-steps", f.val_steps,
               "frl_*, frl_baseline_rw: PGD steps of the epoch-start validation attack (default 20; alpha eps/4)")
        .range(1, 100000)
        .group(g);
    app.option("--frl-baseline-tau", f.baseline_tau,
               "frl_baseline_rw (reconstruction of FRL's Baseline Reweight, no code exists: PGD-AT with class "
               "weights from validation robust-error violations): tolerance tau (default 0.05)")
        .group(g);
    app.option("--wat-eta", f.wat_eta, "wat: Hedge rate eta (default 0.1)").range(0.f, 1e6f).group(g);
    app.option("--wat-beta", f.wat_beta, "wat: TRADES beta of the loss and the validation cost (default 6)")
        .range(0.f, 1e6f)
        .group(g);
}
}  // namespace

// FRL (docs/protocols/frl.md; fine-tunes a hot start — the run's initial weights) and WAT (docs/protocols/wat.md). All need --val-split.
MethodFamily frl_wat_family() {
    MethodFamily f;
    f.title = "FRL and WAT";
    f.names = {"frl_rw", "frl_rm", "frl_rwrm", "frl_baseline_rw", "wat"};
    f.make = [](const std::string& name, const MethodOptions& o) -> MethodPtr {
        if (name == "frl_rw") return std::make_unique<Frl>(FrlVariant::Reweight, o);
        if (name == "frl_rm") return std::make_unique<Frl>(FrlVariant::Remargin, o);
        if (name == "frl_rwrm") return std::make_unique<Frl>(FrlVariant::ReweightRemargin, o);
        if (name == "frl_baseline_rw") return std::make_unique<FrlBaselineReweight>(o);
        return std::make_unique<Wat>(o);
    };
    f.add_flags = add_frl_wat_flags;
    return f;
}

}  // namespace cw::train
