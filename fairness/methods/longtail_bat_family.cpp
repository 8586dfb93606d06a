#include "fairness/methods/bat.h"
#include "fairness/methods/longtail_at.h"
#include "fairness/methods/families.h"
#include "util/flags.h"

namespace cw::train {

namespace {
void add_longtail_flags(cli::FlagSet& app, MethodOptions& o) {
    LongTailOptions& lt = o.longtail;
    const std::string g = "Long-tail remedies and BAT";
    app.option("--cs-power", lt.cs_power,
               "at_cost_sensitive: p of w_k ∝ (1 - r_k)^p, r_k = previous-epoch training robust accuracy "
               "(default 1; 0 = uniform)")
        .group(g);
    app.option("--critical-class", lt.critical_class,
               "at_cost_sensitive: scenario 2, weight only this class (w = --critical-weight, others 1); "
               "at_target_class: the class c* the targeted attacks aim at (default -1: none)")
        .group(g);
    app.option("--critical-weight", lt.critical_weight,
               "at_cost_sensitive scenario 2: omega, the critical class's weight before normalising (default 2; "
               "docs/protocols/longtail.md §1: 2 or 5)")
        .group(g);
    app.option("--cb-beta", lt.cb_beta,
               "at_class_balanced, at_ldam_drw (after DRW): beta of w_k = (1-beta)/(1-beta^n_k) (default 0.9999); "
               "n_k = robustly-correct training samples of the previous epoch (our proposal, docs/protocols/longtail.md §2)")
        .group(g);
    app.option("--ldam-max-margin", lt.ldam_max_margin,
               "at_ldam_drw: max_k Delta_k, Delta_k ∝ n_k^-1/4 (default 0.5). With our linear heads the margin is "
               "relative to the raw logit scale (s = 1): untested transfer, docs/protocols/longtail.md §3")
        .group(g);
    app.option("--ldam-scale", lt.ldam_scale,
               "at_ldam_drw: logit scale s (default 1 for a linear head; LDAM's cosine head uses 30)")
        .group(g);
    app.option("--drw-epoch", lt.drw_epoch,
               "at_ldam_drw: first 0-based epoch with class-balanced weights (default -1: 80% of the run)")
        .group(g);
    app.option("--cos-lambda", lt.cos_lambda,
               "at_cosine_reg: lambda_cos of the inter-class cosine regulariser (default 0.1; formula is ours, "
               "docs/protocols/longtail.md §4)")
        .group(g);
    app.option("--target-prob", lt.target_prob,
               "at_target_class: probability p_t that a sample's attack is targeted toward --critical-class "
               "(default 0.5; never for samples of that class)")
        .group(g);
    app.option("--bat-tau-max", lt.bat_tau_max,
               "bat (RECONSTRUCTION from the abstract, docs/protocols/bat.md): class k's early-stop budget is "
               "round(tau_max * t_k), t_k = previous-epoch training robust accuracy (default 3); per-sample budgets "
               "in one FAT-style early-stopped PGD with CFA's counter")
        .group(g);
    app.option("--bat-mu", lt.bat_mu,
               "bat (RECONSTRUCTION): weight mu of R_u = KL(uniform || softmax over the classes != y) at x', added "
               "to the TRADES loss (--beta, --trades-form) (default 1)")
        .group(g);
}
}  // namespace

MethodFamily longtail_bat_family() {
    MethodFamily f;
    f.title = "Long-tail remedies and BAT";
    f.names = {"at_cost_sensitive", "at_class_balanced", "at_ldam_drw", "at_cosine_reg", "at_target_class", "bat"};
    f.make = [](const std::string& name, const MethodOptions& o) -> MethodPtr {
        if (name == "at_cost_sensitive") return std::make_unique<LongTailAt>(LongTailKind::CostSensitive, o);
        if (name == "at_class_balanced") return std::make_unique<LongTailAt>(LongTailKind::ClassBalanced, o);
        if (name == "at_ldam_drw") return std::make_unique<LongTailAt>(LongTailKind::LdamDrw, o);
        if (name == "at_cosine_reg") return std::make_unique<LongTailAt>(LongTailKind::CosineReg, o);
        if (name == "at_target_class") return std::make_unique<LongTailAt>(LongTailKind::TargetClass, o);
        return std::make_unique<Bat>(o);
    };
    f.add_flags = add_longtail_flags;
    return f;
}

}  // namespace cw::train
