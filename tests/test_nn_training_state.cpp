// Training-state files: resuming gives a bit-identical continuation, and mismatches are clear errors.
#include "nn/layers.h"
#include "nn/schedule.h"
#include "nn/training_state.h"
#include "tests/test_nn_util.h"

using namespace cw;
using namespace cw_nn_test;
using Catch::Matchers::Contains;

namespace {

// A tiny run with every kind of state: BN buffers, dropout and data drawn from their own RNGs, SGD momentum,
// a per-step EMA, a method tensor updated each step (like FRL's class weights) and method metadata.
struct TinyRun {
    Rng data_rng{11}, dropout_rng{12}, init_rng{13};
    std::shared_ptr<nn::Sequential> model = make_net(), ema_model = make_net();
    std::unique_ptr<nn::Optimizer> optimizer;
    nn::ModelEma ema{ema_model, {0.9f, nn::EmaEvery::Step, 0}};
    nn::PiecewiseLr schedule{0.1, 2};
    Tensor class_weights = Tensor::from_vector({1.f, 1.f, 1.f}, {3});
    int64_t step_count = 0;

    explicit TinyRun(bool adam) {
        if (adam) {
            nn::AdamOptions o;
            o.lr = 1e-2f;
            o.weight_decay = 1e-3f;
            optimizer = std::make_unique<nn::Adam>(model->parameters(), o);
        } else {
            nn::SgdOptions o;
            o.nesterov = true;
            optimizer = std::make_unique<nn::SGD>(model->parameters(), o);
        }
    }

    std::shared_ptr<nn::Sequential> make_net() {
        return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
            std::make_shared<nn::Conv2d>(1, 4, 3, 1, 1, false, init_rng), std::make_shared<nn::BatchNorm2d>(4),
            std::make_shared<nn::ReLU>(), std::make_shared<nn::GlobalAvgPool>(),
            std::make_shared<nn::Dropout>(0.3f, dropout_rng), std::make_shared<nn::Linear>(4, 3, true, init_rng)});
    }

    void step() {
        std::vector<float> x(4 * 1 * 5 * 5);
        data_rng.fill_normal(x.data(), x.size(), 0.f, 1.f);
        std::vector<int32_t> y(4);
        for (auto& label : y) label = static_cast<int32_t>(data_rng.below(3));
        model->train();
        optimizer->set_lr(static_cast<float>(schedule.lr(nn::progress_after_step(step_count / 3, step_count % 3, 3))));
        optimizer->zero_grad();
        CrossEntropyOptions ce;
        Tensor labels = Tensor::from_labels(y);
        ce.sample_weights = Tensor::from_vector({class_weights.at({y[0]}), class_weights.at({y[1]}),
                                                 class_weights.at({y[2]}), class_weights.at({y[3]})}, {4});
        cross_entropy(model->forward(Tensor::from_vector(x, {4, 1, 5, 5})), labels, ce).backward();
        optimizer->step();
        ema.after_step(*model, step_count / 3);
        class_weights = add(class_weights, 0.1f * static_cast<float>(y[0] + 1));
        ++step_count;
    }

    nn::TrainingState state() {
        nn::TrainingState s;
        s.model = model.get();
        s.optimizer = optimizer.get();
        s.ema = &ema;
        s.epoch = step_count / 3;
        s.step = step_count;
        s.rngs = {{"data", &data_rng}, {"dropout", &dropout_rng}};
        s.method_tensors = {{"class_weights", class_weights}};
        s.method_metadata = {{"frl.alpha", "0.05"}};
        s.model_metadata = {{"arch", "tiny"}};
        return s;
    }

    void restore(const nn::TrainingState& s) {
        step_count = s.step;
        class_weights = s.method_tensors.at("class_weights");
    }
};

void require_identical(nn::Module& a, nn::Module& b) {
    auto sa = a.state(), sb = b.state();
    REQUIRE(sa.size() == sb.size());
    for (size_t i = 0; i < sa.size(); ++i) {
        INFO(sa[i].name);
        if (sa[i].tensor->dtype() == DType::F32) REQUIRE(sa[i].tensor->to_vector() == sb[i].tensor->to_vector());
        else REQUIRE(sa[i].tensor->to_int_vector() == sb[i].tensor->to_int_vector());
    }
}

void require_resume_is_exact(bool adam) {
    ScratchDir dir;
    TinyRun straight(adam);
    for (int i = 0; i < 5; ++i) straight.step();

    TinyRun first(adam);
    for (int i = 0; i < 3; ++i) first.step();
    const std::string path = dir.file("state.safetensors");
    nn::save_training_state(path, first.state());

    TinyRun resumed(adam);  // fresh objects: different RNG positions, untouched optimiser, no EMA updates
    resumed.data_rng.reseed(999);
    resumed.dropout_rng.reseed(998);
    for (auto& e : resumed.model->state())
        if (e.tensor->dtype() == DType::F32) e.tensor->fill_(0.5f);
    nn::TrainingState s = resumed.state();
    nn::load_training_state(path, s);
    REQUIRE(s.epoch == 1);
    REQUIRE(s.step == 3);
    REQUIRE(s.method_metadata.at("frl.alpha") == "0.05");
    REQUIRE(s.model_metadata.at("arch") == "tiny");
    resumed.restore(s);
    REQUIRE(resumed.optimizer->steps() == 3);
    REQUIRE(resumed.ema.num_updates() == 3);
    for (int i = 0; i < 2; ++i) resumed.step();

    require_identical(*straight.model, *resumed.model);
    require_identical(*straight.ema_model, *resumed.ema_model);
    REQUIRE(straight.class_weights.to_vector() == resumed.class_weights.to_vector());
    REQUIRE(straight.data_rng.state() == resumed.data_rng.state());
    REQUIRE(straight.dropout_rng.state() == resumed.dropout_rng.state());
    REQUIRE(straight.optimizer->lr() == resumed.optimizer->lr());
    auto so = straight.optimizer->state_tensors(), ro = resumed.optimizer->state_tensors();
    REQUIRE(so.size() == ro.size());
    for (auto& [name, t] : so) REQUIRE(t.to_vector() == ro.at(name).to_vector());
}

}  // namespace

TEST_CASE("training state: 3 steps + save + load + 2 steps == 5 steps, bit for bit (SGD)", "[nn]") {
    require_resume_is_exact(false);
}

TEST_CASE("training state: 3 steps + save + load + 2 steps == 5 steps, bit for bit (Adam)", "[nn]") {
    require_resume_is_exact(true);
}

TEST_CASE("training state: missing parts and wrong kinds are clear errors", "[nn]") {
    ScratchDir dir;
    TinyRun run(false);
    run.step();
    const std::string path = dir.file("state.safetensors");
    nn::save_training_state(path, run.state());

    TinyRun other(false);
    nn::TrainingState no_ema = other.state();
    no_ema.ema = nullptr;
    REQUIRE_THAT(error_of<nn::CheckpointError>([&] { nn::load_training_state(path, no_ema); }), Contains("EMA"));

    nn::TrainingState extra_rng = other.state();
    Rng loader_rng(1);
    extra_rng.rngs["loader"] = &loader_rng;
    REQUIRE_THAT(error_of<nn::CheckpointError>([&] { nn::load_training_state(path, extra_rng); }),
                 Contains("no state for RNG 'loader'"));

    TinyRun adam(true);
    nn::TrainingState wrong_optimizer = adam.state();
    REQUIRE_THAT(error_of<nn::CheckpointError>([&] { nn::load_training_state(path, wrong_optimizer); }),
                 Contains("momentum_buffer") && Contains("another kind"));

    // a model checkpoint is not a training state, and vice versa the model keys are prefixed
    nn::save_model(*run.model, dir.file("model.safetensors"));
    nn::TrainingState s = other.state();
    REQUIRE_THAT(error_of<nn::CheckpointError>([&] { nn::load_training_state(dir.file("model.safetensors"), s); }),
                 Contains("not a training-state file"));
}
