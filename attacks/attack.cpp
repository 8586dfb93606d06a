#include "attacks/attack.h"

#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "engine/ops.h"

namespace cw::attacks {

const char* mode_name(ModelMode m) { return m == ModelMode::Eval ? "eval" : "train"; }
const char* norm_name(Norm n) { return n == Norm::Linf ? "linf" : "l2"; }

std::vector<float> class_wise(const std::vector<int32_t>& labels, const std::vector<float>& per_class) {
    std::vector<float> out;
    out.reserve(labels.size());
    for (int32_t y : labels) {
        CW_CHECK(y >= 0 && static_cast<size_t>(y) < per_class.size(), Error,
                 "class_wise: label " + std::to_string(y) + " has no per-class value (" +
                     std::to_string(per_class.size()) + " given)");
        out.push_back(per_class[y]);
    }
    return out;
}

std::ostream*& default_attack_log() {
    static std::ostream* log = &std::cout;
    return log;
}

ModeScope::ModeScope(nn::Module& model, ModelMode mode) : model_(model), was_training_(model.is_training()) {
    model_.train(mode == ModelMode::Train);
}
ModeScope::~ModeScope() { model_.train(was_training_); }

nlohmann::json Attack::base_config(const std::string& type) const {
    return {{"type", type}, {"norm", norm_name(norm_)}, {"eps", eps_}, {"targeted", targeted()},
            {"mode", mode_name(mode_)}};
}

std::string Attack::describe() const {
    std::ostringstream os;
    os << name() << ": " << norm_name(norm_) << " eps=" << eps_ << " (" << eps_ * 255 << "/255)";
    const nlohmann::json c = config();
    for (const auto& [key, value] : c.items()) {
        if (key == "type" || key == "norm" || key == "eps" || key == "mode" || key == "parts") continue;
        os << " " << key << "=";
        if (value.is_string()) os << value.get<std::string>();
        else if (value.is_number_float()) os << static_cast<float>(value.get<double>());
        else os << value.dump();
    }
    os << " | model mode: "
       << (mode_ == ModelMode::Eval ? "eval (BN running statistics, dropout off)"
                                    : "train (BN batch statistics, running statistics updated, dropout on)");
    return os.str();
}

const Images& AttackContext::host_x() {
    if (!have_host_x_) {
        host_x_ = from_tensor(x);
        have_host_x_ = true;
    }
    return host_x_;
}

const std::vector<int32_t>& AttackContext::host_y() {
    if (!have_host_y_) {
        host_y_ = labels.to_int_vector();
        have_host_y_ = true;
    }
    return host_y_;
}

TargetChoice target_choice(AttackContext& ctx) {
    return TargetChoice([&ctx]() -> const std::vector<int32_t>& { return ctx.host_y(); }, ctx.per_sample.targets,
                        ctx.rng);
}

Tensor AttackContext::per_sample_tensor(const std::vector<float>& v) const {
    return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, device());
}

void adopt_broken(Tensor& x_adv, std::vector<uint8_t>& robust, const std::vector<int64_t>& rows, const Tensor& adv,
                  const std::vector<uint8_t>& broken) {
    std::vector<int64_t> into, from;
    for (size_t k = 0; k < rows.size(); ++k) {
        if (!broken[k]) continue;
        robust[rows[k]] = 0;
        into.push_back(rows[k]);
        from.push_back(static_cast<int64_t>(k));
    }
    put_rows_(x_adv, into, take_rows(adv, from));
}

namespace {
void check_shapes(const std::string& who, const Tensor& x, const Tensor& y, const PerSample& ps) {
    CW_CHECK(x.ndim() == 4, ShapeError, who + ": expected images [N, C, H, W], got " + x.describe());
    const int64_t n = x.size(0);
    CW_CHECK(y.dtype() == DType::I32 && y.ndim() == 1 && y.size(0) == n, ShapeError,
             who + ": labels must be int32 [" + std::to_string(n) + "], got " + y.describe());
    auto check_size = [&](size_t size, const char* what) {
        CW_CHECK(size == 0 || size == static_cast<size_t>(n), ShapeError,
                 who + ": per-sample " + what + " has " + std::to_string(size) + " entries for " +
                     std::to_string(n) + " samples");
    };
    check_size(ps.eps.size(), "eps");
    check_size(ps.alpha.size(), "alpha");
    check_size(ps.targets.size(), "targets");
}

// The images must lie in [0, 1]. The reductions are queued at construction; verify() reads their two scalars back
// in one copy (on a GPU a read-back waits for everything queued) and throws if the range is wrong. Per-sample maxima
// first: a single row of the whole batch would be scanned by one GPU thread. max lets NaN win and ±Inf lies outside
// [0, 1], so a non-finite value fails the range test by itself; the non-finite count only words the error.
class PixelRangeCheck {
public:
    explicit PixelRangeCheck(const Tensor& x) : x_(x) {
        if (x.numel() == 0) return;
        NoGradGuard no_grad;
        const int64_t n = x.size(0);
        const Tensor rows = reshape(x.detach(), {n, -1});
        hi_neg_lo_ = max(reshape(concat({max(rows, 1), max(neg(rows), 1)}, 0), {2, n}), 1);
    }
    void verify(const std::string& who) {
        if (!hi_neg_lo_.defined()) return;   // empty, or already verified
        const std::vector<float> v = hi_neg_lo_.to_vector();
        hi_neg_lo_ = Tensor();
        const float hi = v[0], lo = -v[1];
        if (lo >= 0.f && hi <= 1.f) return;
        const bool finite = backend(x_.device()).count_nonfinite(x_.f32(), x_.numel()) == 0;
        throw Error(who + ": input images must lie in [0, 1] (normalisation belongs to the model); got values in [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]" + (finite ? "" : " and NaN/Inf"));
    }

private:
    Tensor x_, hi_neg_lo_;
};
}  // namespace

AttackResult Attack::run(nn::Module& model, const Tensor& x, const Tensor& y, Rng& rng, const PerSample& ps) {
    check_shapes(name(), x, y, ps);
    // An evaluation attack checks its pixels before it starts: it may run for minutes. A training-time attack
    // (train mode: a few steps inside every training step) reads the check back after queuing its work, so the
    // GPU is still busy with the last training step while the host draws the random start (the read-back waits
    // for the queue); bad pixels are reported all the same, before any result is returned.
    PixelRangeCheck range(x);
    if (mode_ == ModelMode::Eval) range.verify(name());
    const int64_t n = x.size(0);

    ModeScope scope(model, mode_);
    if (!announced_ && log_) {
        *log_ << "[attack] " << describe() << "\n";
        announced_ = true;
    }

    AttackResult result;
    if (n == 0) {
        result.x_adv = x.clone();
        return result;
    }
    const Device device = x.device();
    ModelOracle oracle(model, device);
    std::vector<float> eps = ps.eps.empty() ? std::vector<float>(static_cast<size_t>(n), eps_) : ps.eps;
    Tensor eps_t = Tensor::from_vector(eps, {n}, device);
    AttackContext ctx{oracle, x.detach(), y.device() == device ? y : y.to(device), std::move(eps), std::move(eps_t),
                      ps, rng};
    Perturbation p = [&] {
        try {
            return perturb(ctx);
        } catch (...) {
            range.verify(name());   // pixels out of range explain a failure better than what they caused
            throw;
        }
    }();
    range.verify(name());

    result.x_adv = std::move(p.x_adv);
    result.targets = std::move(p.targets);
    result.queries = std::move(p.queries);
    if (mode_ == ModelMode::Eval) {
        result.pred = p.pred.empty() ? oracle.predict(result.x_adv) : std::move(p.pred);
        const std::vector<int32_t>& labels = ctx.host_y();
        if (!targeted() || result.targets.size() == labels.size()) {
            result.success.resize(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i)
                result.success[i] = targeted() ? result.pred[i] == result.targets[i] : result.pred[i] != labels[i];
        }
    }
    return result;
}

}  // namespace cw::attacks
