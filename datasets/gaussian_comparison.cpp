#include "datasets/gaussian_comparison.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace cw::fairness {

namespace {
ModelErrors errors_of(const GaussianTheoryParams& p, const LinearSummary& f) {
    return {classwise_errors(p.data, f, 0), classwise_errors(p.data, f, p.eps0)};
}

std::string fmt(const char* format, double v) {
    if (std::isnan(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// "theory | trained" in percent, three significant digits (G1's natural errors are below 0.1%).
std::string pair_cell(double theory, double trained) {
    return fmt("%.3g", 100 * theory) + " | " + fmt("%.3g", 100 * trained);
}

std::string padded(const std::vector<std::vector<std::string>>& cells) {
    std::vector<size_t> width;
    for (const auto& row : cells)
        for (size_t c = 0; c < row.size(); ++c) {
            if (width.size() <= c) width.push_back(0);
            width[c] = std::max(width[c], row[c].size());
        }
    std::ostringstream os;
    for (const auto& row : cells) {
        std::string line;
        for (size_t c = 0; c < row.size(); ++c) line += (c ? "  " : "") + row[c] + std::string(width[c] - row[c].size(), ' ');
        while (!line.empty() && line.back() == ' ') line.pop_back();
        os << line << "\n";
    }
    return os.str();
}
}  // namespace

GaussianComparison compare(const std::string& sweep, const GaussianTheoryParams& p, const LinearClassifier& natural,
                           const LinearClassifier& adversarial) {
    GaussianComparison c;
    c.sweep = sweep;
    c.params = p;
    const TheoremErrors nat = theorem1(p), adv = theorem2(p);
    c.natural_theory = {nat.clean, nat.robust};
    c.adversarial_theory = {adv.clean, adv.robust};
    c.natural_trained = errors_of(p, summarise(natural, p.data));
    c.adversarial_trained = errors_of(p, summarise(adversarial, p.data));
    c.omega_theory = omega(adv.clean, nat.clean);
    c.omega_trained = omega(c.adversarial_trained.clean, c.natural_trained.clean);
    c.ratio_natural = nonrobust_weight_ratio(natural, p.data.m);
    c.ratio_adversarial = nonrobust_weight_ratio(adversarial, p.data.m);
    return c;
}

std::string comparison_csv(const std::vector<GaussianComparison>& rows) {
    std::ostringstream os;
    os << "sweep,m,d,gamma,eta,sigma,K,eps,eps0";
    for (const char* model : {"nat", "adv"})
        for (const char* kind : {"clean", "robust"})
            for (const char* cls : {"-1", "+1"})
                for (const char* side : {"theory", "trained"}) os << "," << model << "_" << kind << "_" << cls << "_" << side;
    os << ",omega_theory,omega_trained,ratio_nat_theory,ratio_nat_trained,ratio_adv_theory,ratio_adv_trained\n";
    os.precision(8);
    for (const GaussianComparison& r : rows) {
        const auto& g = r.params.data;
        os << r.sweep << "," << g.m << "," << g.d << "," << g.gamma << "," << g.eta << "," << g.sigma << "," << g.K << ","
           << r.params.eps << "," << r.params.eps0;
        for (const auto* pair : {&r.natural_theory, &r.adversarial_theory}) {
            const ModelErrors& trained = pair == &r.natural_theory ? r.natural_trained : r.adversarial_trained;
            for (int kind = 0; kind < 2; ++kind)
                for (int k = 0; k < 2; ++k) {
                    const ClassErrors& t = kind ? pair->robust : pair->clean;
                    const ClassErrors& m = kind ? trained.robust : trained.clean;
                    os << "," << t.error[k] << "," << m.error[k];
                }
        }
        os << "," << r.omega_theory << "," << r.omega_trained << "," << g.eta / g.gamma << "," << r.ratio_natural << ",0,"
           << r.ratio_adversarial << "\n";
    }
    return os.str();
}

std::vector<std::vector<std::string>> comparison_cells(const std::vector<GaussianComparison>& rows) {
    std::vector<std::vector<std::string>> cells = {
        {"sweep", "K", "eps", "eps0", "nat clean -1", "nat clean +1", "AT clean -1", "AT clean +1", "AT robust -1",
         "AT robust +1", "Omega", "ratio nat", "ratio AT"}};
    for (const GaussianComparison& r : rows) {
        const auto& nt = r.natural_theory.clean.error;
        const auto& nm = r.natural_trained.clean.error;
        const auto& at = r.adversarial_theory;
        const auto& am = r.adversarial_trained;
        cells.push_back({r.sweep, fmt("%g", r.params.data.K), fmt("%g", r.params.eps), fmt("%g", r.params.eps0),
                         pair_cell(nt[0], nm[0]), pair_cell(nt[1], nm[1]), pair_cell(at.clean.error[0], am.clean.error[0]),
                         pair_cell(at.clean.error[1], am.clean.error[1]), pair_cell(at.robust.error[0], am.robust.error[0]),
                         pair_cell(at.robust.error[1], am.robust.error[1]),
                         fmt("%.3g", r.omega_theory) + " | " + fmt("%.3g", r.omega_trained),
                         fmt("%.3g", r.params.data.eta / r.params.data.gamma) + " | " + fmt("%.3f", r.ratio_natural),
                         "0 | " + fmt("%.3f", r.ratio_adversarial)});
    }
    return cells;
}

std::string comparison_text(const std::vector<GaussianComparison>& rows) { return padded(comparison_cells(rows)); }

}  // namespace cw::fairness
