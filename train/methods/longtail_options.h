#pragma once
// Settings of the Long-tail remedies and BAT methods (docs/protocols/longtail.md, docs/protocols/bat.md), part of
// train::MethodOptions.
namespace cw::train {

struct LongTailOptions {
    float cs_power = 1.f;            // longtail.md §1 scenario 1: w_k ∝ (1 − r_k)^p (p = 0: uniform)
    int critical_class = -1;         // longtail.md §1 scenario 2 and §5: the designated class c* (< 0: none)
    float critical_weight = 2.f;     // longtail.md §1 scenario 2: w_{c*} = ω before normalising (2 or 5)
    float cb_beta = 0.9999f;         // longtail.md §2 / DRW: class-balanced β
    float ldam_max_margin = 0.5f;    // longtail.md §3: max_k Δ_k
    float ldam_scale = 1.f;          // longtail.md §3: s (1 with a linear head; LDAM's cosine head uses 30)
    int drw_epoch = -1;              // longtail.md §3: first 0-based epoch with CB weights; < 0: 80% of run_epochs
    int run_epochs = 0;              // the run's length (the trainer's --epochs), for drw_epoch's default
    float cos_lambda = 0.1f;         // longtail.md §4: λ_cos
    float target_prob = 0.5f;        // longtail.md §5: p_t
    int bat_tau_max = 3;             // bat.md §2 (reconstruction): τ_k = round(τ_max · t_k)
    float bat_mu = 1.f;              // bat.md §2: weight μ of the uniform-target regulariser R_u
};

}  // namespace cw::train
