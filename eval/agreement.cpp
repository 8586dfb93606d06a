#include "eval/agreement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace cw::fairness {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

std::vector<double> fractional_ranks(const std::vector<double>& v) {
    std::vector<size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> ranks(v.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
        const double shared = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;   // mean of ranks i+1..j+1
        for (size_t k = i; k <= j; ++k) ranks[order[k]] = shared;
        i = j + 1;
    }
    return ranks;
}

namespace {
// The entries where both sides are defined (a class without samples is NaN on its side).
std::pair<std::vector<double>, std::vector<double>> defined_pairs(const std::vector<double>& a,
                                                                  const std::vector<double>& b, const char* who) {
    if (a.size() != b.size())
        throw std::invalid_argument(std::string(who) + ": " + std::to_string(a.size()) + " and " +
                                    std::to_string(b.size()) + " per-class values; expected one per class on both sides");
    std::pair<std::vector<double>, std::vector<double>> xy;
    for (size_t i = 0; i < a.size(); ++i)
        if (!std::isnan(a[i]) && !std::isnan(b[i])) {
            xy.first.push_back(a[i]);
            xy.second.push_back(b[i]);
        }
    return xy;
}

double pearson_of_defined(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() < 2) return kNaN;
    const double n = static_cast<double>(x.size());
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : kNaN;
}
}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    const auto [x, y] = defined_pairs(a, b, "spearman");
    if (x.size() < 2) return kNaN;
    return pearson_of_defined(fractional_ranks(x), fractional_ranks(y));
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
    const auto [x, y] = defined_pairs(a, b, "pearson");
    return pearson_of_defined(x, y);
}

std::vector<std::vector<double>> cosine_similarity(const std::vector<std::vector<double>>& v) {
    const size_t c = v.size();
    std::vector<double> norm(c, 0.0);
    for (size_t k = 0; k < c; ++k) {
        if (v[k].size() != v[0].size())
            throw std::invalid_argument("cosine similarity: class " + std::to_string(k) + " has a vector of " +
                                        std::to_string(v[k].size()) + " values, class 0 of " +
                                        std::to_string(v[0].size()));
        for (double e : v[k]) norm[k] += e * e;
        norm[k] = std::sqrt(norm[k]);
    }
    std::vector<std::vector<double>> s(c, std::vector<double>(c, kNaN));
    for (size_t k = 0; k < c; ++k)
        for (size_t j = 0; j < c; ++j) {
            if (norm[k] == 0 || norm[j] == 0) continue;
            double dot = 0;
            for (size_t d = 0; d < v[k].size(); ++d) dot += v[k][d] * v[j][d];
            s[k][j] = dot / (norm[k] * norm[j]);
        }
    return s;
}

CrossClassSimilarity cross_class_similarity(const std::vector<std::vector<double>>& v) {
    CrossClassSimilarity out;
    out.matrix = cosine_similarity(v);
    for (size_t c = 0; c < v.size(); ++c) {
        double sum = 0, most = kNaN;
        int64_t defined = 0;
        for (size_t d = 0; d < v.size(); ++d) {
            const double s = out.matrix[c][d];
            if (d == c || std::isnan(s)) continue;
            sum += s;
            most = defined == 0 ? s : std::max(most, s);
            ++defined;
        }
        out.mean_other.push_back(defined ? sum / static_cast<double>(defined) : kNaN);
        out.max_other.push_back(most);
    }
    return out;
}

Confusion superclass_confusion(const Confusion& fine, const std::vector<int32_t>& coarse_of, int64_t num_coarse) {
    if (coarse_of.size() != fine.size())
        throw std::invalid_argument("superclass confusion: " + std::to_string(coarse_of.size()) +
                                    " coarse labels for " + std::to_string(fine.size()) + " classes");
    for (size_t k = 0; k < coarse_of.size(); ++k)
        if (coarse_of[k] < 0 || coarse_of[k] >= num_coarse)
            throw std::invalid_argument("superclass confusion: class " + std::to_string(k) + " has coarse label " +
                                        std::to_string(coarse_of[k]) + ", expected 0.." +
                                        std::to_string(num_coarse - 1));
    Confusion out(static_cast<size_t>(num_coarse), std::vector<int64_t>(static_cast<size_t>(num_coarse), 0));
    for (size_t k = 0; k < fine.size(); ++k) {
        if (fine[k].size() != fine.size()) throw std::invalid_argument("superclass confusion: the fine matrix is not square");
        for (size_t j = 0; j < fine.size(); ++j) out[coarse_of[k]][coarse_of[j]] += fine[k][j];
    }
    return out;
}

}  // namespace cw::fairness
