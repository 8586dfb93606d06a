#include "train/methods/family.h"

namespace cw::train {

// Filled in by the CFA and FAIR-TAT methods (issue 12).
MethodFamily cfa_fairtat_family() { return MethodFamily{"CFA and FAIR-TAT", {}, {}, {}}; }

}  // namespace cw::train
