#include "attacks/registry.h"

#include <regex>
#include <stdexcept>

#include "util/split_list.h"
#include "attacks/apgd.h"
#include "attacks/apgd_targeted.h"
#include "attacks/autoattack.h"
#include "attacks/cw.h"
#include "attacks/fab.h"
#include "attacks/fgsm.h"
#include "attacks/fgsm_rs.h"
#include "attacks/pgd.h"
#include "attacks/square.h"

namespace cw::attacks {

const std::vector<std::string>& attack_name_patterns() {
    static const std::vector<std::string> names = {"fgsm",  "fgsm-rs", "pgd<K>", "pgd<K>-l2", "cw<K>",
                                                   "apgd-ce", "apgd-dlr", "apgd-t", "fab-t", "square<Q>",
                                                   "autoattack"};
    return names;
}

namespace {
// The K of pgd<K>, cw<K> or square<Q>: a step or query count from 1 to a million (pgd0 would be a random start
// alone, reported as an attack).
int count_in_name(const std::string& name, const std::string& digits) {
    if (digits.size() > 7 || std::stol(digits) < 1 || std::stol(digits) > 1000000)
        throw std::invalid_argument("attack '" + name + "': its number of steps or queries must lie in [1, 1000000]");
    return static_cast<int>(std::stol(digits));
}
}  // namespace

std::unique_ptr<Attack> make_attack(const std::string& name, const AttackOptions& o) {
    std::smatch m;
    if (name == "fgsm") return std::make_unique<Fgsm>(FgsmConfig{o.eps, false, o.mode});
    if (name == "fgsm-rs") return std::make_unique<FgsmRs>(FgsmRsConfig{o.eps, 1.25f, o.mode});
    if (std::regex_match(name, m, std::regex("pgd([0-9]+)(-l2)?"))) {
        PgdConfig c;
        c.steps = count_in_name(name, m[1]);
        c.restarts = o.restarts;
        c.mode = o.mode;
        if (m[2].matched) {
            c.norm = Norm::L2;
            c.eps = o.eps_l2;
            c.alpha = o.alpha_l2;
        } else {
            c.eps = o.eps;
            c.alpha = o.alpha;
        }
        c.name = name;
        return std::make_unique<Pgd>(c);
    }
    if (std::regex_match(name, m, std::regex("cw([0-9]+)"))) {
        PgdConfig c = cw20_config(o.eps, o.alpha, o.mode);
        c.steps = count_in_name(name, m[1]);
        c.restarts = o.restarts;
        c.name = name;
        return std::make_unique<Pgd>(c);
    }
    if (name == "apgd-ce" || name == "apgd-dlr") {
        ApgdConfig c;
        c.eps = o.eps;
        c.loss = name == "apgd-ce" ? ApgdLoss::CE : ApgdLoss::DLR;
        c.mode = o.mode;
        return std::make_unique<Apgd>(c);
    }
    if (name == "apgd-t") {
        ApgdTargetedConfig c;
        c.eps = o.eps;
        c.mode = o.mode;
        return std::make_unique<ApgdTargeted>(c);
    }
    if (name == "fab-t") {
        FabConfig c;
        c.eps = o.eps;
        c.mode = o.mode;
        return std::make_unique<FabTargeted>(c);
    }
    if (std::regex_match(name, m, std::regex("square([0-9]+)"))) {
        SquareConfig c;
        c.eps = o.eps;
        c.n_queries = count_in_name(name, m[1]);
        c.mode = o.mode;
        return std::make_unique<Square>(c);
    }
    if (name == "autoattack") {
        AutoAttackConfig c;
        c.eps = o.eps;
        c.mode = o.mode;
        return make_autoattack(c);
    }
    throw std::invalid_argument("unknown attack '" + name + "' (known: " + util::join_list(attack_name_patterns()) + ")");
}

}  // namespace cw::attacks
