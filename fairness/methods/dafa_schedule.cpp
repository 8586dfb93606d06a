#include "fairness/methods/dafa_schedule.h"

#include <algorithm>
#include <stdexcept>

#include "fairness/methods/dafa_weights.h"
#include "train/state_vectors.h"

namespace cw::train {

DafaSchedule::DafaSchedule(const DafaOptions& o, const std::string& owner)
    : owner_(owner), warmup_(o.warmup), lambda_(o.lambda), ties_(o.ties) {
    if (o.warmup < 1)
        throw std::invalid_argument(owner + ": --dafa-warmup must be >= 1 (the weights come from the last warm-up "
                                            "epoch), got " + std::to_string(o.warmup));
    if (!(o.lambda >= 0))
        throw std::invalid_argument(owner + ": --dafa-lambda must be >= 0, got " + std::to_string(o.lambda));
}

void DafaSchedule::ensure_classes(int num_classes) {
    if (!weights_.empty() || num_classes <= 0) return;
    const size_t c = static_cast<size_t>(num_classes);
    weights_.assign(c, 1.0);
    similarity_.assign(c * c, 0.0);
    prob_sums_.assign(c * c, 0.0);
    counts_.assign(c, 0);
}

void DafaSchedule::record(int64_t epoch, const std::vector<float>& probs, const std::vector<int32_t>& labels) {
    if (!recording(epoch)) return;
    accumulate_class_probs(probs, labels, num_classes(), prob_sums_, counts_);
}

void DafaSchedule::end_epoch(int64_t epoch) {
    if (!recording(epoch) || computed_) return;
    similarity_ = class_similarity(prob_sums_, counts_);
    weights_ = dafa_weights(similarity_, num_classes(), lambda_, ties_);
    computed_ = true;
    std::fill(prob_sums_.begin(), prob_sums_.end(), 0.0);
    std::fill(counts_.begin(), counts_.end(), 0);
}

std::vector<double> DafaSchedule::self_probability() const {
    const size_t c = weights_.size();
    std::vector<double> d(c);
    for (size_t k = 0; k < c; ++k) d[k] = similarity_[k * c + k];
    return d;
}

std::vector<float> DafaSchedule::radius_scale() const {
    std::vector<float> s;
    for (double w : weights_) s.push_back(static_cast<float>(std::max(w, 0.0)));
    return s;
}

std::vector<float> DafaSchedule::sample_weights(const std::vector<int32_t>& labels) const {
    std::vector<float> out;
    out.reserve(labels.size());
    for (int32_t y : labels) {
        if (y < 0 || y >= num_classes())
            throw std::invalid_argument(owner_ + ": label " + std::to_string(y) + " outside the " +
                                        std::to_string(num_classes()) + " classes");
        out.push_back(static_cast<float>(weights_[static_cast<size_t>(y)]));
    }
    return out;
}

std::vector<float> DafaSchedule::sample_radius_scale(const std::vector<int32_t>& labels) const {
    std::vector<float> out = sample_weights(labels);
    for (float& v : out) v = std::max(v, 0.f);
    return out;
}

void DafaSchedule::save(nn::Metadata& meta) const {
    meta["classes"] = std::to_string(weights_.size());
    if (weights_.empty()) return;
    meta["dafa_computed"] = computed_ ? "1" : "0";
    put_vector(meta, "dafa_weights", weights_);
    put_vector(meta, "dafa_similarity", similarity_);
    put_vector(meta, "dafa_prob_sums", prob_sums_);
    put_vector(meta, "dafa_counts", counts_);
}

void DafaSchedule::load(const nn::Metadata& meta) {
    const auto it = meta.find("classes");
    const long c = it == meta.end() ? 0 : std::stol(it->second);
    if (c <= 0) return;
    const auto computed = meta.find("dafa_computed");
    if (computed == meta.end()) throw std::invalid_argument("training state: " + owner_ + " without 'dafa_computed'");
    computed_ = computed->second == "1";
    weights_ = get_vector<double>(meta, "dafa_weights", c);
    similarity_ = get_vector<double>(meta, "dafa_similarity", c * c);
    prob_sums_ = get_vector<double>(meta, "dafa_prob_sums", c * c);
    counts_ = get_vector<int64_t>(meta, "dafa_counts", c);
}

}  // namespace cw::train
