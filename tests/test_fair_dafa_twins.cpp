// DAFA and TRIX against their PyTorch twins (tools/make_dafa_trix_twins.py → tests/fixtures/dafa_trix_twins.safetensors):
// one training step after a one-epoch warm-up that recorded the fixture's probability rows — the class weights,
// TRIX's targeted samples and their targets, the per-sample loss terms, the batch loss, the logits trained on,
// every parameter's gradient and BN's running statistics after the outer forwards, to 1e-5 of the twin's float64
// values. The running statistics are the one place the order of the two outer forwards shows (both codes forward
// x' first): the loss and the gradients are the same either way.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/ops.h"
#include "fairness/methods/dafa.h"
#include "fairness/methods/trix.h"
#include "nn/safetensors.h"
#include "tests/fixture_file.h"
#include "tests/test_nn_util.h"
#include "tests/test_train_methods_util.h"
#include "train/methods/method_util.h"

using namespace cw;
using namespace cw::train;
using cw_nn_test::worst_error;

namespace {

const st::File& fixture() { return cw_nn_test::fixture_file("dafa_trix_twins.safetensors", "tools/make_dafa_trix_twins.py"); }

std::vector<float> twin(const std::string& name) { return cw_nn_test::fixture_f32(fixture(), "dafa_trix_twins.safetensors", name); }

// Records the fixture's probability rows as the (only) warm-up epoch's, then switches.
void finish_warmup(DafaSchedule& s, const std::vector<int32_t>& y) {
    s.ensure_classes(3);
    s.record(0, twin("warmup_probs"), y);
    s.end_epoch(0);
}

}  // namespace

TEST_CASE("dafa and trix: one step after the warm-up matches the PyTorch twin (loss, terms, logits, gradients, "
          "running statistics)",
          "[fair][dafa][trix]") {
    cw_train_test::QuietAttacks quiet;
    const Tensor x = Tensor::from_vector(twin("x"), {8, 3, 8, 8});
    std::vector<int32_t> host_y;
    for (float v : twin("y")) host_y.push_back(static_cast<int32_t>(v));
    const Tensor y = Tensor::from_labels(host_y);
    MethodOptions o;
    o.eps = 8.f / 255;
    o.alpha = 2.f / 255;
    o.steps = 5;
    o.dafa.warmup = 1;
    for (const std::string name : {"dafa", "trix"}) {
        DYNAMIC_SECTION(name) {
            Rng init(1);
            auto net = cw_train_test::tiny_net(init);
            for (auto& e : net->state())
                if (e.tensor->dtype() == DType::F32)
                    e.tensor->copy_from(Tensor::from_vector(twin("init." + e.name), e.tensor->shape()));
            std::unique_ptr<Method> method;
            if (name == "dafa") {
                auto d = std::make_unique<Dafa>(o);
                finish_warmup(d->schedule(), host_y);
                d->refresh();
                method = std::move(d);
            } else {
                auto t = std::make_unique<Trix>(o);
                finish_warmup(t->schedule(), host_y);
                method = std::move(t);
            }
            // the weights of the twin's DAFA_comp
            const std::vector<float> want_w = twin("class_weights");
            const auto state = method->class_state();
            for (size_t k = 0; k < 3; ++k) CHECK(state[0][k] == Approx(want_w[k]).epsilon(1e-6));
            if (name == "trix") {   // the split and the targets, replayed from the same Rng as the step below
                Rng replay(1234);
                noisy_start(x, 0.001f, replay);
                net->train();
                const std::vector<int32_t> t = dynamic_cast<Trix&>(*method).targets(*net, x, host_y, 3, replay);
                const std::vector<float> want_t = twin("trix.targets");
                for (size_t n = 0; n < 8; ++n) CHECK(t[n] == static_cast<int32_t>(want_t[n]));
            }
            net->train();
            net->zero_grad();
            Rng rng(1234);
            BatchInput in{*net, x, y, host_y, 1, 0, 3, rng};
            const BatchLoss out = method->batch_loss(in);
            const Tensor loss = sum(out.per_sample);
            loss.backward();
            const double want_loss = twin(name + ".loss")[0];
            INFO(name << ": loss " << loss.item() << ", twin " << want_loss);
            CHECK(std::fabs(loss.item() - want_loss) / want_loss <= 1e-5);
            CHECK(worst_error(out.per_sample.to_vector(), twin(name + ".per_sample")) <= 1e-5);
            CHECK(worst_error(out.logits.to_vector(), twin(name + ".logits")) <= 1e-5);
            for (auto& p : net->named_parameters()) {
                const std::vector<float> got = p.tensor->grad().to_vector(), want = twin(name + ".grad." + p.name);
                double largest = 0;
                for (float v : want) largest = std::max(largest, std::fabs(static_cast<double>(v)));
                // conv2's bias feeds bn2, which subtracts it again: its exact gradient is 0 (the twin's ~1e-17),
                // and float32 leaves rounding noise — held to an absolute bound instead of a relative one
                const double err = largest > 1e-9 ? worst_error(got, want) : worst_error(got, std::vector<float>(got.size(), 0.f));
                INFO("gradient of '" << p.name << "': error " << err << " (largest twin value " << largest << ")");
                CHECK(err <= 1e-5);
            }
            for (auto& b : net->named_buffers()) {
                if (b.name.find("running") == std::string::npos) continue;
                const double err = worst_error(b.tensor->to_vector(), twin(name + ".buffer." + b.name));
                INFO("'" << b.name << "' after the outer forwards: error " << err);
                CHECK(err <= 1e-5);
            }
        }
    }
}
