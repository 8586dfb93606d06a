#pragma once
// Weight initialisers that some reference models use instead of PyTorch's layer defaults (those live in the
// layer constructors, nn/layers.cpp). All draw from an explicit Rng so that --seed reproduces them.
#include "engine/rng.h"
#include "engine/tensor.h"

namespace cw::nn::init {

// t ~ N(mean, std^2), in place (any device).
void normal_(Tensor& t, float mean, float std, Rng& rng = global_rng());

// torch.nn.init.kaiming_normal_ with a = 0 (gain sqrt 2): std = sqrt(2 / fan), fan = in*k*k (fan_in) or
// out*k*k (fan_out) of an OIHW conv weight or an [out, in] linear weight.
enum class Fan { In, Out };
void kaiming_normal_(Tensor& weight, Fan fan, Rng& rng = global_rng());

}  // namespace cw::nn::init
