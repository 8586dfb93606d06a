// --precision (train/trainer.h's step_precision, engine/cpu/precision_scope.h): each training step runs its
// convolutions in the precision asked for, and every evaluation (the per-epoch ones here) in the precision the
// process had before, which comes back when the run ends.
#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <utility>

#include "engine/cpu/precision_scope.h"
#include "engine/error.h"
#include "nn/layers.h"
#include "tests/test_nn_util.h"
#include "tests/test_band_trainer.h"
#include "tests/test_train_methods_util.h"
#include "train/trainer.h"

using namespace cw;
using namespace cw::train;

namespace {

// Wraps the band model and writes down, for every forward, whether the model was in training mode and which
// precision the CPU convolutions were set to at that moment.
class PrecisionProbe : public nn::Module {
public:
    explicit PrecisionProbe(std::shared_ptr<nn::Module> inner) : nn::Module("PrecisionProbe"), inner_(register_module("inner", inner)) {}
    Tensor forward(const Tensor& x) override {
        seen.insert({is_training(), cpu_backend().conv_policy().precision});
        return (*inner_)(x);
    }
    std::set<std::pair<bool, ConvPrecision>> seen;

protected:
    void on_mode_change() override { inner_->train(is_training()); }

private:
    std::shared_ptr<nn::Module> inner_;
};

struct PolicyRestore {  // the suite's policy, whatever a failing check leaves behind
    ConvPolicy saved = cpu_backend().conv_policy();
    ~PolicyRestore() { cpu_backend().set_conv_policy(saved); }
};

}  // namespace

TEST_CASE("--precision bf16: training steps in bf16, per-epoch evaluations in the precision set before", "[train][precision]") {
    PolicyRestore restore;
    cpu_backend().set_conv_policy({ConvPath::OneDnn, ConvPrecision::Fp32});
    cw_nn_test::ScratchDir dir;
    std::shared_ptr<PrecisionProbe> probe;
    const auto run = cw_train_test::run_band_trainer(
        "natural", dir.path.string(),
        [](MethodOptions&, TrainerConfig& c) {
            c.epochs = 1;
            c.step_precision = ConvPrecision::Bf16;
        },
        [&] { return probe = std::make_shared<PrecisionProbe>(cw_train_test::band_model()); });
    REQUIRE(run.result.steps == 6);

    // On a CPU without AVX512_BF16 the step falls back to fp32 (with a note), so only the evaluations can be told
    // apart from it there.
    const ConvPrecision step = onednn_conv::cpu_has_bf16() ? ConvPrecision::Bf16 : ConvPrecision::Fp32;
    const std::set<std::pair<bool, ConvPrecision>> expected = {{true, step}, {false, ConvPrecision::Fp32}};
    CHECK(probe->seen == expected);
    CHECK(cpu_backend().conv_policy().precision == ConvPrecision::Fp32);
    CHECK(cpu_backend().conv_policy().path == ConvPath::OneDnn);
}

TEST_CASE("ConvPrecisionScope: sets the precision, keeps the path, puts the policy back; nullopt changes nothing",
          "[train][precision]") {
    PolicyRestore restore;
    cpu_backend().set_conv_policy({ConvPath::Native, ConvPrecision::Fp32});
    {
        const ConvPrecisionScope scope(ConvPrecision::Bf16);
        CHECK(cpu_backend().conv_policy().path == ConvPath::Native);
        CHECK(cpu_backend().conv_policy().precision ==
              (onednn_conv::cpu_has_bf16() ? ConvPrecision::Bf16 : ConvPrecision::Fp32));
    }
    CHECK(cpu_backend().conv_policy().precision == ConvPrecision::Fp32);
    cpu_backend().set_conv_policy({ConvPath::Auto, ConvPrecision::Bf16});
    {
        const ConvPrecisionScope none(std::nullopt);
        CHECK(cpu_backend().conv_policy().path == ConvPath::Auto);
        CHECK(cpu_backend().conv_policy().precision == ConvPrecision::Bf16);
        const ConvPrecisionScope fp32(ConvPrecision::Fp32);
        CHECK(cpu_backend().conv_policy().precision == ConvPrecision::Fp32);
    }
    CHECK(cpu_backend().conv_policy().precision == ConvPrecision::Bf16);
    CHECK(parse_precision_flag("--precision", "bf16") == ConvPrecision::Bf16);
    CHECK_THROWS_WITH(parse_precision_flag("--precision", "fp16"), "--precision must be fp32 or bf16, got 'fp16'");
}
