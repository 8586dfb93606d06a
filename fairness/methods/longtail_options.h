#pragma once
// Settings of the Long-tail remedies and BAT methods (fairness.md), part of train::MethodOptions.
namespace cw::train {

struct LongTailOptions {
};

}  // namespace cw::train
