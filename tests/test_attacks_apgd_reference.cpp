// APGD-CE step by step against a trajectory computed independently in float64 by the official AutoAttack
// algorithm (tools/make_apgd_reference.py → tests/fixtures/apgd_reference.safetensors): the objective after every
// iteration, the step size after every check (halving on cond1 or cond2), the final best adversarial points.
#include <catch2/catch.hpp>

#include <cmath>

#include "attacks/apgd_core.h"
#include "attacks/oracle.h"
#include "nn/layers.h"
#include "tests/fixture_file.h"

using namespace cw;
using namespace cw::attacks;

namespace {

const char* const kFile = "apgd_reference.safetensors";

const st::File& reference() { return cw_nn_test::fixture_file(kFile, "tools/make_apgd_reference.py"); }

std::vector<float> ref(const std::string& name) { return cw_nn_test::fixture_f32(reference(), kFile, name); }

Tensor ref_tensor(const std::string& name) {
    return Tensor::from_vector(ref(name), cw_nn_test::fixture_record(reference(), kFile, name).shape);
}

}  // namespace

TEST_CASE("APGD-CE follows the official algorithm's float64 trajectory iteration by iteration, halvings included",
          "[attacks]") {
    // flatten → fc 4→16 → ReLU → fc 16→3, the fixture's weights.
    auto fc1 = std::make_shared<nn::Linear>(4, 16), fc2 = std::make_shared<nn::Linear>(16, 3);
    fc1->weight.copy_from(ref_tensor("fc1.weight"));
    fc1->bias->copy_from(ref_tensor("fc1.bias"));
    fc2->weight.copy_from(ref_tensor("fc2.weight"));
    fc2->bias->copy_from(ref_tensor("fc2.bias"));
    nn::Sequential net;
    net.add("flatten", std::make_shared<nn::Flatten>());
    net.add("fc1", fc1);
    net.add("relu", std::make_shared<nn::ReLU>());
    net.add("fc2", fc2);
    net.eval();

    const Tensor x = ref_tensor("x"), x0 = ref_tensor("x0");
    const int64_t n = x.size(0);
    std::vector<int32_t> y;
    for (float v : ref("y")) y.push_back(static_cast<int32_t>(v));
    const std::vector<float> eps(static_cast<size_t>(n), ref("eps")[0]);
    const std::vector<float> want_loss = ref("loss"), want_eta = ref("eta");
    const int iterations = static_cast<int>(want_loss.size() / static_cast<size_t>(n));
    REQUIRE(iterations == 100);
    // The fixture holds samples that halve on cond2 alone (cond1 says keep the step): what makes it a test of cond2.
    double cond2_only = 0;
    for (float c : ref("cond2_only")) cond2_only += c;
    REQUIRE(cond2_only >= 2);

    ModelOracle oracle(net, x.device());
    ApgdSettings s;
    s.n_iter = iterations;
    ApgdTrace trace;
    const ApgdRunResult r =
        apgd_run_from(oracle, x, x0, eps, make_objective(AttackObjective::CrossEntropy, y, x.device()), s, &trace);
    REQUIRE(trace.objective.size() == static_cast<size_t>(iterations));
    REQUIRE(trace.eta.size() == static_cast<size_t>(iterations));
    for (int i = 0; i < iterations; ++i)
        for (int64_t j = 0; j < n; ++j) {
            const size_t k = static_cast<size_t>(i * n + j);
            INFO("iteration " << i << ", sample " << j);
            // Step sizes are 2ε/2^m: exact up to float32's rounding of ε.
            REQUIRE(trace.eta[i][j] == Approx(want_eta[k]).epsilon(1e-6));
            REQUIRE(trace.objective[i][j] == Approx(want_loss[k]).epsilon(1e-4).margin(1e-5));
        }
    const std::vector<float> got_best = r.x_best_adv.to_vector(), want_best = ref("x_best_adv");
    for (size_t i = 0; i < want_best.size(); ++i) REQUIRE(got_best[i] == Approx(want_best[i]).margin(1e-5));
    const std::vector<float> robust = r.robust.to_vector(), want_robust = ref("robust");
    CHECK(robust == want_robust);
}
