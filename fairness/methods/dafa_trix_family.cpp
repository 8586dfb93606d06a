#include <map>

#include "fairness/methods/dafa.h"
#include "fairness/methods/trix.h"
#include "fairness/methods/families.h"
#include "util/flags.h"

namespace cw::train {

namespace {
void add_flags(cli::FlagSet& app, MethodOptions& o) {
    const std::string g = "DAFA and TRIX";
    DafaOptions& d = o.dafa;
    app.option("--dafa-warmup", d.warmup,
               "dafa, trix: warm-up epochs tau of plain TRADES; the class weights come from the tau-th epoch's "
               "adversarial probabilities and apply from 0-based epoch tau on (default 70, both codes; lower it "
               "for short runs)")
        .range(1, 1000000)
        .group(g);
    app.option("--dafa-lambda", d.lambda,
               "dafa, trix: lambda of the weight rule (default 1.0, code and the paper's CIFAR-10; the paper uses "
               "1.5 on CIFAR-100 and STL-10)")
        .range(0.0, 1e6)
        .group(g);
    const std::map<std::string, DafaTies> ties{{"code", DafaTies::Code}, {"paper", DafaTies::Paper}};
    app.option("--dafa-ties", d.ties,
               "dafa, trix: p_i(i) = p_j(j) exactly: code (W_i -= lambda*p_j(i)*p_i(i), the else branch) | paper "
               "(Algorithm 2: no change); default code")
        .choice(ties, "code|paper")
        .group(g);
    app.flag("!--no-trix-mixed", d.trix_mixed,
             "trix: ablation, every sample untargeted (TRIX's schedule without its mixed attack)")
        .group(g);
}
}  // namespace

MethodFamily dafa_trix_family() {
    MethodFamily f;
    f.title = "DAFA and TRIX";
    f.names = {"dafa", "trix"};
    f.make = [](const std::string& name, const MethodOptions& o) -> MethodPtr {
        if (name == "trix") return std::make_unique<Trix>(o);
        return std::make_unique<Dafa>(o);
    };
    f.add_flags = add_flags;
    return f;
}

}  // namespace cw::train
