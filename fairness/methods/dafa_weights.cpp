#include "fairness/methods/dafa_weights.h"

#include <stdexcept>
#include <string>

namespace cw::train {

namespace {
void check_label(int32_t y, int num_classes, const char* who) {
    if (y < 0 || y >= num_classes)
        throw std::invalid_argument(std::string(who) + ": label " + std::to_string(y) + " outside the " +
                                    std::to_string(num_classes) + " classes");
}
}  // namespace

std::vector<double> class_similarity(const std::vector<double>& prob_sums, const std::vector<int64_t>& counts) {
    const size_t c = counts.size();
    if (prob_sums.size() != c * c)
        throw std::invalid_argument("class similarity: " + std::to_string(prob_sums.size()) + " sums for " +
                                    std::to_string(c) + " classes (want C*C)");
    std::vector<double> p(c * c, 0.0);
    for (size_t i = 0; i < c; ++i)
        if (counts[i] > 0)
            for (size_t j = 0; j < c; ++j) p[i * c + j] = prob_sums[i * c + j] / static_cast<double>(counts[i]);
    return p;
}

std::vector<double> dafa_weights(const std::vector<double>& similarity, int num_classes, double lambda, DafaTies ties) {
    const size_t c = static_cast<size_t>(num_classes);
    if (similarity.size() != c * c)
        throw std::invalid_argument("DAFA weights: a similarity of " + std::to_string(similarity.size()) +
                                    " entries for " + std::to_string(c) + " classes (want C*C)");
    auto p = [&](size_t i, size_t j) { return similarity[i * c + j]; };
    std::vector<double> w(c, 1.0);
    for (size_t i = 0; i < c; ++i)
        for (size_t j = 0; j < c; ++j) {
            if (i == j) continue;
            if (p(i, i) < p(j, j))
                w[i] += lambda * p(i, j) * p(j, j);   // i is harder than j: i takes weight in proportion to its confusion with j
            else if (p(i, i) > p(j, j) || ties == DafaTies::Code)
                w[i] -= lambda * p(j, i) * p(i, i);   // i is easier: it gives what j loses to it
        }
    return w;
}

void accumulate_class_probs(const std::vector<float>& probs, const std::vector<int32_t>& labels, int num_classes,
                            std::vector<double>& prob_sums, std::vector<int64_t>& counts) {
    const size_t c = static_cast<size_t>(num_classes);
    if (probs.size() != labels.size() * c)
        throw std::invalid_argument("class probabilities: " + std::to_string(probs.size()) + " values for " +
                                    std::to_string(labels.size()) + " samples of " + std::to_string(c) + " classes");
    if (prob_sums.size() != c * c || counts.size() != c)
        throw std::invalid_argument("class probabilities: accumulators not sized for " + std::to_string(c) + " classes");
    for (size_t n = 0; n < labels.size(); ++n) {
        check_label(labels[n], num_classes, "class probabilities");
        const size_t y = static_cast<size_t>(labels[n]);
        for (size_t j = 0; j < c; ++j) prob_sums[y * c + j] += static_cast<double>(probs[n * c + j]);
        ++counts[y];
    }
}

std::vector<double> trix_batch_weights(const std::vector<float>& probs, const std::vector<int32_t>& labels,
                                       int num_classes, double lambda) {
    const size_t c = static_cast<size_t>(num_classes);
    std::vector<double> sums(c * c, 0.0);
    std::vector<int64_t> counts(c, 0);
    accumulate_class_probs(probs, labels, num_classes, sums, counts);
    std::vector<double> sim = class_similarity(sums, counts);
    for (size_t i = 0; i < c; ++i) sim[i * c + i] += 1e-8;   // TRIX's guard: a class absent from the batch has p_i(i) = 1e-8
    return dafa_weights(sim, num_classes, lambda, DafaTies::Code);
}

std::vector<uint8_t> trix_targeted(const std::vector<double>& batch_weights, const std::vector<int32_t>& labels) {
    std::vector<uint8_t> out(labels.size(), 0);
    if (labels.empty()) return out;
    double mean = 0;
    for (int32_t y : labels) {
        check_label(y, static_cast<int>(batch_weights.size()), "TRIX split");
        mean += batch_weights[static_cast<size_t>(y)];
    }
    mean /= static_cast<double>(labels.size());
    for (size_t n = 0; n < labels.size(); ++n) out[n] = batch_weights[static_cast<size_t>(labels[n])] < mean ? 1 : 0;
    return out;
}

}  // namespace cw::train
