#include "train/methods/family.h"

namespace cw::train {

// Filled in by the Long-tail remedies and BAT methods (issue 12).
MethodFamily longtail_bat_family() { return MethodFamily{"Long-tail remedies and BAT", {}, {}, {}}; }

}  // namespace cw::train
