#pragma once
// The fair methods' families (train/methods/family.h), each defined beside its methods; jobs/families.cpp lists
// them with the baselines.
#include "train/methods/family.h"

namespace cw::train {

MethodFamily cfa_fairtat_family();               // fairness/methods/cfa_fairtat_family.cpp
MethodFamily frl_wat_family();                   // fairness/methods/frl_wat_family.cpp
MethodFamily longtail_bat_family();              // fairness/methods/longtail_bat_family.cpp
MethodFamily dafa_trix_family();                 // fairness/methods/dafa_trix_family.cpp
MethodFamily faal_family();                      // fairness/methods/faal_family.cpp

}  // namespace cw::train
