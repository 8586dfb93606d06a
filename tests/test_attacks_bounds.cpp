// Contract of every attack: the returned points stay in each sample's ε-ball (per-sample ε, L∞ and L2) and in
// [0,1]; the reported predictions are the model's at the returned points; robust accuracy never exceeds clean
// accuracy; the same seed gives the same points; the model's mode is set, announced once and restored;
// parameters never receive gradients.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include "attacks/apgd.h"
#include "attacks/apgd_targeted.h"
#include "attacks/autoattack.h"
#include "attacks/cw.h"
#include "attacks/early_stop_pgd.h"
#include "attacks/fab.h"
#include "attacks/fgsm.h"
#include "attacks/fgsm_rs.h"
#include "attacks/pgd.h"
#include "attacks/square.h"
#include "tests/test_attacks_fixture.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw_test;

namespace {
// Every attack, with iteration counts cut down to keep the test short.
std::vector<std::unique_ptr<Attack>> all_attacks(Norm norm, float eps) {
    std::vector<std::unique_ptr<Attack>> out;
    const float alpha = norm == Norm::Linf ? eps / 4 : eps / 4;
    if (norm == Norm::Linf) {
        out.push_back(std::make_unique<Fgsm>(FgsmConfig{eps, false, ModelMode::Eval}));
        out.push_back(std::make_unique<Fgsm>(FgsmConfig{eps, true, ModelMode::Eval}));
        out.push_back(std::make_unique<FgsmRs>(FgsmRsConfig{eps, 1.25f, ModelMode::Eval}));
        out.push_back(std::make_unique<Pgd>(cw20_config(eps, alpha)));
        EarlyStopPgdConfig fat = fat_cfa_config(eps);
        fat.mode = ModelMode::Eval;
        out.push_back(std::make_unique<EarlyStopPgd>(fat));
        fat = fat_original_config(1);
        fat.eps = eps;
        out.push_back(std::make_unique<EarlyStopPgd>(fat));
        out.push_back(std::make_unique<FabTargeted>(FabConfig{eps, 10, 2, 0.1f, 1.05f, 0.9f, 3, ModelMode::Eval}));
        out.push_back(std::make_unique<Square>(SquareConfig{eps, 60, 0.8f, 1, ModelMode::Eval}));
        AutoAttackConfig aa;
        aa.eps = eps;
        aa.n_iter = 10;
        aa.n_target_classes = 3;
        aa.square_queries = 60;
        out.push_back(make_autoattack(aa));
    }
    for (bool targeted : {false, true}) {
        PgdConfig c;
        c.norm = norm;
        c.eps = eps;
        c.alpha = alpha;
        c.steps = 5;
        c.restarts = 2;
        c.targeted = targeted;
        out.push_back(std::make_unique<Pgd>(c));
    }
    for (ApgdLoss loss : {ApgdLoss::CE, ApgdLoss::DLR})
        out.push_back(std::make_unique<Apgd>(ApgdConfig{norm, eps, 12, 2, 0.75f, loss, ModelMode::Eval}));
    out.push_back(std::make_unique<ApgdTargeted>(ApgdTargetedConfig{norm, eps, 12, 1, 0.75f, 3, ModelMode::Eval}));
    return out;
}

// Distances measured here, not with attacks/images.cpp's linf_dist / l2_dist: the projections use those, so a
// wrong ruler would otherwise pass its own points.
std::vector<double> distances(const Tensor& x, const Tensor& x_adv, Norm norm) {
    const std::vector<float> a = x.to_vector(), b = x_adv.to_vector();
    REQUIRE(a.size() == b.size());
    const int64_t n = x.size(0);
    const size_t dim = a.size() / static_cast<size_t>(n);
    std::vector<double> out(static_cast<size_t>(n), 0.0);
    for (int64_t i = 0; i < n; ++i) {
        double d = 0;
        for (size_t j = i * dim; j < (i + 1) * dim; ++j) {
            const double diff = double(b[j]) - double(a[j]);
            d = norm == Norm::Linf ? std::max(d, std::fabs(diff)) : d + diff * diff;
        }
        out[static_cast<size_t>(i)] = norm == Norm::Linf ? d : std::sqrt(d);
    }
    return out;
}

void require_inside(const Tensor& x, const Tensor& x_adv, const std::vector<float>& eps, Norm norm,
                    const std::string& who) {
    REQUIRE(x_adv.shape() == x.shape());
    const std::vector<double> dist = distances(x, x_adv, norm);
    for (size_t i = 0; i < dist.size(); ++i) {
        INFO(who << " sample " << i << " distance " << dist[i] << " eps " << eps[i]);
        // float rounding only: x + δ and (x + δ) − x differ from δ by an ulp or so
        REQUIRE(dist[i] <= double(eps[i]) * (norm == Norm::Linf ? 1.0 : 1.0 + 1e-5) + 1e-6);
    }
    for (float v : x_adv.to_vector()) REQUIRE((v >= 0.f && v <= 1.f));
}

// AttackResult::pred is argmax f(x_adv) of a fresh eval-mode forward pass (Square reports it itself), and
// success follows from it.
void require_pred_is_argmax(nn::Module& model, const Tensor& x_adv, const AttackResult& r,
                            const std::vector<int32_t>& labels, bool targeted, const std::string& who) {
    INFO(who);
    REQUIRE(model.is_training() == false);
    std::vector<int32_t> want;
    {
        NoGradGuard no_grad;
        const std::vector<float> z = model.forward(x_adv).to_vector();
        const size_t classes = z.size() / labels.size();
        for (size_t i = 0; i < labels.size(); ++i) {
            const float* row = z.data() + i * classes;
            want.push_back(static_cast<int32_t>(std::max_element(row, row + classes) - row));
        }
    }
    REQUIRE(r.pred == want);
    if (targeted && r.targets.size() != labels.size()) {   // several targets per sample (APGD-T): no one success
        REQUIRE(r.success.empty());
        return;
    }
    REQUIRE(r.success.size() == labels.size());
    for (size_t i = 0; i < labels.size(); ++i) {
        INFO("sample " << i);
        REQUIRE(bool(r.success[i]) == (targeted ? want[i] == r.targets.at(i) : want[i] != labels[i]));
    }
}
}  // namespace

TEST_CASE("every attack stays in each sample's eps-ball and in [0,1], never beats clean accuracy, and reports "
          "pred = argmax f(x_adv)",
          "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    const double clean = accuracy(model, data.x, data.labels);
    INFO("clean accuracy " << clean);
    REQUIRE(clean > 0.8);
    REQUIRE(clean < 0.95);

    for (Norm norm : {Norm::Linf, Norm::L2}) {
        const float eps = norm == Norm::Linf ? kBlobEps : 0.6f;
        Rng eps_rng(17);
        PerSample ps;   // class-wise radii, as CFA / FAIR-TAT use them: anything from 0 to 1.5 ε
        for (size_t i = 0; i < data.labels.size(); ++i) ps.eps.push_back(i % 7 == 0 ? 0.f : eps_rng.uniform(0.2f, 1.5f) * eps);
        for (auto& attack : all_attacks(norm, eps)) {
            SECTION(attack->name() + " " + norm_name(norm)) {
                Rng rng(1);
                const AttackResult uniform = attack->run(model, data.x, data.y, rng);
                require_inside(data.x, uniform.x_adv, std::vector<float>(data.labels.size(), eps), norm, attack->name());
                require_pred_is_argmax(model, uniform.x_adv, uniform, data.labels, attack->targeted(), attack->name());
                if (!attack->targeted()) REQUIRE(accuracy_of(uniform.pred, data.labels) <= clean);

                const AttackResult per_sample = attack->run(model, data.x, data.y, rng, ps);
                require_inside(data.x, per_sample.x_adv, ps.eps, norm, attack->name() + " per-sample eps");
                require_pred_is_argmax(model, per_sample.x_adv, per_sample, data.labels, attack->targeted(),
                                       attack->name() + " per-sample eps");
            }
        }
    }
}

TEST_CASE("attacks give identical results for the same seed", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    for (auto& attack : all_attacks(Norm::Linf, kBlobEps)) {
        INFO(attack->name());
        Rng a(42), b(42), c(43);
        const AttackResult ra = attack->run(model, data.x, data.y, a);
        const AttackResult rb = attack->run(model, data.x, data.y, b);
        REQUIRE(ra.x_adv.to_vector() == rb.x_adv.to_vector());
        REQUIRE(ra.pred == rb.pred);
        if (attack->name() == "pgd5-targeted") {
            const AttackResult rc = attack->run(model, data.x, data.y, c);
            REQUIRE(ra.x_adv.to_vector() != rc.x_adv.to_vector());   // the seed matters
        }
    }
}

TEST_CASE("an attack sets the model mode it was given, says so once, and restores the previous mode",
          "[attacks]") {
    Rng init(5);
    auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(192, 16, true, init),
        std::make_shared<nn::BatchNorm2d>(16), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Linear>(16, kClasses, true, init)});
    auto* bn = dynamic_cast<nn::BatchNorm2d*>((*model)[2].get());
    const Blobs data = make_blobs(32, 8);

    for (ModelMode mode : {ModelMode::Eval, ModelMode::Train}) {
        PgdConfig c;
        c.eps = kBlobEps;
        c.steps = 3;
        c.mode = mode;
        Pgd pgd(c);
        std::ostringstream log;
        pgd.set_log(&log);
        model->train(mode == ModelMode::Eval);   // start in the other mode
        const auto before = bn->running_mean.to_vector();
        Rng rng(0);
        const AttackResult r1 = pgd.run(*model, data.x, data.y, rng);
        pgd.run(*model, data.x, data.y, rng);
        REQUIRE(model->is_training() == (mode == ModelMode::Eval));   // restored
        const bool stats_moved = bn->running_mean.to_vector() != before;
        REQUIRE(stats_moved == (mode == ModelMode::Train));          // train mode uses (and updates) batch stats
        // one line, naming the mode
        const std::string text = log.str();
        REQUIRE(std::count(text.begin(), text.end(), '\n') == 1);
        REQUIRE(text.find(mode == ModelMode::Eval ? "model mode: eval" : "model mode: train") != std::string::npos);
        // train-mode attacks do not spend a forward pass (and a BN update) on reporting
        REQUIRE(r1.pred.empty() == (mode == ModelMode::Train));
    }
}

TEST_CASE("attack steps compute input gradients only", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    model.zero_grad();
    const Blobs& data = test_blobs();
    for (auto& attack : all_attacks(Norm::Linf, kBlobEps)) {
        Rng rng(0);
        attack->run(model, data.x, data.y, rng);
        for (Tensor* p : model.parameters()) {
            INFO(attack->name());
            REQUIRE_FALSE(p->grad().defined());
        }
    }
}

TEST_CASE("attacks reject images outside [0,1] and mis-sized per-sample settings", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    Pgd pgd(PgdConfig{});
    Rng rng(0);
    REQUIRE_THROWS_WITH(pgd.run(model, data.x * 2.f, data.y, rng), Catch::Contains("[0, 1]"));
    // One bad value anywhere in the batch, each kind: below 0, above 1, NaN (max lets it win), ±Inf.
    const std::vector<float> clean = data.x.to_vector();
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (const auto& [at, value, words] : std::vector<std::tuple<size_t, float, std::string>>{
             {5, -0.01f, "got values in [-0.01"}, {700, 1.5f, "1.500000]"}, {1000, nan, "NaN/Inf"},
             {0, nan, "NaN/Inf"}, {clean.size() - 1, inf, "NaN/Inf"}, {3, -inf, "NaN/Inf"}}) {
        std::vector<float> bad = clean;
        bad[at] = value;
        INFO("value " << value << " at " << at);
        REQUIRE_THROWS_WITH(pgd.run(model, Tensor::from_vector(bad, data.x.shape()), data.y, rng),
                            Catch::Contains("must lie in [0, 1]") && Catch::Contains(words));
    }
    // The box's own ends are inside it.
    std::vector<float> ends = clean;
    ends[0] = 0.f, ends[1] = 1.f;
    REQUIRE_NOTHROW(pgd.run(model, Tensor::from_vector(ends, data.x.shape()), data.y, rng));
    PerSample ps;
    ps.eps = {0.1f, 0.2f};
    REQUIRE_THROWS_WITH(pgd.run(model, data.x, data.y, rng, ps), Catch::Contains("per-sample eps"));
}
