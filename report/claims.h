#pragma once
// A paper's claim tested on paired runs (docs/reproduction.md): each seed trains every arm from the same
// initialisation and data order, so the effect of a method is the per-seed difference arm − base, summarised by
// its mean and a 95% Student-t interval over the seeds. The verdict reads the interval against 0 and the paper's
// own size of the effect.
#include <optional>
#include <string>
#include <vector>

namespace cw::report {

// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1; the normal 1.96 beyond the table).
double t_quantile_975(int df);

struct PairedEffect {
    int n = 0;            // seeds with both arms
    double mean = 0;      // mean of the per-seed differences
    double sd = 0;        // their sample standard deviation (0 for one seed)
    double lo = 0, hi = 0;  // the 95% t interval (equal to the mean for one seed: no interval)
};
// differences[i] = arm − base at seed i.
PairedEffect paired_effect(const std::vector<double>& differences);

enum class Verdict { reproduced, not_reproduced, undecided };
std::string verdict_name(Verdict v);

// What the paper claims of an effect, in the direction it claims it: `direction` +1 (the arm raises the metric)
// or −1 (lowers it); `paper_size`, where the paper gives one, the size of the effect in that direction (> 0).
// Reproduced: the interval excludes 0 on the paper's side. Not reproduced: the interval excludes the paper's size
// from below (the effect is smaller than the paper's, possibly of the other sign), or, without a size, lies
// entirely on the other side of 0 or at it. Undecided otherwise, and for fewer than two seeds.
struct Claim {
    int direction = +1;
    std::optional<double> paper_size;
};
Verdict judge(const PairedEffect& e, const Claim& c);

// A bound claim: "the difference stays above `floor`" (e.g. floor −3: the arm costs at most 3 points).
// Reproduced when the interval's lower end is above the floor, not reproduced when its upper end is below it.
Verdict judge_at_least(const PairedEffect& e, double floor);

// How many seeds would decide an undecided effect if its mean and sd stayed as measured: the least n (up to
// max_n) whose t interval half-width t(n−1)·sd/√n is below |mean|; nullopt when even max_n would not (or mean 0).
std::optional<int> seeds_to_decide(double mean, double sd, int max_n = 100);

}  // namespace cw::report
