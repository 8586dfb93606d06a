// AutoAttack's ensemble called directly (attacks/ensemble.h, docs/protocols/attacks.md §8): each stage attacks only
// the samples that were correct on clean data and that every earlier stage failed to break, and a broken sample
// keeps the point of the stage that broke it. Robust counts cannot show a violation (a broken point is only ever
// adopted), so the stages here are recording attacks: the test reads what each one received and whose point came
// back.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "attacks/ensemble.h"
#include "nn/layers.h"

using namespace cw;
using namespace cw::attacks;

namespace {

constexpr float kEps = 0.2f;

// Sample i is (0.6 + 0.01·i, 0.4), so an attack can tell which sample it got from the first value alone.
int sample_id(float first) { return static_cast<int>(std::lround((first - 0.6f) / 0.01f)); }

// Stage `stage` breaks the samples in `breaks` by moving (x0, x1) to (x0 − 0.15, x1 + 0.1 + 0.01·stage) — class 1
// for the model below — and returns every other sample moved to (x0, x1 + 0.01·stage), still class 0: each point
// says which stage made it. It records the samples it was given.
class Recorder : public Attack {
public:
    Recorder(int stage, std::set<int> breaks, std::vector<std::set<int>>& received)
        : Attack(Norm::Linf, kEps, ModelMode::Eval), stage_(stage), breaks_(std::move(breaks)), received_(received) {}
    std::string name() const override { return "recorder" + std::to_string(stage_); }
    nlohmann::json config() const override { return base_config(name()); }

protected:
    Perturbation perturb(AttackContext& ctx) override {
        Images out = ctx.host_x();
        std::set<int>& got = received_[static_cast<size_t>(stage_ - 1)];
        for (int64_t n = 0; n < out.n; ++n) {
            float* row = out.row(n);
            const int id = sample_id(row[0]);
            got.insert(id);
            const bool brk = breaks_.count(id) > 0;
            if (brk) row[0] -= 0.15f;
            row[1] += (brk ? 0.1f : 0.f) + 0.01f * static_cast<float>(stage_);
        }
        return Perturbation(to_tensor(out, ctx.device()));
    }

private:
    int stage_;
    std::set<int> breaks_;
    std::vector<std::set<int>>& received_;
};

}  // namespace

// Seen failing with the stages given the clean-correct set instead of the still-robust one (stage 2 received
// sample 0 and stage 3 samples 0 and 1; sample 0 came back with stage 3's point), and with the clean check
// dropped (stage 1 received sample 4, which was never correct, and its point replaced x).
TEST_CASE("ensemble: each stage attacks only what every earlier stage left robust; a broken point is kept",
          "[attacks]") {
    // logits = (x0 − x1, x1 − x0): class 0 iff x0 > x1.
    Rng init(1);
    nn::Sequential model{std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(2, 2, true, init)};
    for (auto& p : model.named_parameters())
        p.tensor->copy_from(p.tensor->ndim() == 2 ? Tensor::from_vector({1.f, -1.f, -1.f, 1.f}, {2, 2})
                                                  : Tensor::zeros({2}));
    model.eval();
    // samples 0-3 correct on clean data; sample 4, (0.3, 0.5), is class 1 already
    const std::vector<float> pixels{0.60f, 0.4f, 0.61f, 0.4f, 0.62f, 0.4f, 0.63f, 0.4f, 0.30f, 0.5f};
    const Tensor x = Tensor::from_vector(pixels, {5, 1, 1, 2});
    const Tensor y = Tensor::from_labels({0, 0, 0, 0, 0});

    std::vector<std::set<int>> received(3);
    std::vector<std::unique_ptr<Attack>> parts;
    parts.push_back(std::make_unique<Recorder>(1, std::set<int>{0}, received));
    parts.push_back(std::make_unique<Recorder>(2, std::set<int>{0, 1}, received));   // 0 is no longer its to break
    parts.push_back(std::make_unique<Recorder>(3, std::set<int>{0, 1, 2}, received));
    Ensemble ensemble("recorded", nlohmann::json::object(), std::move(parts));
    ensemble.set_log(nullptr);
    Rng rng(7);
    const AttackResult r = ensemble.run(model, x, y, rng);

    CHECK(received[0] == std::set<int>{0, 1, 2, 3});
    CHECK(received[1] == std::set<int>{1, 2, 3});
    CHECK(received[2] == std::set<int>{2, 3});
    // sample k ≤ 2 keeps stage k+1's breaking point (x0 − 0.15, 0.4 + 0.1 + 0.01·(k+1)); 3 and 4 stay at x
    const std::vector<float> want{0.45f, 0.51f, 0.46f, 0.52f, 0.47f, 0.53f, 0.63f, 0.4f, 0.30f, 0.5f};
    const std::vector<float> got = r.x_adv.to_vector();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
    CHECK(r.success == std::vector<uint8_t>{1, 1, 1, 0, 1});   // 4 counts as broken: it was never correct
}
