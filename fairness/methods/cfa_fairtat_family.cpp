#include <map>

#include "fairness/methods/cfa.h"
#include "fairness/methods/fair_tat.h"
#include "fairness/methods/families.h"
#include "util/flags.h"

namespace cw::train {

namespace {
void add_flags(cli::FlagSet& app, MethodOptions& o) {
    const std::string g = "CFA and FAIR-TAT";
    CfaOptions& c = o.cfa;
    app.option("--cfa-lambda", c.lambda_eps,
               "cfa_*: CCM lambda1 in eps_k = (lambda1 + t_k)*eps (default -1: the paper's 0.5 for cfa_at, 0.3 for "
               "cfa_trades, 0.7 for cfa_fat; the CFA code uses 0.5 for all: --cfa-lambda 0.5). cfa_* run a clean "
               "train-mode forward after every step, whatever the base, as CFA's code; FAWA (--ema fawa) keeps the "
               "paper's decay 0.85, threshold 0.2, from epoch 50 (CFA code: --ema-decay 0.88 --fawa-threshold 0.24 "
               "--ema-start 0)")
        .group(g);
    app.option("--cfa-lambda-beta", c.lambda_beta, "cfa_trades: CCR lambda2 in beta_k = (lambda2 + t_k)*beta (default 0.5)")
        .group(g);
    app.option("--cfa-begin", c.begin,
               "cfa_*: first (0-based) epoch using the calibrated eps_k/beta_k, from the previous epoch's t_k "
               "(default 10, CFA code; the paper states no warm-up — lower it for short runs)")
        .range(0, 1000000)
        .group(g);
    app.flag("!--no-cfa-ccm", c.ccm, "cfa_*: turn off CCM (eps_k = eps for every class)").group(g);
    app.flag("!--no-cfa-ccr", c.ccr,
             "cfa_trades: turn off CCR (beta_k = beta; the loss keeps CFA's division by 1+beta)")
        .group(g);
    app.option("--fair-tat-lambda", c.tat_lambda, "fair_tat, fair_tat_trades, fair_tat_fat: lambda in eps_k = (lambda + r_k)*eps (default 0.5, code "
               "--lambda-r). fair_tat_trades and fair_tat_fat are reconstructions (docs/protocols/fair_tat.md §4 item 4; the code "
               "ignores the target with TRADES and FAT): targeted eval-mode PGD from x + 0.001*N(0,I), then "
               "CFA-form TRADES (beta 6, no CCR); targeted early-stopped PGD (tau 3, --fat-tau, stops on argmax != y), "
               "then CE")
        .group(g);
    app.option("--fair-tat-begin", c.tat_begin,
               "fair_tat: first (0-based) epoch with eps scaling and the CFP prior (default 1, code)")
        .range(0, 1000000)
        .group(g);
    app.flag("!--no-fair-tat-eps-scaling", c.tat_eps_scaling,
             "fair_tat: plain targeted AT radii, eps_k = eps (the CFP prior stays on: independent switches, "
             "unlike the code where the prior is refreshed only inside the eps-scaling branch)")
        .group(g);
    const std::map<std::string, TargetPrior> priors{{"softmax", TargetPrior::Softmax},
                                                    {"proportional", TargetPrior::Proportional}};
    app.option("--fair-tat-prior", c.tat_prior,
               "fair_tat: target prior from the previous epoch's training CFP: softmax (code: softmax(scale*CFP)) | "
               "proportional (paper wording; reconstruction: max(CFP, floor), our floor); default softmax")
        .choice(priors, "softmax|proportional")
        .group(g);
    app.option("--fair-tat-softmax-scale", c.tat_softmax_scale, "fair_tat: softmax prior scale (default 2, code)")
        .group(g);
    app.option("--fair-tat-floor", c.tat_floor,
               "fair_tat: proportional prior floor (default 0.01; reconstruction: the paper gives none)")
        .group(g);
    app.flag("--fair-tat-random-target", c.tat_random_target,
             "fair_tat: ablation, targets uniform over the classes != y in every epoch")
        .group(g);
}
}  // namespace

MethodFamily cfa_fairtat_family() {
    MethodFamily f;
    f.title = "CFA and FAIR-TAT";
    f.names = {"cfa_at", "cfa_trades", "cfa_fat", "fair_tat", "fair_tat_trades", "fair_tat_fat"};
    f.make = [](const std::string& name, const MethodOptions& o) -> MethodPtr {
        if (name == "cfa_at") return std::make_unique<Cfa>(CfaBase::At, o);
        if (name == "cfa_trades") return std::make_unique<Cfa>(CfaBase::Trades, o);
        if (name == "cfa_fat") return std::make_unique<Cfa>(CfaBase::Fat, o);
        if (name == "fair_tat_trades") return std::make_unique<FairTat>(o, FairTat::Base::Trades);
        if (name == "fair_tat_fat") return std::make_unique<FairTat>(o, FairTat::Base::Fat);
        return std::make_unique<FairTat>(o);
    };
    f.add_flags = add_flags;
    return f;
}

}  // namespace cw::train
