#include "fairness/methods/validation_pass.h"

#include <stdexcept>

#include "attacks/attack.h"
#include "engine/ops.h"

namespace cw::train {

const EvalSplit& require_validation(const Validation& v, const std::string& method) {
    if (!v.split || v.split->data.num_batches == 0)
        throw std::invalid_argument(method + ": needs a validation split (--val-split last:300 as FRL, or first:K)");
    return *v.split;
}

int output_classes(nn::Module& model, const EvalSplit& split) {
    attacks::ModeScope eval(model, attacks::ModelMode::Eval);
    NoGradGuard no_grad;
    return static_cast<int>(model(split.data.batch(0).images).size(1));
}

namespace {
std::vector<int32_t> eval_predictions(nn::Module& model, const Tensor& x) {
    attacks::ModeScope eval(model, attacks::ModelMode::Eval);
    NoGradGuard no_grad;
    return argmax(model(x), 1).to_int_vector();
}
void append(std::vector<int32_t>& to, const std::vector<int32_t>& v) { to.insert(to.end(), v.begin(), v.end()); }
}  // namespace

SplitScores any_correct_scores(nn::Module& model, const EvalSplit& split, attacks::Attack& attack, int num_classes,
                               uint64_t seed) {
    std::vector<int32_t> labels, clean, adv;
    Rng rng(seed);
    for (int64_t b = 0; b < split.data.num_batches; ++b) {
        const eval::EvalBatch batch = split.data.batch(b);
        append(labels, batch.labels.to_int_vector());
        append(clean, eval_predictions(model, batch.images));
        const attacks::AttackResult r = attack.run(model, batch.images, batch.labels, rng);
        append(adv, r.pred.empty() ? eval_predictions(model, r.x_adv) : r.pred);
    }
    return {fairness::class_metrics(labels, clean, num_classes), fairness::class_metrics(labels, adv, num_classes)};
}

uint64_t epoch_seed(uint64_t seed, int64_t epoch) {
    return seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(epoch + 1));
}

}  // namespace cw::train
