#pragma once
// CW-style margin PGD, "CW∞" (docs/protocols/attacks.md §3): PGD (pgd.h) maximising −max(m(z, y) + κ, 0) with
// m(z, y) = z_y − max_{j≠y} z_j; maximising drives the margin down to −κ.
#include "attacks/pgd.h"

namespace cw::attacks {

// CW-20, our evaluation default: κ = 0, 20 steps, α = 2/255, ε = 8/255, uniform random start.
PgdConfig cw20_config(float eps = 8.f / 255, float alpha = 2.f / 255, ModelMode mode = ModelMode::Eval);
// "CW∞-30 (WAT)": κ = 50, 30 steps, α = 0.003, ε = 0.031, uniform random start.
PgdConfig cw_wat_config(float eps = 0.031f, ModelMode mode = ModelMode::Eval);

}  // namespace cw::attacks
