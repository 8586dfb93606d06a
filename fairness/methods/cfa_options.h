#pragma once
// Settings of the CFA and FAIR-TAT methods (fairness.md), part of train::MethodOptions.
namespace cw::train {

struct CfaOptions {
};

}  // namespace cw::train
