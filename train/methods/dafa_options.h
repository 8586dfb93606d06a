#pragma once
// Settings of DAFA and TRIX (docs/protocols/dafa.md, docs/protocols/trix.md), part of train::MethodOptions.
namespace cw::train {

// What DAFA's weight rule does when two classes have exactly the same self-probability p_i(i) = p_j(j).
enum class DafaTies {
    Code,    // the DAFA code's else branch: W_i −= λ·p_j(i)·p_i(i)
    Paper,   // the paper's Algorithm 2: neither branch, W_i unchanged by j
};

struct DafaOptions {
    int warmup = 70;               // τ: epochs of plain TRADES; the weights come from the τ-th (1-based) epoch (code 70)
    double lambda = 1.0;           // λ of the weight rule (code default and CIFAR-10; the paper uses 1.5 on CIFAR-100, STL-10)
    DafaTies ties = DafaTies::Code;
    bool trix_mixed = true;        // TRIX: off = every sample untargeted (TRIX without its mixed attack, for ablations)
};

}  // namespace cw::train
