#include "report/claims.h"

#include <cmath>
#include <stdexcept>

namespace cw::report {

double t_quantile_975(int df) {
    // Two-sided 95% critical values of Student's t (standard tables), df 1..30.
    static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                   2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                   2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) throw std::invalid_argument("t_quantile_975: degrees of freedom must be >= 1, got " + std::to_string(df));
    if (df <= 30) return table[df - 1];
    if (df <= 40) return 2.021;
    if (df <= 60) return 2.000;
    if (df <= 120) return 1.980;
    return 1.960;
}

PairedEffect paired_effect(const std::vector<double>& d) {
    PairedEffect e;
    e.n = static_cast<int>(d.size());
    if (e.n == 0) return e;
    for (double x : d) e.mean += x;
    e.mean /= e.n;
    e.lo = e.hi = e.mean;
    if (e.n < 2) return e;
    double ss = 0;
    for (double x : d) ss += (x - e.mean) * (x - e.mean);
    e.sd = std::sqrt(ss / (e.n - 1));
    const double half = t_quantile_975(e.n - 1) * e.sd / std::sqrt(static_cast<double>(e.n));
    e.lo = e.mean - half;
    e.hi = e.mean + half;
    return e;
}

std::string verdict_name(Verdict v) {
    switch (v) {
        case Verdict::reproduced: return "reproduced";
        case Verdict::not_reproduced: return "not reproduced";
        case Verdict::undecided: return "undecided";
    }
    return "undecided";
}

Verdict judge(const PairedEffect& e, const Claim& c) {
    if (e.n < 2) return Verdict::undecided;
    // Work in the paper's direction: a claimed rise is a positive effect, a claimed fall a negative one.
    const double lo = c.direction > 0 ? e.lo : -e.hi, hi = c.direction > 0 ? e.hi : -e.lo;
    if (lo > 0) return Verdict::reproduced;
    if (c.paper_size ? hi < *c.paper_size : hi <= 0) return Verdict::not_reproduced;
    return Verdict::undecided;
}

Verdict judge_at_least(const PairedEffect& e, double floor) {
    if (e.n < 2) return Verdict::undecided;
    if (e.lo > floor) return Verdict::reproduced;
    if (e.hi < floor) return Verdict::not_reproduced;
    return Verdict::undecided;
}

std::optional<int> seeds_to_decide(double mean, double sd, int max_n) {
    if (mean == 0) return std::nullopt;
    for (int n = 2; n <= max_n; ++n)
        if (t_quantile_975(n - 1) * sd / std::sqrt(static_cast<double>(n)) < std::fabs(mean)) return n;
    return std::nullopt;
}

}  // namespace cw::report
