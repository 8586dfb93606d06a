#pragma once
// The activation a model family is built with. The DeepMind-style robust models (dm_wide_resnet.h,
// dm_preact_resnet.h) come with ReLU or with SiLU ("Swish" in their code: x * sigmoid(x)); the other families
// are ReLU networks. Named in checkpoint metadata as "relu" / "silu".
#include <string>

#include "engine/ops.h"

namespace cw::nn {

enum class Activation { Relu, Silu };

inline Tensor activate(Activation a, const Tensor& x) { return a == Activation::Silu ? silu(x) : relu(x); }
inline const char* activation_name(Activation a) { return a == Activation::Silu ? "silu" : "relu"; }

}  // namespace cw::nn
