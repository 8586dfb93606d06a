#include "fairness/methods/faal.h"
#include "fairness/methods/families.h"
#include "util/flags.h"

namespace cw::train {

namespace {
void add_faal_flags(cli::FlagSet& app, MethodOptions& o) {
    FaalOptions& f = o.faal;
    const std::string g = "FAAL";
    app.option("--faal-radius", f.radius,
               "faal*: radius r of the class distribution's uncertainty set KL(uniform||p) <= r (default 0.5, the "
               "authors' --scale; 0: uniform weights)")
        .range(0.0, 1e6)
        .group(g);
    app.option("--faal-batch-counts", f.batch_counts,
               "faal*: weigh each class's margin by its count in the batch, sum_i p_{y_i} l_{y_i} (the authors' "
               "code; default true) or count every class once, sum_k p_k l_k (false)")
        .group(g);
    app.option("--faal-beta", f.trades_beta, "faal_trades: KL weight of the TRADES loss (default 6)")
        .range(0.0, 1e6)
        .group(g);
    app.option("--faal-clean-forward", f.clean_forward,
               "faal: a train-mode forward on the clean batch after the one on x_adv, so BN's running statistics "
               "also see clean images (the authors' code; default true)")
        .group(g);
    app.flag("--faal-from-scratch", f.from_scratch,
             "faal*: train from random weights when no --init is given (FAAL fine-tunes a trained robust model: "
             "without --init and this flag a job refuses to start)")
        .group(g);
}
}  // namespace

// FAAL (docs/protocols/faal.md): fine-tunes an adversarially trained model (--init) for 2 epochs.
MethodFamily faal_family() {
    MethodFamily f;
    f.title = "FAAL";
    f.names = {"faal", "faal_trades"};
    f.make = [](const std::string& name, const MethodOptions& o) -> MethodPtr {
        return std::make_unique<Faal>(name == "faal" ? FaalLoss::At : FaalLoss::Trades, o);
    };
    f.add_flags = add_faal_flags;
    return f;
}

}  // namespace cw::train
