#pragma once
// The common attack interface (docs/protocols/attacks.md §0).
//
//   auto pgd = attacks::make_attack("pgd20", {.eps = 8.f / 255});
//   AttackResult r = pgd->run(model, x, y, rng);            // x in [0,1] [N,C,H,W], y int32 [N]
//
// run() puts the model into the attack's BN/dropout mode (an explicit constructor argument, printed in one line
// the first time the attack runs) and restores the previous mode afterwards. All randomness comes from `rng`, so
// the same seed gives the same x_adv. Gradient steps compute input gradients only (see oracle.h).
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "attacks/images.h"
#include "attacks/oracle.h"
#include "attacks/targets.h"
#include "engine/rng.h"
#include "nn/module.h"

namespace cw::attacks {

// BN/dropout mode while the attack crafts x_adv (docs/protocols/attacks.md §0.1): evaluation attacks use Eval; some training
// methods (PGD-AT, CFA, FAIR-TAT, CFA's FAT) craft in Train mode, which updates BN running statistics.
enum class ModelMode { Eval, Train };
enum class Norm { Linf, L2 };
const char* mode_name(ModelMode m);   // "eval" / "train"
const char* norm_name(Norm n);        // "linf" / "l2"

// The log stream new attacks start with (std::cout unless changed; tests set nullptr to keep output short).
std::ostream*& default_attack_log();

// Optional per-sample overrides (each empty, or one entry per sample).
struct PerSample {
    std::vector<float> eps;        // radius ε_i (CFA / FAIR-TAT / FRL class-wise ε); default: the attack's ε
    std::vector<float> alpha;      // step α_i; default: the attack's step rule
    std::vector<int32_t> targets;  // target classes of a targeted attack; default: the attack's target rule
};

// ε_i = per_class[y_i] (CFA / FAIR-TAT class-wise radii), for PerSample::eps.
std::vector<float> class_wise(const std::vector<int32_t>& labels, const std::vector<float>& per_class);

struct AttackResult {
    Tensor x_adv;                   // [N, C, H, W] in [0, 1], on the device of x
    // From one extra forward pass at x_adv, or from the attack itself where it knows them (eval mode only — a
    // train-mode forward would move the BN running statistics, so train-mode attacks leave these two empty):
    std::vector<uint8_t> success;   // untargeted: argmax f(x_adv) ≠ y; targeted: argmax f(x_adv) = target
    std::vector<int32_t> pred;      // argmax f(x_adv)
    std::vector<int32_t> targets;   // targeted attacks: the target of every sample
    std::vector<int64_t> queries;   // model queries per sample, for attacks that count them (Square)
};

// What an attack's perturb() works with. The images, labels and radii live on the model's device (the gradient
// attacks never copy per step); the host copies are for decisions and for the host-side attacks.
struct AttackContext {
    AttackContext(ModelOracle& m, Tensor x_, Tensor labels_, std::vector<float> eps_, Tensor eps_t_,
                  const PerSample& ps, Rng& r)
        : model(m), x(std::move(x_)), labels(std::move(labels_)), eps(std::move(eps_)), eps_t(std::move(eps_t_)),
          per_sample(ps), rng(r) {}
    ModelOracle& model;
    Tensor x;                       // clean images [N, C, H, W] in [0, 1], on the model's device
    Tensor labels;                  // the labels, int32 [N] on the device
    std::vector<float> eps;         // ε_i for every sample, already resolved (host)
    Tensor eps_t;                   // the same radii, [N] on the device
    const PerSample& per_sample;
    Rng& rng;

    int64_t n() const { return x.size(0); }
    Device device() const { return x.device(); }
    // The clean images on the host, copied at the first request (FAB's projections, Square's stripe start).
    const Images& host_x();
    // The labels on the host, copied at the first request. On a GPU each read-back waits for the queue: an attack
    // that never asks (untargeted PGD, as adversarial training runs it) queues its steps without waiting.
    const std::vector<int32_t>& host_y();
    // A per-sample vector as a device tensor [N].
    Tensor per_sample_tensor(const std::vector<float>& v) const;

private:
    Images host_x_;
    bool have_host_x_ = false;
    std::vector<int32_t> host_y_;
    bool have_host_y_ = false;
};

// The attack's target rule over ctx's labels (read from the device only when a random target is drawn).
TargetChoice target_choice(AttackContext& ctx);

struct Perturbation {
    Perturbation(Tensor x, std::vector<int32_t> t = {}, std::vector<int64_t> q = {})
        : x_adv(std::move(x)), targets(std::move(t)), queries(std::move(q)) {}
    Tensor x_adv;                   // [N, C, H, W] on the device
    std::vector<int32_t> targets;   // targeted attacks
    std::vector<int64_t> queries;   // attacks that count queries
    // argmax f(x_adv), if the attack already knows it (Square does: a final check would cost a query beyond its
    // budget); otherwise run() spends one forward pass to find it.
    std::vector<int32_t> pred;
};

class Attack {
public:
    Attack(Norm norm, float eps, ModelMode mode) : norm_(norm), eps_(eps), mode_(mode) {}
    virtual ~Attack() = default;

    // Images outside [0, 1] (NaN and ±Inf included) are an Error naming the attack: an eval-mode attack checks before
    // it starts, a train-mode one after queuing its steps (so a GPU is not left idle) but before returning anything.
    AttackResult run(nn::Module& model, const Tensor& x, const Tensor& y, Rng& rng, const PerSample& per_sample = {});

    virtual std::string name() const = 0;           // "pgd20", "apgd-ce", ... (results.json "name")
    virtual nlohmann::json config() const = 0;      // results.json "attack" object ("type", "norm", "eps", ...)
    virtual bool targeted() const { return false; }

    Norm norm() const { return norm_; }
    float eps() const { return eps_; }
    ModelMode mode() const { return mode_; }
    // The start line: name, norm, ε, the other settings, and the model mode.
    std::string describe() const;
    // Where the start line goes; nullptr silences the attack.
    virtual void set_log(std::ostream* log) { log_ = log; }
    std::ostream* log() const { return log_; }

protected:
    virtual Perturbation perturb(AttackContext& ctx) = 0;
    // config() entries every attack shares: type, norm, eps, mode, targeted.
    nlohmann::json base_config(const std::string& type) const;

private:
    Norm norm_;
    float eps_;
    ModelMode mode_;
    std::ostream* log_ = default_attack_log();
    bool announced_ = false;
};

// A sub-run on rows `rows` of the batch returned `adv` (one row each): the samples it broke take their point into
// x_adv and leave the robust pool (APGD restarts, targeted rounds, ensemble stages).
void adopt_broken(Tensor& x_adv, std::vector<uint8_t>& robust, const std::vector<int64_t>& rows, const Tensor& adv,
                  const std::vector<uint8_t>& broken);

// Sets the model's mode for the lifetime of the scope and restores the previous one.
class ModeScope {
public:
    ModeScope(nn::Module& model, ModelMode mode);
    ~ModeScope();
private:
    nn::Module& model_;
    bool was_training_;
};

}  // namespace cw::attacks
