#include "attacks/checks.h"

#include <cmath>
#include <sstream>

namespace cw::attacks {

std::string check_adversarial(const Images& x, const Images& x_adv, const std::vector<float>& eps, Norm norm,
                              float slack) {
    if (x.n != x_adv.n || x.dim() != x_adv.dim()) return "adversarial batch has a different shape from the input";
    const std::vector<float> dist = norm == Norm::Linf ? linf_dist(x_adv, x) : l2_dist(x_adv, x);
    for (int64_t i = 0; i < x.n; ++i) {
        for (int64_t j = 0; j < x.dim(); ++j) {
            const float v = x_adv.row(i)[j];
            std::ostringstream os;
            if (std::isnan(v)) os << "sample " << i << ": NaN in the adversarial image";
            else if (v < 0.f || v > 1.f) os << "sample " << i << ": value " << v << " outside [0, 1]";
            if (!os.str().empty()) return os.str();
        }
        if (dist[i] > eps[i] + slack) {
            std::ostringstream os;
            os << "sample " << i << ": " << norm_name(norm) << " distance " << dist[i] << " exceeds eps " << eps[i];
            return os.str();
        }
    }
    return "";
}

bool model_is_deterministic(nn::Module& model, const Tensor& x) {
    NoGradGuard no_grad;
    return model.forward(x).to_vector() == model.forward(x).to_vector();
}

}  // namespace cw::attacks
