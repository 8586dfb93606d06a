// See published_ranking.h.
#include "report/published_ranking.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "eval/agreement.h"
#include "report/claims.h"
#include "util/atomic_file.h"
#include "util/csv.h"
#include "util/format.h"

namespace cw::report::reproduction {

namespace fs = std::filesystem;
using util::fixed;

std::vector<PublishedRow> read_published(const fs::path& csv) {
    const std::string name = csv.string();
    const util::CsvTable t = util::parse_csv(util::read_file_text(name), name);
    auto col = [&](const char* c) {
        const int i = t.column(c);
        if (i < 0) throw std::runtime_error(name + ": expected a column '" + c + "'");
        return static_cast<size_t>(i);
    };
    const size_t source = col("source"), table = col("table"), method = col("method"), arch = col("arch"),
                 attack = col("attack"), ca = col("clean_avg"), cw = col("clean_worst"), ra = col("robust_avg"),
                 rw = col("robust_worst"), where = col("where_read");
    auto number = [&](const std::string& cell) { return cell.empty() ? NAN : util::csv_number(cell, name); };
    std::vector<PublishedRow> rows;
    for (const auto& r : t.rows)
        rows.push_back({r[source], r[table], r[method], r[arch], r[attack], r[where], number(r[ca]), number(r[cw]),
                        number(r[ra]), number(r[rw])});
    return rows;
}

std::string arm_of_published(const std::string& method) {
    std::string key;
    for (unsigned char c : method)
        if (std::isalnum(c)) key += static_cast<char>(std::tolower(c));
    static const std::map<std::string, std::string> arms = {
        {"at", "pgd_at"},         {"pgdat", "pgd_at"},      {"madry", "pgd_at"},     {"pgd", "pgd_at"},
        {"trades", "trades"},     {"frl", "frl_rwrm"},      {"frlrwrm", "frl_rwrm"}, {"frlreweightremargin", "frl_rwrm"},
        {"cfa", "cfa_trades"},    {"cfatrades", "cfa_trades"}, {"cfaat", "cfa_at"},  {"fairtat", "fair_tat"},
        {"dafa", "dafa"},         {"trix", "trix"},         {"faal", "faal"},        {"wat", "wat"},
        {"bat", "bat"},           {"natural", "natural"},   {"standard", "natural"}};
    // FAAL's logs name the base they fine-tune: ours fine-tunes TRADES (faal) or PGD-AT (faal_pgd); AWP is not ours.
    if (key.rfind("faalatawp", 0) == 0) return "";
    if (key.rfind("faalat", 0) == 0)
        return key.find("ontrades") != std::string::npos ? "faal" : key.find("onpgdat") != std::string::npos ? "faal_pgd" : "";
    if (key == "atcfa") return "cfa_at";
    if (key == "tradescfa") return "cfa_trades";
    if (const auto it = arms.find(key); it != arms.end()) return it->second;
    // "TRADES + DAFA": a method on its TRADES base, as DAFA's and TRIX's tables write them.
    if (key.rfind("trades", 0) == 0)
        if (const auto it = arms.find(key.substr(6)); it != arms.end() && it->second != "pgd_at") return it->second;
    return "";
}

std::optional<std::pair<double, double>> spearman_interval(double rho, int n) {
    if (n < 4 || std::isnan(rho)) return std::nullopt;
    const double r = std::clamp(rho, -0.999999, 0.999999);
    const double z = std::atanh(r), se = std::sqrt((1 + r * r / 2) / (n - 3)), q = 1.959963984540054;
    return std::make_pair(std::tanh(z - q * se), std::tanh(z + q * se));
}

void ranking_section(std::ostream& md, const fs::path& csv, const std::map<std::string, Arm>& arms) {
    if (!fs::exists(csv)) return;
    const auto rows = read_published(csv);
    // Source tables in the order the file lists them.
    std::vector<std::pair<std::string, std::string>> tables;
    for (const auto& r : rows)
        if (std::find(tables.begin(), tables.end(), std::make_pair(r.source, r.table)) == tables.end())
            tables.emplace_back(r.source, r.table);
    md << "\n### The ranking of the methods against the published ones\n\n"
          "Per source table: the methods it shares with this study, ranked by worst-class robust accuracy — theirs as "
          "published (their attack and model), ours the mean worst-class PGD-20 accuracy of the last checkpoints over "
          "the seeds — and Spearman's ρ of the two (95% interval by Fisher's z with Bonett and Wright's standard "
          "error, from four shared methods on).\n";
    for (const auto& [source, table] : tables) {
        std::vector<double> theirs, ours;
        std::ostringstream body;
        std::string attack, arch, where;
        for (const auto& r : rows) {
            if (r.source != source || r.table != table || std::isnan(r.robust_worst)) continue;
            attack = r.attack, arch = r.arch, where = r.where_read;
            const std::string arm = arm_of_published(r.method);
            const auto a = arms.find(arm);
            if (arm.empty() || a == arms.end()) continue;
            std::vector<double> w;
            for (const auto& [seed, run] : a->second)
                if (const double v = metric(run, "last", "PGD-20 worst"); !std::isnan(v)) w.push_back(v);
            if (w.empty()) continue;
            const auto e = paired_effect(w);
            theirs.push_back(r.robust_worst), ours.push_back(e.mean);
            body << "| " << r.method << " | " << arm << " | " << fixed(r.robust_worst) << " | " << fixed(e.mean)
                 << (w.size() > 1 ? " ± " + fixed(e.sd) : "") << " (" << w.size() << (w.size() == 1 ? " seed" : " seeds")
                 << ") |\n";
        }
        md << "\n**" << source << ", " << table << "** (" << arch << ", " << attack << "; read from " << where << ")";
        if (theirs.size() < 2) {
            md << ": fewer than two shared methods with runs yet.\n";
            continue;
        }
        const double rho = fairness::spearman(theirs, ours);
        const auto ci = spearman_interval(rho, static_cast<int>(theirs.size()));
        md << ": ρ = " << fixed(rho, 2)
           << (ci ? " [" + fixed(ci->first, 2) + ", " + fixed(ci->second, 2) + "]" : std::string(" (no interval below four methods)"))
           << " over " << theirs.size() << " methods.\n\n| method (as published) | arm | published worst-class robust | "
              "ours: worst-class PGD-20 |\n|---|---|---|---|\n"
           << body.str();
    }
}

}  // namespace cw::report::reproduction
