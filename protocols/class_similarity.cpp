#include "protocols/class_similarity.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "eval/agreement.h"
#include "report/run_data.h"
#include "report/table_values.h"
#include "util/format.h"

namespace cw::protocols {

namespace {
// rates[a][b]: share of class a's samples predicted as b (0 for a class without samples).
std::vector<std::vector<double>> row_rates(const fairness::Confusion& m) {
    std::vector<std::vector<double>> r(m.size(), std::vector<double>(m.size(), 0.0));
    for (size_t a = 0; a < m.size(); ++a) {
        int64_t n = 0;
        for (int64_t x : m[a]) n += x;
        if (n > 0)
            for (size_t b = 0; b < m.size(); ++b) r[a][b] = static_cast<double>(m[a][b]) / static_cast<double>(n);
    }
    return r;
}
}  // namespace

SuperclassShare superclass_share(const fairness::Confusion& m, const std::vector<int32_t>& coarse_of) {
    const size_t C = m.size();
    if (coarse_of.size() != C)
        throw std::invalid_argument("superclass_share: " + std::to_string(coarse_of.size()) + " superclass indices for " +
                                    std::to_string(C) + " classes");
    std::vector<int64_t> members;
    for (int32_t s : coarse_of) {
        if (s < 0) throw std::invalid_argument("superclass_share: negative superclass index");
        if (static_cast<size_t>(s) >= members.size()) members.resize(static_cast<size_t>(s) + 1, 0);
        ++members[static_cast<size_t>(s)];
    }
    SuperclassShare out;
    double expected = 0;
    for (size_t k = 0; k < C; ++k) {
        int64_t errors_k = 0;
        for (size_t j = 0; j < C; ++j) {
            if (j == k) continue;
            errors_k += m[k][j];
            if (coarse_of[j] == coarse_of[k]) out.within += m[k][j];
        }
        out.errors += errors_k;
        // An error lands on one of the C − 1 other classes; n_s − 1 of them share the true superclass.
        if (C > 1)
            expected += static_cast<double>(errors_k) * static_cast<double>(members[static_cast<size_t>(coarse_of[k])] - 1) /
                        static_cast<double>(C - 1);
    }
    out.share = out.errors ? static_cast<double>(out.within) / static_cast<double>(out.errors) : NAN;
    out.chance = out.errors ? expected / static_cast<double>(out.errors) : NAN;
    return out;
}

std::vector<ConfusedPair> most_confused_pairs(const fairness::Confusion& m, size_t top) {
    const auto r = row_rates(m);
    std::vector<ConfusedPair> pairs;
    for (size_t a = 0; a < m.size(); ++a)
        for (size_t b = a + 1; b < m.size(); ++b)
            if (r[a][b] > 0 || r[b][a] > 0) pairs.push_back({static_cast<int>(a), static_cast<int>(b), r[a][b], r[b][a]});
    std::stable_sort(pairs.begin(), pairs.end(), [](const ConfusedPair& x, const ConfusedPair& y) {
        return x.rate_ab + x.rate_ba > y.rate_ab + y.rate_ba;
    });
    if (pairs.size() > top) pairs.resize(top);
    return pairs;
}

double symmetric_share(const fairness::Confusion& m) {
    const auto r = row_rates(m);
    double matched = 0, total = 0;
    for (size_t a = 0; a < m.size(); ++a)
        for (size_t b = a + 1; b < m.size(); ++b) {
            matched += 2 * std::min(r[a][b], r[b][a]);
            total += r[a][b] + r[b][a];
        }
    return total > 0 ? matched / total : NAN;
}

namespace {
EvaluationStructure structure_of(const nlohmann::json& results, const std::string& name, const std::string& file,
                                 size_t top) {
    const nlohmann::json* e = report::find_evaluation(results, name);
    if (!e) throw std::runtime_error(file + ": no evaluation named '" + name + "'");
    if (!e->contains("cross_class_similarity"))
        throw std::runtime_error(file + ": evaluation '" + name + "' has no cross_class_similarity");
    EvaluationStructure s;
    s.eval = name;
    s.accuracy = report::per_class_values(*e, "per_class_accuracy");
    for (double a : s.accuracy) s.error.push_back(1 - a);
    const nlohmann::json& sim = e->at("cross_class_similarity");
    s.mean_other = report::per_class_values(sim, "mean_other");
    s.max_other = report::per_class_values(sim, "max_other");
    const fairness::Confusion m = e->at("confusion").get<fairness::Confusion>();
    s.confused = most_confused_pairs(m, top);
    s.symmetric = symmetric_share(m);
    std::vector<int32_t> coarse_of;
    if (results.contains("coarse_of")) {
        coarse_of = results.at("coarse_of").get<std::vector<int32_t>>();
        s.superclass = superclass_share(m, coarse_of);
    }
    // The most similar pairs and the within/across-superclass means, from the upper triangle of the matrix.
    const nlohmann::json& matrix = sim.at("matrix");
    std::vector<double> within, across;
    for (size_t a = 0; a < matrix.size(); ++a)
        for (size_t b = a + 1; b < matrix[a].size(); ++b) {
            if (!matrix[a][b].is_number()) continue;
            const double c = matrix[a][b].get<double>();
            s.similar.push_back({static_cast<int>(a), static_cast<int>(b), c});
            if (!coarse_of.empty()) (coarse_of[a] == coarse_of[b] ? within : across).push_back(c);
        }
    std::stable_sort(s.similar.begin(), s.similar.end(),
                     [](const SimilarPair& x, const SimilarPair& y) { return x.cosine > y.cosine; });
    if (s.similar.size() > top) s.similar.resize(top);
    s.cosine_within = report::mean_defined(within);
    s.cosine_across = report::mean_defined(across);
    return s;
}
}  // namespace

SimilarityAnalysis analyse_similarity(const nlohmann::json& results, const std::string& attack, const std::string& file,
                                      size_t top) {
    SimilarityAnalysis out;
    out.classes = results.at("classes").get<std::vector<std::string>>();
    out.clean = structure_of(results, "clean", file, top);
    out.attacked = structure_of(results, attack, file, top);
    const std::vector<std::pair<std::string, const std::vector<double>*>> similarity = {
        {"clean mean_other", &out.clean.mean_other}, {"clean max_other", &out.clean.max_other},
        {attack + " mean_other", &out.attacked.mean_other}, {attack + " max_other", &out.attacked.max_other}};
    const std::vector<std::pair<std::string, const std::vector<double>*>> vulnerability = {
        {"clean error", &out.clean.error}, {"robust error (" + attack + ")", &out.attacked.error}};
    for (const auto& [sn, sv] : similarity)
        for (const auto& [vn, vv] : vulnerability) {
            int n = 0;
            for (size_t k = 0; k < sv->size(); ++k) n += !std::isnan((*sv)[k]) && !std::isnan((*vv)[k]);
            out.relations.push_back({sn, vn, fairness::spearman(*sv, *vv), fairness::pearson(*sv, *vv), n});
        }
    return out;
}

namespace {
nlohmann::json structure_json(const EvaluationStructure& s, const std::vector<std::string>& classes) {
    nlohmann::json confused = nlohmann::json::array(), similar = nlohmann::json::array();
    for (const ConfusedPair& p : s.confused)
        confused.push_back({{"a", classes[p.a]}, {"b", classes[p.b]}, {"rate_a_to_b", p.rate_ab}, {"rate_b_to_a", p.rate_ba}});
    for (const SimilarPair& p : s.similar) similar.push_back({{"a", classes[p.a]}, {"b", classes[p.b]}, {"cosine", p.cosine}});
    nlohmann::json j = {{"eval", s.eval},
                        {"most_confused_pairs", confused},
                        {"symmetric_share", report::number_or_null(s.symmetric)},
                        {"most_similar_pairs", similar},
                        {"mean_of_mean_other", report::number_or_null(report::mean_defined(s.mean_other))}};
    if (s.superclass) {
        j["superclass"] = {{"errors", s.superclass->errors},
                           {"within", s.superclass->within},
                           {"share", report::number_or_null(s.superclass->share)},
                           {"chance_share", report::number_or_null(s.superclass->chance)},
                           {"cosine_within", report::number_or_null(s.cosine_within)},
                           {"cosine_across", report::number_or_null(s.cosine_across)}};
    }
    return j;
}
void structure_markdown(std::ostringstream& md, const EvaluationStructure& s, const std::vector<std::string>& classes) {
    md << "Most-confused pairs, " << s.eval << " (rates: % of the first class's samples predicted as the second, and "
       << "the other way; symmetric share of all confusion " << util::percent(s.symmetric) << "%):\n\n"
       << "| pair | a → b (%) | b → a (%) | smaller / larger |\n|---|---|---|---|\n";
    for (const ConfusedPair& p : s.confused)
        md << "| " << classes[p.a] << " ↔ " << classes[p.b] << " | " << util::percent(p.rate_ab) << " | " << util::percent(p.rate_ba) << " | "
           << report::fixed_or_dash(std::min(p.rate_ab, p.rate_ba) / std::max(p.rate_ab, p.rate_ba), 2) << " |\n";
    md << "\nMost similar pairs by the cosine of mean logit vectors, " << s.eval << ":";
    for (const SimilarPair& p : s.similar) md << " " << classes[p.a] << "–" << classes[p.b] << " " << report::fixed_or_dash(p.cosine, 2) << ";";
    md << "\n\n";
}
}  // namespace

nlohmann::json similarity_json(const SimilarityAnalysis& s) {
    nlohmann::json rel = nlohmann::json::array();
    for (const Relation& r : s.relations)
        rel.push_back({{"similarity", r.similarity}, {"vulnerability", r.vulnerability},
                       {"spearman", report::number_or_null(r.spearman)}, {"pearson", report::number_or_null(r.pearson)},
                       {"classes", r.classes}});
    nlohmann::json per_class = nlohmann::json::array();
    for (size_t k = 0; k < s.classes.size(); ++k)
        per_class.push_back({{"class", s.classes[k]},
                             {"clean_mean_other", report::number_or_null(s.clean.mean_other[k])},
                             {"clean_max_other", report::number_or_null(s.clean.max_other[k])},
                             {"attacked_mean_other", report::number_or_null(s.attacked.mean_other[k])},
                             {"attacked_max_other", report::number_or_null(s.attacked.max_other[k])},
                             {"clean_error", report::number_or_null(s.clean.error[k])},
                             {"robust_error", report::number_or_null(s.attacked.error[k])}});
    return {{"clean", structure_json(s.clean, s.classes)},
            {"attacked", structure_json(s.attacked, s.classes)},
            {"relations", rel},
            {"per_class", per_class}};
}

std::string similarity_markdown(const std::string& arm, const SimilarityAnalysis& s) {
    std::ostringstream md;
    md << "## " << arm << "\n\n";
    if (s.clean.superclass) {
        md << "| evaluation | errors | within the true superclass | share (%) | chance share (%) | mean cosine within / "
              "across superclasses |\n|---|---|---|---|---|---|\n";
        for (const EvaluationStructure* e : {&s.clean, &s.attacked})
            md << "| " << e->eval << " | " << e->superclass->errors << " | " << e->superclass->within << " | "
               << util::percent(e->superclass->share) << " | " << util::percent(e->superclass->chance) << " | " << report::fixed_or_dash(e->cosine_within, 2)
               << " / " << report::fixed_or_dash(e->cosine_across, 2) << " |\n";
        md << "\n";
    }
    structure_markdown(md, s.clean, s.classes);
    structure_markdown(md, s.attacked, s.classes);
    md << "Mean cross-class similarity (mean over classes of mean_other): clean " << report::fixed_or_dash(report::mean_defined(s.clean.mean_other), 3)
       << ", " << s.attacked.eval << " " << report::fixed_or_dash(report::mean_defined(s.attacked.mean_other), 3) << ".\n\n"
       << "A class's similarity to the others against its vulnerability (over classes):\n\n"
       << "| similarity | vulnerability | Spearman ρ | Pearson r | classes |\n|---|---|---|---|---|\n";
    for (const Relation& r : s.relations)
        md << "| " << r.similarity << " | " << r.vulnerability << " | " << report::fixed_or_dash(r.spearman, 2) << " | "
           << report::fixed_or_dash(r.pearson, 2) << " | " << r.classes << " |\n";
    return md.str() + "\n";
}

}  // namespace cw::protocols
