#include "fairness/methods/families.h"
#include "jobs/registry.h"
#include "train/methods/family.h"

namespace cw::train {

const std::vector<MethodFamily>& method_families() {
    static const std::vector<MethodFamily> families{baseline_family(), cfa_fairtat_family(), frl_wat_family(),
                                                    longtail_bat_family(), dafa_trix_family(), faal_family()};
    return families;
}

}  // namespace cw::train
