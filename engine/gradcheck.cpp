#include "engine/gradcheck.h"

#include <cmath>
#include <sstream>

#include "engine/autograd.h"
#include "engine/ops.h"

namespace cw {

namespace {
struct PoisonScope {
    bool prev = poison_new_tensors();
    PoisonScope() { set_poison_new_tensors(true); }
    ~PoisonScope() { set_poison_new_tensors(prev); }
};

double weighted_sum(const Tensor& y, const std::vector<float>& r) {
    const std::vector<float> v = y.to_vector();
    double s = 0;
    for (size_t i = 0; i < v.size(); ++i) s += static_cast<double>(v[i]) * r[i];
    return s;
}
}  // namespace

GradCheckResult gradcheck(const OpUnderTest& f, std::vector<Tensor> inputs, const GradCheckOptions& opt) {
    GradCheckResult res;
    std::ostringstream report;
    PoisonScope poison;

    // Fixed output weights R.
    Tensor probe;
    {
        NoGradGuard ng;
        probe = f(inputs);
    }
    Rng rng(opt.seed);
    std::vector<float> r(static_cast<size_t>(probe.numel()));
    rng.fill_uniform(r.data(), r.size(), -1.f, 1.f);
    Tensor weights = Tensor::from_vector(r, probe.shape(), probe.device());

    // Analytic gradients, accumulated on top of the sentinel.
    for (auto& x : inputs)
        if (x.requires_grad()) x.set_grad(Tensor::full(x.shape(), opt.sentinel, x.device()));
    Tensor y = f(inputs);
    if (!y.requires_grad()) {
        res.ok = false;
        res.report = "output does not require grad: the op recorded nothing";
        return res;
    }
    sum(mul(y, weights)).backward();

    for (size_t k = 0; k < inputs.size(); ++k) {
        Tensor& x = inputs[k];
        if (!x.requires_grad()) continue;
        if (!x.grad().defined()) {
            res.ok = false;
            report << "input " << k << ": no gradient was accumulated\n";
            continue;
        }
        std::vector<float> analytic = x.grad().to_vector();
        float* xp = x.data();
        std::vector<double> numeric(analytic.size());
        double scale = 0;
        for (size_t i = 0; i < analytic.size(); ++i) {
            const float orig = xp[i];
            xp[i] = orig + static_cast<float>(opt.step);
            const double up = [&] { NoGradGuard ng; return weighted_sum(f(inputs), r); }();
            xp[i] = orig - static_cast<float>(opt.step);
            const double down = [&] { NoGradGuard ng; return weighted_sum(f(inputs), r); }();
            xp[i] = orig;
            // The actually applied step differs from opt.step by float rounding of orig +- step.
            const double h2 = static_cast<double>(orig + static_cast<float>(opt.step)) -
                              static_cast<double>(orig - static_cast<float>(opt.step));
            numeric[i] = (up - down) / h2;
            scale = std::max(scale, std::fabs(numeric[i]));
        }
        int shown = 0;
        for (size_t i = 0; i < analytic.size(); ++i) {
            const double a = static_cast<double>(analytic[i]) - opt.sentinel;
            const double err = std::fabs(a - numeric[i]);
            ++res.checked;
            if (!std::isfinite(analytic[i])) {
                res.ok = false;
                if (shown++ < 5) report << "input " << k << " element " << i << ": gradient not written (NaN)\n";
                continue;
            }
            res.max_abs_error = std::max(res.max_abs_error, err);
            if (err > opt.atol * std::max(1.0, scale) + opt.rtol * std::fabs(numeric[i])) {
                res.ok = false;
                if (shown++ < 5)
                    report << "input " << k << " element " << i << ": analytic " << a << " vs numeric " << numeric[i]
                           << "\n";
            }
        }
    }
    res.report = report.str();
    return res;
}

}  // namespace cw
