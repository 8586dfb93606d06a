#pragma once
// The methods' ranking by worst-class robust accuracy against the rankings the newer papers publish for the same
// methods on a common protocol (results/reproduction/published/<dataset>.csv: one row per source table and method,
// numbers in percent as published, with where each was read). Per source table: the methods both have, our mean
// worst-class PGD-20 (last checkpoint, over seeds) beside the published worst-class robust accuracy, and Spearman's
// ρ of the two with a 95% interval (Fisher's z with Bonett and Wright's standard error, from four methods on).
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/reproduction_runs.h"

namespace cw::report::reproduction {

struct PublishedRow {
    std::string source, table, method, arch, attack, where_read;
    double clean_avg = NAN, clean_worst = NAN, robust_avg = NAN, robust_worst = NAN;
};

// Reads the CSV; a missing column or a malformed number is an error naming the file and the row.
std::vector<PublishedRow> read_published(const std::filesystem::path& csv);

// Our arm for a method as a paper names it ("PGD-AT", "AT", "TRADES", "FRL (RW+RM)", "CFA", "FAIR-TAT", "DAFA",
// "TRIX", "FAAL", ...); "" when we have no such arm.
std::string arm_of_published(const std::string& method);

// ρ's 95% interval from n pairs (nullopt below four: Fisher's z needs n − 3 > 0 and a spread worth stating).
std::optional<std::pair<double, double>> spearman_interval(double rho, int n);

// The section; nothing when the CSV is absent.
void ranking_section(std::ostream& md, const std::filesystem::path& csv, const std::map<std::string, Arm>& arms);

}  // namespace cw::report::reproduction
