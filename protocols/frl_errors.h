#pragma once
// FRL's Table 1 (Xu et al. §5): per model the average and worst-class clean ("standard"), boundary and robust
// ERROR, from one results.json — clean error 1 − A_nat, boundary error A_nat − A_rob (the FRL code's definition,
// results.json's per_class_boundary_error), robust error 1 − A_rob under the attack (PGD-20 in the paper).
// Averages are over samples (FRL's R(f)); the worst class is the one with the largest error of each kind.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::protocols {

struct ErrorRow {
    std::string label;
    double avg_std = 0, worst_std = 0, avg_bdy = 0, worst_bdy = 0, avg_rob = 0, worst_rob = 0;
    int worst_std_class = -1, worst_bdy_class = -1, worst_rob_class = -1;
};

// Throws naming `file` when the results lack the attack.
ErrorRow error_row(const std::string& label, const nlohmann::json& results, const std::string& attack,
                   const std::string& file);

// | model | avg std | worst std | avg bdy | worst bdy | avg rob | worst rob |, errors in %, worst with its class.
std::string error_table_markdown(const std::vector<ErrorRow>& rows, const std::vector<std::string>& classes);

}  // namespace cw::protocols
