#include "train/step_audit.h"

#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "engine/ops.h"
#include "train/csv_rows.h"
#include "util/csv.h"

namespace cw::train {

namespace {

// Σ over parameters of Σ a·b, accumulated in double on the host.
double dot(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].defined() && b[i].defined()) s += static_cast<double>(sum(mul(a[i], b[i])).item());
    return s;
}

std::vector<Tensor> grads_of(const std::vector<Tensor*>& params) {
    std::vector<Tensor> g;
    g.reserve(params.size());
    for (Tensor* p : params) g.push_back(p->grad().defined() ? p->grad().clone() : Tensor());
    return g;
}

}  // namespace

StepShares audit_gradient_shares(const Tensor& per_sample, const std::vector<int32_t>& labels, int num_classes,
                                 const std::vector<Tensor*>& params) {
    const int64_t B = per_sample.numel();
    if (per_sample.ndim() != 1 || B != static_cast<int64_t>(labels.size()))
        throw std::invalid_argument("audit_gradient_shares: per-sample loss " + per_sample.describe() + " for " +
                                    std::to_string(labels.size()) + " labels");
    StepShares out;
    out.classes.resize(static_cast<size_t>(num_classes));
    const std::vector<float> terms = per_sample.to_vector();
    for (int64_t i = 0; i < B; ++i) {
        if (labels[i] < 0 || labels[i] >= num_classes)
            throw std::invalid_argument("audit_gradient_shares: label " + std::to_string(labels[i]) + " outside [0, " +
                                        std::to_string(num_classes) + ")");
        ClassShare& c = out.classes[static_cast<size_t>(labels[i])];
        ++c.n;
        c.loss += terms[i];
        out.loss += terms[i];
    }

    Tensor total = sum(per_sample);
    total.backward(/*retain_graph=*/true);
    const std::vector<Tensor> full = grads_of(params);
    const double full_sq = dot(full, full);
    out.grad_norm = std::sqrt(full_sq);

    std::vector<Tensor> share_sum(full.size());
    for (int k = 0; k < num_classes; ++k) {
        ClassShare& c = out.classes[static_cast<size_t>(k)];
        if (c.n == 0) continue;
        std::vector<float> mask(static_cast<size_t>(B), 0.f);
        for (int64_t i = 0; i < B; ++i) mask[static_cast<size_t>(i)] = labels[i] == k ? 1.f : 0.f;
        for (Tensor* p : params) p->zero_grad();
        sum(mul(per_sample, Tensor::from_vector(mask, {B}, per_sample.device()))).backward(/*retain_graph=*/true);
        const std::vector<Tensor> g = grads_of(params);
        const double sq = dot(g, g);
        c.grad_norm = std::sqrt(sq);
        c.cosine = (sq > 0 && full_sq > 0) ? dot(g, full) / (c.grad_norm * out.grad_norm) : 0.0;
        for (size_t j = 0; j < g.size(); ++j)
            if (g[j].defined()) share_sum[j] = share_sum[j].defined() ? add(share_sum[j], g[j]) : g[j];
    }
    std::vector<Tensor> diff(full.size());
    for (size_t j = 0; j < full.size(); ++j)
        if (full[j].defined()) diff[j] = share_sum[j].defined() ? sub(share_sum[j], full[j]) : full[j];
    out.residual = full_sq > 0 ? std::sqrt(dot(diff, diff) / full_sq) : 0.0;

    for (size_t j = 0; j < params.size(); ++j) {
        params[j]->zero_grad();
        if (full[j].defined()) params[j]->set_grad(full[j]);
    }
    return out;
}

StepsCsv::StepsCsv(const std::string& path, std::vector<std::string> class_names,
                   std::vector<std::string> state_names, int64_t resume_after_step)
    : path_(path), class_names_(std::move(class_names)), state_names_(std::move(state_names)) {
    std::string header = "step,epoch,batch,lr,class,name,n,loss,loss_mean,grad_norm,cosine";
    for (const auto& s : state_names_) header += "," + s;
    keep_rows_up_to(path_, header, resume_after_step);
    out_.open(path_, std::ios::app);
    if (!out_) throw std::runtime_error(path_ + ": cannot open for writing");
}

void StepsCsv::write(int64_t step, int64_t epoch, int64_t batch, double lr, const StepShares& shares,
                     const std::vector<std::vector<double>>& class_state) {
    std::ostringstream s;
    s.precision(9);
    const std::string prefix = std::to_string(step) + "," + std::to_string(epoch) + "," + std::to_string(batch) + ",";
    int64_t batch_size = 0;
    for (const auto& c : shares.classes) batch_size += c.n;
    s << prefix << lr << ",all,all," << batch_size << "," << shares.loss << ","
      << (batch_size ? shares.loss : 0.0) << "," << shares.grad_norm << ",1";
    for (size_t j = 0; j < state_names_.size(); ++j) s << ",";
    s << "\n";
    for (size_t k = 0; k < shares.classes.size(); ++k) {
        const ClassShare& c = shares.classes[k];
        s << prefix << lr << "," << k << "," << util::csv_field(k < class_names_.size() ? class_names_[k] : std::to_string(k))
          << "," << c.n << "," << c.loss << ",";
        if (c.n > 0) s << c.loss / static_cast<double>(c.n) * static_cast<double>(batch_size);
        s << "," << c.grad_norm << "," << c.cosine;
        for (size_t j = 0; j < state_names_.size(); ++j) {
            s << ",";
            if (j < class_state.size() && k < class_state[j].size()) s << class_state[j][k];
        }
        s << "\n";
    }
    out_ << s.str();
    out_.flush();
    if (!out_) throw std::runtime_error(path_ + ": write failed");
}

}  // namespace cw::train
