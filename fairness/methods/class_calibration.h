#pragma once
// What CFA and FAIR-TAT share: the class-wise calibrated value v_k = (λ + t_k)·v of CFA's CCM / CCR
// (docs/protocols/cfa.md §1, §2; FAIR-TAT's ε scaling docs/protocols/fair_tat.md §2), and the per-class vectors of their saved state.
#include <map>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace cw::train {

// (λ + t_k)·v for every class k; t_k is the class's training robust accuracy of the previous epoch.
std::vector<float> calibrated(float lambda, const std::vector<double>& t, float v);

// A per-class vector as a saved tensor [C], and back; `owner` names the method in the error when the key is
// missing or has the wrong length.
Tensor class_vector_tensor(const std::vector<double>& v);
std::vector<double> read_class_vector(const std::map<std::string, Tensor>& tensors, const std::string& key,
                                      int num_classes, const std::string& owner);

std::vector<double> as_double(const std::vector<float>& v);
// Each value rounded to float: state kept this way survives the float tensors of save_state exactly, so a resumed
// run draws the same targets.
std::vector<double> float_rounded(const std::vector<double>& v);

}  // namespace cw::train
