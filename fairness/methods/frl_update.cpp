#include "fairness/methods/frl_update.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cw::train {

std::vector<double> frl_norm(std::vector<double> v, double lim) {
    double total = 0;
    for (double& x : v) {
        x = std::max(x, 0.0);
        total += x;
    }
    if (total > lim)
        for (double& x : v) x = lim * x / total;
    return v;
}

double frl_r1_at(double r1, int64_t epoch, int halve_every) {
    if (halve_every <= 0) return r1;
    return std::ldexp(r1, -static_cast<int>((epoch + 1) / halve_every));
}

FrlValidationErrors frl_errors(const std::vector<double>& acc_nat, const std::vector<double>& acc_rob,
                               double overall_nat, double overall_rob) {
    if (acc_nat.size() != acc_rob.size())
        throw std::invalid_argument("frl: clean and robust accuracies have " + std::to_string(acc_nat.size()) +
                                    " and " + std::to_string(acc_rob.size()) + " classes");
    FrlValidationErrors e;
    e.overall_nat = 1 - overall_nat;
    e.overall_bdy = overall_nat - overall_rob;
    for (size_t i = 0; i < acc_nat.size(); ++i) {
        const bool absent = std::isnan(acc_nat[i]) || std::isnan(acc_rob[i]);
        e.nat.push_back(absent ? e.overall_nat : 1 - acc_nat[i]);
        e.bdy.push_back(absent ? e.overall_bdy : acc_nat[i] - acc_rob[i]);
    }
    return e;
}

FrlViolations frl_violations(const FrlValidationErrors& e, double tau1, double tau2) {
    FrlViolations g;
    for (double x : e.nat) g.nat.push_back(x - e.overall_nat - tau1);
    for (double x : e.bdy) g.bdy.push_back(x - e.overall_bdy - tau2);
    return g;
}

FrlMultipliers frl_update(const FrlMultipliers& lambda, const FrlViolations& g, const FrlUpdateRule& rule) {
    const size_t c = lambda.nat.size();
    if (lambda.bdy.size() != c || lambda.m.size() != c || g.nat.size() != c || g.bdy.size() != c)
        throw std::invalid_argument("frl: multipliers and violations must all have " + std::to_string(c) + " classes");
    FrlMultipliers next = lambda;
    auto step = [&](const std::vector<double>& v, const std::vector<double>& grad, double rate) {
        std::vector<double> out(c);
        for (size_t i = 0; i < c; ++i) out[i] = v[i] + rate * grad[i];
        return out;
    };
    if (rule.update_nat) next.nat = frl_norm(step(lambda.nat, g.nat, rule.r1), rule.lim);
    if (rule.update_bdy) next.bdy = frl_norm(step(lambda.bdy, g.bdy, 2 * rule.r1), rule.lim);
    if (rule.update_m) next.m = step(lambda.m, g.bdy, rule.r2);   // the code neither clips nor projects λ_m
    return next;
}

std::vector<double> frl_costs(const std::vector<double>& lambda) {
    const double c = static_cast<double>(lambda.size());
    double mean = 0;
    for (double x : lambda) mean += x / c;
    std::vector<double> w;
    for (double x : lambda) w.push_back(1 / c + x - mean);
    return w;
}

std::vector<double> frl_eps_multipliers(const std::vector<double>& lambda_m, double lo, double hi) {
    std::vector<double> m;
    for (double x : lambda_m) m.push_back(std::clamp(std::exp(2 * x), lo, hi));
    return m;
}

}  // namespace cw::train
