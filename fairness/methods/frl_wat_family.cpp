#include "train/methods/family.h"

namespace cw::train {

// Filled in by the FRL and WAT methods (issue 12).
MethodFamily frl_wat_family() { return MethodFamily{"FRL and WAT", {}, {}, {}}; }

}  // namespace cw::train
