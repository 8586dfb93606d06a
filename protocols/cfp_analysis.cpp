#include "protocols/cfp_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "eval/agreement.h"
#include "protocols/class_columns.h"
#include "report/run_data.h"
#include "util/format.h"

namespace cw::protocols {

std::vector<double> broken_cfp(const eval::EvalRecords& r, size_t attack, int num_classes, int64_t* broken) {
    std::vector<double> share(static_cast<size_t>(num_classes), 0.0);
    int64_t n = 0;
    const std::vector<int32_t>& adv = r.adv_pred.at(attack);
    for (int64_t i = 0; i < r.size(); ++i) {
        if (r.clean_pred[i] != r.label[i] || adv[i] == r.label[i]) continue;
        if (adv[i] < 0 || adv[i] >= num_classes)
            throw std::runtime_error("records: prediction " + std::to_string(adv[i]) + " out of range for " +
                                     std::to_string(num_classes) + " classes");
        share[static_cast<size_t>(adv[i])] += 1;
        ++n;
    }
    if (n) for (double& x : share) x /= static_cast<double>(n);
    if (broken) *broken = n;
    return share;
}

ModelCfp model_cfp(const std::string& model, const nlohmann::json& results, const eval::EvalRecords* records) {
    ModelCfp m;
    m.model = model;
    m.classes = results.at("classes").get<std::vector<std::string>>();
    for (const auto& e : results.at("evaluations")) {
        m.evaluations.push_back(e.at("name"));
        m.cfp.push_back(report::per_class_values(e, "cfp"));
        if (m.cfp.back().size() != m.classes.size())
            throw std::runtime_error(model + ": evaluation '" + m.evaluations.back() + "' has " +
                                     std::to_string(m.cfp.back().size()) + " CFP values for " +
                                     std::to_string(m.classes.size()) + " classes");
        const auto& a = e.at("accuracy");
        m.accuracy.push_back(a.is_number() ? a.get<double>() : std::nan(""));
        int64_t n = 0;
        m.broken_cfp.push_back(records && m.evaluations.back() != "clean"
                                   ? broken_cfp(*records, records->attack_position(m.evaluations.back()),
                                                static_cast<int>(m.classes.size()), &n)
                                   : std::vector<double>{});
        m.broken.push_back(n);
    }
    return m;
}

std::vector<int> top_classes(const std::vector<double>& scores, int k) {
    std::vector<int> order;
    for (size_t i = 0; i < scores.size(); ++i)
        if (!std::isnan(scores[i]) && scores[i] > 0) order.push_back(static_cast<int>(i));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
    if (static_cast<int>(order.size()) > k) order.resize(static_cast<size_t>(k));
    return order;
}

CfpAgreement cfp_agreement(const ModelCfp& m, bool broken) {
    CfpAgreement a;
    const std::vector<std::vector<double>>& cfp = broken ? m.broken_cfp : m.cfp;
    std::vector<size_t> idx;
    for (size_t e = 0; e < m.evaluations.size(); ++e)
        if (m.evaluations[e] != "clean" && !cfp[e].empty()) idx.push_back(e), a.attacks.push_back(m.evaluations[e]);
    const size_t n = idx.size();
    a.spearman.assign(n, std::vector<double>(n, std::nan("")));
    double sum = 0, lo = std::nan("");
    int pairs = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j) {
            a.spearman[i][j] = i == j ? 1.0 : fairness::spearman(cfp[idx[i]], cfp[idx[j]]);
            if (j > i && !std::isnan(a.spearman[i][j])) {
                sum += a.spearman[i][j];
                lo = std::isnan(lo) ? a.spearman[i][j] : std::min(lo, a.spearman[i][j]);
                ++pairs;
            }
        }
    a.mean_spearman = pairs ? sum / pairs : std::nan("");
    a.min_spearman = lo;
    if (n == 0) return a;
    std::set<int> common;
    bool first = true;
    a.same_top1 = true;
    int top1 = -2;
    for (size_t e : idx) {
        const std::vector<int> top = top_classes(cfp[e], 3);
        const int t1 = top.empty() ? -1 : top[0];
        if (top1 == -2) top1 = t1;
        a.same_top1 &= t1 >= 0 && t1 == top1;
        std::set<int> s(top.begin(), top.end());
        if (first) common = s, first = false;
        std::set<int> both;
        std::set_intersection(common.begin(), common.end(), s.begin(), s.end(), std::inserter(both, both.begin()));
        common = both;
    }
    a.top3_common = static_cast<int>(common.size());
    return a;
}

namespace {
std::string rho_text(double r) {
    if (std::isnan(r)) return "–";
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.2f", r);
    return buf;
}
}  // namespace

namespace {
std::string top3_cells(const std::vector<std::string>& classes, const std::vector<double>& cfp) {
    const std::vector<int> top = top_classes(cfp, 3);
    std::string s;
    for (size_t t = 0; t < 3; ++t) s += t < top.size() ? " " + classes[top[t]] + " " + util::percent(cfp[top[t]]) + "% |" : " – |";
    return s;
}
std::string agreement_line(const CfpAgreement& a) {
    return "Agreement across the " + std::to_string(a.attacks.size()) + " attacks: Spearman ρ of the CFP vectors mean " +
           rho_text(a.mean_spearman) + ", min " + rho_text(a.min_spearman) + "; the same top class under every attack: " +
           (a.same_top1 ? "yes" : "no") + "; classes in every attack's top 3: " + std::to_string(a.top3_common) + ".\n\n";
}
}  // namespace

std::string cfp_markdown(const std::vector<ModelCfp>& models) {
    std::string s;
    for (const ModelCfp& m : models) {
        const CfpAgreement a = cfp_agreement(m);
        s += "### " + m.model + "\n\nAll errors (results.json's cfp):\n\n| evaluation | accuracy | top 1 | top 2 | top 3 | ρ vs " +
             (a.attacks.empty() ? std::string("–") : a.attacks[0]) + " |\n|---|---|---|---|---|---|\n";
        size_t attack = 0;
        for (size_t e = 0; e < m.evaluations.size(); ++e) {
            const bool is_attack = m.evaluations[e] != "clean";
            s += "| " + m.evaluations[e] + " | " + util::percent(m.accuracy[e]) + " |" + top3_cells(m.classes, m.cfp[e]) + " " +
                 (is_attack ? rho_text(a.spearman[0][attack++]) : std::string("")) + " |\n";
        }
        s += "\n" + agreement_line(a);
        const CfpAgreement b = cfp_agreement(m, true);
        if (b.attacks.empty()) continue;
        s += "Only the samples each attack broke (clean-correct, wrong under the attack):\n\n| attack | broken | top 1 | "
             "top 2 | top 3 | ρ vs " + b.attacks[0] + " |\n|---|---|---|---|---|---|\n";
        attack = 0;
        for (size_t e = 0; e < m.evaluations.size(); ++e) {
            if (m.broken_cfp[e].empty()) continue;
            s += "| " + m.evaluations[e] + " | " + std::to_string(m.broken[e]) + " |" + top3_cells(m.classes, m.broken_cfp[e]) +
                 " " + rho_text(b.spearman[0][attack++]) + " |\n";
        }
        s += "\n" + agreement_line(b);
    }
    return s;
}

std::string cfp_csv(const std::vector<ModelCfp>& models) {
    std::string s = "model,evaluation,class,cfp,cfp_broken\n";
    char buf[32];
    for (const ModelCfp& m : models)
        for (size_t e = 0; e < m.evaluations.size(); ++e)
            for (size_t k = 0; k < m.classes.size(); ++k) {
                std::string name = m.classes[k];
                if (name.find_first_of(",\"") != std::string::npos) {
                    std::string q = "\"";
                    for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
                    name = q + "\"";
                }
                std::snprintf(buf, sizeof buf, "%.6g", m.cfp[e][k]);
                s += m.model + "," + m.evaluations[e] + "," + name + "," + (std::isnan(m.cfp[e][k]) ? "" : buf) + ",";
                if (!m.broken_cfp[e].empty()) {
                    std::snprintf(buf, sizeof buf, "%.6g", m.broken_cfp[e][k]);
                    s += buf;
                }
                s += "\n";
            }
    return s;
}

}  // namespace cw::protocols
