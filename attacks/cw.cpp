#include "attacks/cw.h"

namespace cw::attacks {

PgdConfig cw20_config(float eps, float alpha, ModelMode mode) {
    PgdConfig c;
    c.eps = eps;
    c.alpha = alpha;
    c.steps = 20;
    c.loss = PgdLoss::Margin;
    c.kappa = 0.f;
    c.mode = mode;
    c.name = "cw20";
    return c;
}

PgdConfig cw_wat_config(float eps, ModelMode mode) {
    PgdConfig c;
    c.eps = eps;
    c.alpha = 0.003f;
    c.steps = 30;
    c.loss = PgdLoss::Margin;
    c.kappa = 50.f;
    c.mode = mode;
    c.name = "cw30-wat";
    return c;
}

}  // namespace cw::attacks
