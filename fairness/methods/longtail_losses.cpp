#include "fairness/methods/longtail_losses.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/ops.h"

namespace cw::train {

Tensor weighted_ce_terms(const Tensor& logits, const Tensor& labels, const std::vector<int32_t>& host_labels,
                         const std::vector<double>& class_weights) {
    double total = 0;
    for (int32_t y : host_labels) total += class_weights.at(static_cast<size_t>(y));
    std::vector<float> scale;
    for (int32_t y : host_labels)
        scale.push_back(static_cast<float>(class_weights[static_cast<size_t>(y)] / (total > 0 ? total : 1.0)));
    const Tensor ce = cross_entropy(logits, labels, {0.f, Tensor(), Reduction::None});
    return mul(ce, Tensor::from_vector(scale, {static_cast<int64_t>(scale.size())}, logits.device()));
}

Tensor ldam_logits(const Tensor& logits, const std::vector<int32_t>& host_labels, const std::vector<double>& margins,
                   float scale) {
    const int64_t b = logits.size(0), c = logits.size(1);
    std::vector<float> shift(static_cast<size_t>(b * c), 0.f);
    for (int64_t i = 0; i < b; ++i) {
        const int32_t y = host_labels[static_cast<size_t>(i)];
        shift[static_cast<size_t>(i * c + y)] = static_cast<float>(margins.at(static_cast<size_t>(y)));
    }
    return mul(sub(logits, Tensor::from_vector(shift, {b, c}, logits.device())), scale);
}

Tensor uniform_target_kl(const Tensor& logits, const std::vector<int32_t>& host_labels) {
    const int64_t b = logits.size(0), c = logits.size(1);
    if (c < 2) throw std::invalid_argument("uniform-target regulariser: needs at least 2 classes, got " + std::to_string(c));
    // log q_ij for j ≠ y_i: log_softmax with z_{i,y_i} pushed far down (its exp underflows to 0), then keep j ≠ y_i.
    std::vector<float> push(static_cast<size_t>(b * c), 0.f), others(static_cast<size_t>(b * c), 1.f);
    for (int64_t i = 0; i < b; ++i) {
        const size_t at = static_cast<size_t>(i * c + host_labels[static_cast<size_t>(i)]);
        push[at] = 1e4f;
        others[at] = 0.f;
    }
    const Tensor log_q = log_softmax(sub(logits, Tensor::from_vector(push, {b, c}, logits.device())));
    const Tensor sum_log_q = sum(mul(log_q, Tensor::from_vector(others, {b, c}, logits.device())), 1);   // [B]
    // KL(u ‖ q) = Σ_j u_j (log u_j − log q_j) = −log(C−1) − Σ_{j≠y} log q_j / (C−1)
    const float m = static_cast<float>(c - 1);
    return add(mul(sum_log_q, -1.f / m), -std::log(m));
}

Tensor cosine_regulariser(const Tensor& logits, const std::vector<int32_t>& host_labels, int num_classes,
                          std::vector<double>* per_class) {
    const int64_t b = logits.size(0);
    std::vector<int64_t> count(static_cast<size_t>(num_classes), 0);
    for (int32_t y : host_labels) {
        if (y < 0 || y >= num_classes)
            throw std::invalid_argument("cosine regulariser: label " + std::to_string(y) + " outside [0, " +
                                        std::to_string(num_classes) + ")");
        ++count[static_cast<size_t>(y)];
    }
    std::vector<int> present;
    for (int k = 0; k < num_classes; ++k)
        if (count[static_cast<size_t>(k)] > 0) present.push_back(k);
    const int64_t p = static_cast<int64_t>(present.size());
    if (per_class) per_class->assign(static_cast<size_t>(num_classes), -1.0);
    if (p < 2) return mul(sum(logits), 0.f);
    // Class means as one matmul: A [P, B] with A_{c,i} = 1/n_c for y_i = c.
    std::vector<float> avg(static_cast<size_t>(p * b), 0.f);
    for (int64_t r = 0; r < p; ++r)
        for (int64_t i = 0; i < b; ++i)
            if (host_labels[static_cast<size_t>(i)] == present[static_cast<size_t>(r)])
                avg[static_cast<size_t>(r * b + i)] = 1.f / static_cast<float>(count[static_cast<size_t>(present[r])]);
    const Tensor mu = matmul(Tensor::from_vector(avg, {p, b}, logits.device()), logits);              // [P, C]
    const Tensor norm = sqrt(add(sum(square(mu), 1, true), 1e-12f));                                  // [P, 1]
    const Tensor unit = div(mu, norm);
    // Ordered pairs (c, d), c ≠ d, picked by two selection matrices.
    const int64_t pairs = p * (p - 1);
    std::vector<float> left(static_cast<size_t>(pairs * p), 0.f), right(left.size(), 0.f);
    int64_t row = 0;
    for (int64_t c = 0; c < p; ++c)
        for (int64_t d = 0; d < p; ++d) {
            if (c == d) continue;
            left[static_cast<size_t>(row * p + c)] = 1.f;
            right[static_cast<size_t>(row * p + d)] = 1.f;
            ++row;
        }
    const Tensor a = matmul(Tensor::from_vector(left, {pairs, p}, logits.device()), unit);
    const Tensor d = matmul(Tensor::from_vector(right, {pairs, p}, logits.device()), unit);
    const Tensor hinge = relu(sum(mul(a, d), 1));   // [pairs], row (c, d) in the order built above
    if (per_class) {
        const std::vector<float> h = hinge.to_vector();
        for (int64_t c = 0; c < p; ++c) {
            double s = 0;
            for (int64_t k = 0; k < p - 1; ++k) s += h[static_cast<size_t>(c * (p - 1) + k)];
            (*per_class)[static_cast<size_t>(present[static_cast<size_t>(c)])] = s / static_cast<double>(p - 1);
        }
    }
    return mean(hinge);
}

}  // namespace cw::train
