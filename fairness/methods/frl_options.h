#pragma once
// Settings of the FRL and WAT methods (fairness.md), part of train::MethodOptions.
namespace cw::train {

struct FrlOptions {
};

}  // namespace cw::train
