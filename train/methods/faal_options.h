#pragma once
// Settings of FAAL (Zhang et al., CVPR 2024; docs/protocols/faal.md), part of train::MethodOptions. Defaults are the
// authors' code as its run scripts call it.
namespace cw::train {

struct FaalOptions {
    double radius = 0.5;          // r: KL(u ‖ p) ≤ r bounds the class distribution (the code's --scale; 0: uniform = AT)
    // The objective the weights maximise. Code (default): Σ_i p_{y_i}·ℓ_{y_i} over the batch = Σ_k n_k p_k ℓ_k (n_k
    // the batch's class-k samples). Off: Σ_k p_k ℓ_k, every class counted once.
    bool batch_counts = true;
    double trades_beta = 6;       // faal_trades: KL weight of the TRADES loss (the code's fixed 6)
    bool from_scratch = false;    // a job without --init is refused unless this is set (FAAL fine-tunes a trained model)
    bool clean_forward = true;    // the code's train-mode forward on the clean batch before the step (BN running stats)
};

}  // namespace cw::train
