// A checkpoint or training state holding NaN or infinity is refused with the tensor's name and count: with NaN
// propagating through the network, such weights would otherwise load and give NaN logits (or, before, a
// plausible accuracy).
#include <cmath>
#include <limits>

#include "nn/layers.h"
#include "nn/training_state.h"
#include "tests/test_nn_util.h"

using namespace cw;
using namespace cw_nn_test;
using Catch::Matchers::Contains;

namespace {

std::shared_ptr<nn::Sequential> small_net() {
    Rng init(21);
    return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::Conv2d>(1, 4, 3, 1, 1, false, init), std::make_shared<nn::BatchNorm2d>(4),
        std::make_shared<nn::ReLU>(), std::make_shared<nn::GlobalAvgPool>(), std::make_shared<nn::Linear>(4, 3, true, init)});
}

// Rewrites element `at` of tensor `name` in the safetensors file at `path` (F32 records).
void plant(const std::string& path, const std::string& name, int64_t at, float value) {
    st::File f = st::read_file(path);
    st::TensorRecord& r = f.tensors.at(name);
    std::vector<float> v = st::to_f32(r);
    v.at(static_cast<size_t>(at)) = value;
    r = st::from_f32(v, r.shape);
    st::write_file(path, f);
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("loading a checkpoint with a NaN weight is an error naming the tensor and the count", "[nn][nan]") {
    ScratchDir dir;
    const std::string path = dir.file("model.safetensors");
    auto saved = small_net();
    nn::save_model(*saved, path);
    plant(path, "0.weight", 7, kNaN);

    auto target = small_net();
    const std::vector<float> before = target->state().front().tensor->to_vector();
    const std::string msg = error_of<nn::CheckpointError>([&] { nn::load_model(*target, path); });
    CHECK_THAT(msg, Contains(path));
    CHECK_THAT(msg, Contains("0.weight (1 non-finite value)"));
    CHECK_THAT(msg, Contains("in 1 tensor:"));
    // Nothing was copied.
    REQUIRE(target->state().front().tensor->to_vector() == before);

    // Infinities count too, and every damaged tensor is listed.
    plant(path, "4.bias", 0, kInf);
    plant(path, "4.bias", 2, -kInf);
    plant(path, "4.bias", 1, kNaN);
    const std::string both = error_of<nn::CheckpointError>([&] { nn::load_model(*target, path); });
    CHECK_THAT(both, Contains("in 2 tensors:"));
    CHECK_THAT(both, Contains("0.weight (1 non-finite value)"));
    CHECK_THAT(both, Contains("4.bias (3 non-finite values)"));
}

TEST_CASE("a training state with a NaN weight or optimiser buffer is refused before anything changes", "[nn][nan]") {
    ScratchDir dir;
    const std::string path = dir.file("state.safetensors");
    auto model = small_net();
    nn::SgdOptions o;
    o.momentum = 0.9f;
    nn::SGD sgd(model->parameters(), o);
    Tensor x = Tensor::full({2, 1, 5, 5}, 0.3f);
    sgd.zero_grad();
    cross_entropy(model->forward(x), Tensor::from_labels({0, 2})).backward();
    sgd.step();
    nn::TrainingState s;
    s.model = model.get();
    s.optimizer = &sgd;
    nn::save_training_state(path, s);

    auto fresh = small_net();
    nn::SGD fresh_sgd(fresh->parameters(), o);
    nn::TrainingState r;
    r.model = fresh.get();
    r.optimizer = &fresh_sgd;
    const std::vector<float> before = fresh->state().front().tensor->to_vector();

    plant(path, "optimizer/0.momentum_buffer", 3, kNaN);
    const std::string opt_msg = error_of<nn::CheckpointError>([&] { nn::load_training_state(path, r); });
    CHECK_THAT(opt_msg, Contains("(optimiser state)"));
    CHECK_THAT(opt_msg, Contains("0.momentum_buffer (1 non-finite value)"));
    REQUIRE(fresh->state().front().tensor->to_vector() == before);

    plant(path, "optimizer/0.momentum_buffer", 3, 0.f);
    plant(path, "model/0.weight", 0, kNaN);
    const std::string model_msg = error_of<nn::CheckpointError>([&] { nn::load_training_state(path, r); });
    CHECK_THAT(model_msg, Contains("(model)"));
    CHECK_THAT(model_msg, Contains("0.weight (1 non-finite value)"));
    REQUIRE(fresh->state().front().tensor->to_vector() == before);

    plant(path, "model/0.weight", 0, 0.25f);
    nn::load_training_state(path, r);  // repaired: loads
    REQUIRE(fresh->state().front().tensor->to_vector().at(0) == 0.25f);
}
