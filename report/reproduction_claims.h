#pragma once
// The papers' claims the reproduction study can test (docs/reproduction.md), each an arm against a base at one
// checkpoint each, on one metric (reproduction_runs.h), and how a claim's seeds pair up.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/reproduction_runs.h"

namespace cw::report::reproduction {

struct ClaimSpec {
    std::string text, source, arm, arm_checkpoint, base, base_checkpoint, metric;
    int direction = +1;                // the paper's direction: +1 the arm raises the metric
    std::optional<double> paper_size;  // the paper's size of the effect, where it gives one
    std::optional<double> floor;       // a bound claim instead of a direction (judge_at_least)
    std::string paper_value;           // what the paper reports, for the page
    std::string headline;              // the claim's row in the verdict table (README.md); empty: the page only
};

// Every claim, in page order.
const std::vector<ClaimSpec>& claims();

// A claim's paired values over seeds (arm's metric, base's metric), the base run chosen by `partner`; seeds where
// either value is missing are left out.
std::vector<std::pair<double, double>> claim_pairs(const ClaimSpec& c, const Arm& arm, const Arm& base);
// arm − base per paired seed.
std::vector<double> differences(const ClaimSpec& c, const Arm& arm, const Arm& base);

// Whether a worst-class metric is 0 in every paired run of both arms: the floor of the scale (GTSRB-17's
// speed-limit signs), where "no lift" says nothing about a method beyond that it could not lift a class from 0.
bool both_at_zero(const ClaimSpec& c, const Arm& arm, const Arm& base);

}  // namespace cw::report::reproduction
