#include "eval/class_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace cw::fairness {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check_class(int32_t k, int64_t C, const char* what) {
    if (k < 0 || k >= C)
        throw std::invalid_argument(std::string("class metrics: ") + what + " " + std::to_string(k) +
                                    " is not a class of " + std::to_string(C));
}

// Population mean and SD of the finite entries.
void mean_sd(const std::vector<double>& v, double& mean, double& sd) {
    double s = 0, n = 0;
    for (double x : v)
        if (!std::isnan(x)) s += x, n += 1;
    mean = n > 0 ? s / n : kNaN;
    double q = 0;
    for (double x : v)
        if (!std::isnan(x)) q += (x - mean) * (x - mean);
    sd = n > 0 ? std::sqrt(q / n) : kNaN;
}
}  // namespace

Confusion confusion_matrix(const std::vector<int32_t>& labels, const std::vector<int32_t>& preds, int64_t C) {
    if (labels.size() != preds.size())
        throw std::invalid_argument("class metrics: " + std::to_string(labels.size()) + " labels but " +
                                    std::to_string(preds.size()) + " predictions");
    Confusion m(static_cast<size_t>(C), std::vector<int64_t>(static_cast<size_t>(C), 0));
    for (size_t i = 0; i < labels.size(); ++i) {
        check_class(labels[i], C, "label");
        check_class(preds[i], C, "prediction");
        ++m[labels[i]][preds[i]];
    }
    return m;
}

ClassMetrics class_metrics(const std::vector<int32_t>& labels, const std::vector<int32_t>& preds, int64_t C) {
    return class_metrics(confusion_matrix(labels, preds, C));
}

ClassMetrics class_metrics(const Confusion& M) {
    ClassMetrics r;
    const int64_t C = static_cast<int64_t>(M.size());
    r.num_classes = C;
    r.confusion = M;
    r.class_counts.assign(C, 0);
    std::vector<int64_t> fp(C, 0), fn(C, 0), tp(C, 0);
    int64_t correct = 0;
    for (int64_t k = 0; k < C; ++k)
        for (int64_t j = 0; j < C; ++j) {
            r.class_counts[k] += M[k][j];
            r.num_samples += M[k][j];
            if (k == j) {
                tp[k] += M[k][j];
                correct += M[k][j];
            } else {
                fp[j] += M[k][j];
                fn[k] += M[k][j];
            }
        }
    const int64_t N = r.num_samples, wrong = N - correct;
    r.accuracy = N > 0 ? double(correct) / N : kNaN;

    r.per_class_accuracy.assign(C, kNaN);
    r.cfp.assign(C, 0.0);
    r.cfn.assign(C, 0.0);
    r.one_vs_rest_accuracy.assign(C, kNaN);
    std::vector<double> finite, errors(C, kNaN);
    for (int64_t k = 0; k < C; ++k) {
        if (r.class_counts[k] > 0) {
            r.per_class_accuracy[k] = double(tp[k]) / r.class_counts[k];
            errors[k] = 1.0 - r.per_class_accuracy[k];
            finite.push_back(r.per_class_accuracy[k]);
            if (r.worst_class < 0 || r.per_class_accuracy[k] < r.per_class_accuracy[r.worst_class]) r.worst_class = int(k);
            if (r.best_class < 0 || r.per_class_accuracy[k] > r.per_class_accuracy[r.best_class]) r.best_class = int(k);
        }
        if (wrong > 0) {
            r.cfp[k] = double(fp[k]) / wrong;
            r.cfn[k] = double(fn[k]) / wrong;
        }
        // TN_k = samples of other classes not predicted as k
        if (N > 0) r.one_vs_rest_accuracy[k] = double(tp[k] + (N - r.class_counts[k] - fp[k])) / N;
    }

    if (!finite.empty()) {
        std::sort(finite.begin(), finite.end());
        const size_t m = std::max<size_t>(1, static_cast<size_t>(C / 10));
        double s = 0;
        for (size_t i = 0; i < std::min(m, finite.size()); ++i) s += finite[i];
        r.worst10_accuracy = s / double(std::min(m, finite.size()));
        r.spread = finite.back() - finite.front();
    } else {
        r.worst10_accuracy = r.spread = kNaN;
    }
    double mean = 0;
    mean_sd(r.per_class_accuracy, mean, r.sd);
    r.nsd = mean > 0 ? r.sd / mean : kNaN;
    mean_sd(errors, mean, r.error_sd);
    r.error_nsd = mean > 0 ? r.error_sd / mean : kNaN;
    return r;
}

std::vector<double> boundary_error(const ClassMetrics& clean, const ClassMetrics& robust) {
    if (clean.num_classes != robust.num_classes) throw std::invalid_argument("boundary error: class counts differ");
    std::vector<double> out(static_cast<size_t>(clean.num_classes));
    for (size_t k = 0; k < out.size(); ++k) out[k] = clean.per_class_accuracy[k] - robust.per_class_accuracy[k];
    return out;
}

std::vector<double> boundary_error_exact(const std::vector<int32_t>& labels, const std::vector<int32_t>& clean_pred,
                                         const std::vector<int32_t>& adv_pred, int64_t C) {
    if (labels.size() != clean_pred.size() || labels.size() != adv_pred.size())
        throw std::invalid_argument("boundary error: record lengths differ");
    std::vector<int64_t> n(C, 0), crossed(C, 0);
    for (size_t i = 0; i < labels.size(); ++i) {
        check_class(labels[i], C, "label");
        ++n[labels[i]];
        crossed[labels[i]] += clean_pred[i] == labels[i] && adv_pred[i] != labels[i];
    }
    std::vector<double> out(static_cast<size_t>(C), kNaN);
    for (int64_t k = 0; k < C; ++k)
        if (n[k] > 0) out[k] = double(crossed[k]) / n[k];
    return out;
}

}  // namespace cw::fairness
