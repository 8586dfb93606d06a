// walkthrough: one PGD-AT step of the small CNN on a few Fashion-MNIST images, shown from inside the engine — the
// attack's effect, every op the loss recorded on the tape with its shapes, the gradient norms backward sent through
// each, the parameters' gradients, and the loss before and after one SGD step. docs/walkthrough.md runs it (and
// tests/test_walkthrough_doc.cpp checks that its output there is current), so the output is deterministic: no
// timings, and everything random draws from --seed.
//
//   build/tools/walkthrough --device cpu [--images 8] [--warmup-steps 40] [--attack-steps 5] [--seed 0]
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "attacks/pgd.h"
#include "cli/common_flags.h"
#include "datasets/batch.h"
#include "datasets/registry.h"
#include "engine/autograd.h"
#include "nn/model_registry.h"
#include "nn/optim.h"
#include "train/methods/method_util.h"
#include "util/flags.h"

namespace {

using namespace cw;

struct Config {
    int64_t images = 8;          // the PGD-AT step's batch: small, so the tape's shapes stay readable
    int64_t warmup_steps = 40;
    int64_t warmup_batch = 64;
    int attack_steps = 5;
    float eps = 0.1f;            // train's Fashion-MNIST default
    float lr = 0.02f;            // the step of section 5; at 0.05 it overshoots and raises the loss after this warm-up
    // 0.02, not the training default 0.05: at 0.05 (momentum 0.9) these 40 steps leave the loss plateau in a chaotic
    // way, and a last-bit difference in a sum (another BLAS kernel set, another oneDNN ISA) moved the printed
    // gradient norms by up to 2.6x; at 0.02 they agree within 7% on every kernel set and ISA (docs/walkthrough.md).
    float warmup_lr = 0.02f;
};

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// Columns padded to their widest cell, two spaces apart: the tables below are read by eye.
void print_table(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
    std::vector<size_t> width;
    for (const auto& r : rows) {
        if (width.size() < r.size()) width.resize(r.size(), 0);
        for (size_t j = 0; j < r.size(); ++j) width[j] = std::max(width[j], r[j].size());
    }
    for (const auto& r : rows) {
        std::string line = " ";
        for (size_t j = 0; j < r.size(); ++j) {
            line += " " + r[j];
            if (j + 1 < r.size()) line += std::string(width[j] - r[j].size() + 1, ' ');
        }
        out << line << "\n";
    }
}

// The batch loss as the trainer builds it, Σ_i CE(f(x_i), y_i)/B (train/method.h); PGD-AT takes it at x_adv
// (train/methods/pgd_at.cpp), the warm-up at clean images.
Tensor batch_loss(nn::Module& model, const Tensor& x, const Tensor& y) {
    return sum(train::per_sample_mean_ce(model(x), y));
}

// Comparisons before and after a step use eval mode: a train-mode forward would draw a new dropout mask and
// change the loss by itself.
double eval_loss(nn::Module& model, const Tensor& x, const Tensor& y) {
    NoGradGuard plain;
    const bool was_training = model.is_training();
    model.eval();
    const double l = batch_loss(model, x, y).item();
    model.train(was_training);
    return l;
}

std::vector<int32_t> predictions(nn::Module& model, const Tensor& x) {
    NoGradGuard plain;
    model.eval();
    const Tensor logits = model(x);
    model.train();
    const std::vector<float> v = logits.to_vector();
    const int64_t c = logits.size(1);
    std::vector<int32_t> pred(static_cast<size_t>(logits.size(0)));
    for (size_t i = 0; i < pred.size(); ++i)
        pred[i] = static_cast<int32_t>(std::max_element(v.begin() + i * c, v.begin() + (i + 1) * c) - (v.begin() + i * c));
    return pred;
}

std::vector<int64_t> range(int64_t from, int64_t n) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), from);
    return v;
}

std::string shapes(const std::vector<Shape>& s) {
    std::string out;
    for (const auto& sh : s) out += (out.empty() ? "" : " ") + shape_str(sh);
    return out;
}

// TRADES' SmallCNN starts with the last layer at zero: every logit is 0, the loss is ln 10 and no gradient reaches the
// input or the earlier layers. A short natural warm-up on the images after the step's gives the attack something to
// climb.
void warm_up(nn::Module& model, const data::Dataset& train_set, const Config& c, Device device, std::ostream& out) {
    nn::SgdOptions wo;
    wo.lr = c.warmup_lr;
    wo.weight_decay = 0.f;
    nn::SGD warm(model.parameters(), wo);
    double first = 0, last = 0;
    for (int64_t s = 0; s < c.warmup_steps; ++s) {
        const data::Batch b = data::make_batch(train_set, range(c.images + s * c.warmup_batch, c.warmup_batch), device);
        warm.zero_grad();
        const Tensor loss = batch_loss(model, b.images, b.labels);
        loss.backward();
        warm.step();
        last = loss.item();
        if (s == 0) first = last;
    }
    out << "warm-up: " << c.warmup_steps << " natural SGD steps of " << c.warmup_batch << " images (lr " << c.warmup_lr
        << ", momentum 0.9): batch loss " << fmt("%.4f", first) << " at the first, " << fmt("%.4f", last) << " at the last\n";
}

// Step 1: PGD in train mode, as PGD-AT runs it; the table shows which predictions it flipped.
Tensor craft_adversarial(nn::Module& model, const data::Dataset& train_set, const data::Batch& batch, const Config& c,
                         Rng& attack_rng, std::ostream& out) {
    out << "\n1. PGD crafts x_adv, the images PGD-AT trains on (in train mode, as PGD-AT does)\n";
    attacks::PgdConfig pc;
    pc.eps = c.eps;
    pc.alpha = 2.5f * c.eps / static_cast<float>(c.attack_steps);   // train's default step
    pc.steps = c.attack_steps;
    pc.mode = attacks::ModelMode::Train;
    attacks::Pgd pgd(pc);
    const Tensor x_adv = pgd.run(model, batch.images, batch.labels, attack_rng).x_adv;
    double max_delta = 0;
    {
        const std::vector<float> a = x_adv.to_vector(), x = batch.images.to_vector();
        for (size_t i = 0; i < a.size(); ++i) max_delta = std::max(max_delta, static_cast<double>(std::abs(a[i] - x[i])));
    }
    out << "  max |x_adv - x| = " << fmt("%.4f", max_delta) << " (eps " << c.eps << ")\n";
    const std::vector<int32_t> labels = batch.labels.to_int_vector();
    const auto pred_clean = predictions(model, batch.images), pred_adv = predictions(model, x_adv);
    std::vector<std::vector<std::string>> rows{{"image", "label", "predicted on x", "predicted on x_adv"}};
    for (size_t i = 0; i < labels.size(); ++i)
        rows.push_back({std::to_string(i), train_set.class_names[labels[i]], train_set.class_names[pred_clean[i]],
                        train_set.class_names[pred_adv[i]]});
    print_table(rows, out);
    out << "  loss (eval mode): " << fmt("%.4f", eval_loss(model, batch.images, batch.labels)) << " on x, "
        << fmt("%.4f", eval_loss(model, x_adv, batch.labels)) << " on x_adv\n";
    return x_adv;
}

// Step 2: the ops the training loss recorded, with their shapes.
void print_tape(const TapeRecorder& tape, double loss, std::ostream& out) {
    out << "\n2. the tape: every op the PGD-AT loss sum_i CE(f(x_adv_i), y_i)/B recorded, in order (train mode, "
           "dropout on): L = "
        << fmt("%.4f", loss) << "\n";
    std::vector<std::vector<std::string>> rows{{"#", "op", "inputs", "output"}};
    for (size_t i = 0; i < tape.entries().size(); ++i) {
        const auto& e = tape.entries()[i];
        rows.push_back({std::to_string(i), e.op, shapes(e.input_shapes), shape_str(e.output_shape)});
    }
    print_table(rows, out);
}

// Step 3: after backward, the gradient norms that reached each op and those it passed on.
void print_backward(const TapeRecorder& tape, std::ostream& out) {
    out << "\n3. backward (it runs from the last op to the first; listed in tape order): |dL/d output| reaching each op "
           "and the |dL/d input| it passed on, per input ('-': that input needs no gradient)\n";
    std::vector<std::vector<std::string>> rows{{"#", "op", "|dL/d output|", "|dL/d inputs|"}};
    for (size_t i = 0; i < tape.entries().size(); ++i) {
        const auto& e = tape.entries()[i];
        std::string ins;
        for (double n : e.grad_in_norms) ins += (ins.empty() ? "" : " ") + (n < 0 ? std::string("-") : fmt("%.4g", n));
        rows.push_back({std::to_string(i), e.op, e.grad_out_norm < 0 ? "-" : fmt("%.4g", e.grad_out_norm), ins});
    }
    print_table(rows, out);
}

// Step 4: each parameter's gradient norm.
void print_parameter_gradients(nn::Module& model, std::ostream& out) {
    out << "\n4. the parameters' gradients (the same norms as the weight and bias inputs above)\n";
    std::vector<std::vector<std::string>> rows{{"parameter", "shape", "|dL/d parameter|"}};
    for (const auto& p : model.named_parameters())
        rows.push_back({p.name, shape_str(p.tensor->shape()), fmt("%.4g", tensor_l2_norm(p.tensor->grad()))});
    print_table(rows, out);
}

int run(const Config& c, const cli::CommonFlags& common, std::ostream& out) {
    if (c.images < 1 || c.warmup_batch < 1 || c.warmup_steps < 0 || c.attack_steps < 1)
        throw std::invalid_argument("--images, --warmup-batch and --attack-steps must be >= 1, --warmup-steps >= 0");
    const Device device = resolve_device(common.device);
    manual_seed(common.seed);   // initialisation and dropout masks
    Rng attack_rng(common.seed);

    const data::Dataset train_set = data::load_dataset("fashion-mnist", "train", common.data_dir);
    const int64_t warm_n = c.warmup_steps * c.warmup_batch;
    if (c.images + warm_n > train_set.size())
        throw std::invalid_argument("--images + --warmup-steps * --warmup-batch exceeds the " +
                                    std::to_string(train_set.size()) + " training images");
    out << "data: " << train_set.name << ", images 0-" << c.images - 1 << " for the step";
    if (warm_n) out << ", the next " << warm_n << " for the warm-up";
    out << "\n";

    nn::ModelConfig mc;
    mc.num_classes = train_set.num_classes();
    mc.in_channels = train_set.channels;
    mc.input_size = train_set.height;
    auto model = nn::make_model("small_cnn", mc);
    model->to(device);
    model->train();
    out << "model: small_cnn, " << model->num_parameters() << " parameters, no input normalisation\n";
    nn::SgdOptions so;
    so.lr = c.lr;
    so.momentum = 0.f;        // plain θ ← θ − lr·g, so the step below is exactly one gradient step
    so.weight_decay = 0.f;
    nn::SGD sgd(model->parameters(), so);
    if (c.warmup_steps) warm_up(*model, train_set, c, device, out);

    const data::Batch batch = data::make_batch(train_set, range(0, c.images), device);
    const Tensor x_adv = craft_adversarial(*model, train_set, batch, c, attack_rng, out);

    // Only the training forward is recorded: the recorder is created after the attack, whose own gradient passes
    // (input gradients only) would otherwise fill the listing.
    TapeRecorder tape;
    sgd.zero_grad();
    const Tensor loss = batch_loss(*model, x_adv, batch.labels);
    print_tape(tape, loss.item(), out);
    loss.backward();
    print_backward(tape, out);
    print_parameter_gradients(*model, out);

    const double before = eval_loss(*model, x_adv, batch.labels);
    sgd.step();
    const double after = eval_loss(*model, x_adv, batch.labels);
    out << "\n5. one SGD step, theta <- theta - " << c.lr << " * dL/dtheta: the loss on the same x_adv (eval mode) "
        << fmt("%.4f", before) << " before, " << fmt("%.4f", after) << " after\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Config c;
    cli::CommonFlags common;
    cli::CommonSpec spec;
    spec.program = "walkthrough";
    spec.epochs_help = "accepted for a uniform command line; ignored (one step)";
    spec.resume_help = "accepted for a uniform command line; ignored (nothing is saved)";
    cli::FlagSet app{"One PGD-AT step of the small CNN on Fashion-MNIST, with the tape, gradient norms and the SGD step",
                     "walkthrough"};
    cli::add_common_flags(app, common, spec);
    app.option("--images", c.images, "images in the PGD-AT step").show_default();
    app.option("--warmup-steps", c.warmup_steps, "natural SGD steps before it (the last layer starts at zero)")
        .show_default();
    app.option("--warmup-lr", c.warmup_lr, "warm-up SGD learning rate (momentum 0.9)").show_default();
    app.option("--warmup-batch", c.warmup_batch, "images per warm-up step").show_default();
    app.option("--attack-steps", c.attack_steps, "PGD steps (alpha = 2.5*eps/steps)").show_default();
    app.option("--eps", c.eps, "L-infinity radius").show_default();
    app.option("--lr", c.lr, "SGD learning rate (no momentum, no weight decay)").show_default();
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("walkthrough", [&] { return run(c, common, std::cout); });
}
