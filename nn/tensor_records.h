#pragma once
// Conversions between engine tensors and safetensors records (nn/safetensors.h), shared by model checkpoints
// and training-state files. Engine tensors are F32 or I32; on disk:
//   F32 tensor          <-> F32 (F16 / BF16 / F64 accepted on load and converted)
//   I32 0-d tensor      <-> I64 scalar (BatchNorm's num_batches_tracked is a long in PyTorch)
//   I32 tensor, rank>0  <-> I32 (I64 accepted on load when every value fits)
#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor.h"
#include "nn/safetensors.h"

namespace cw::nn {

st::TensorRecord record_from_tensor(const Tensor& t);  // any device

// A new CPU tensor. `context` starts error messages ("ckpt.safetensors: tensor 'bn.running_mean'").
Tensor tensor_from_record(const st::TensorRecord& r, const std::string& context);

// Why `r` cannot be loaded into `target` (shape or dtype), or "" if it can. Same rules as above.
std::string record_mismatch(const st::TensorRecord& r, const Tensor& target);

// Copies r into target (any device); call only when record_mismatch(r, target) is "".
void copy_record_into(const st::TensorRecord& r, Tensor& target, const std::string& context);

// U64 words (RNG states) as a 1-d U64 record and back.
st::TensorRecord record_from_u64(const std::vector<uint64_t>& words);
std::vector<uint64_t> u64_from_record(const st::TensorRecord& r, const std::string& context);

}  // namespace cw::nn
