// The training loop (train/trainer.h): resume bit for bit after an interruption (test hook, SIGTERM), a NaN loss
// stops with the checkpoint intact, the per-class gradient audit decomposes the real step, the CSV files.
#include <catch2/catch.hpp>

#include <cmath>
#include <csignal>
#include <functional>
#include <fstream>
#include <sstream>

#include "datasets/loader.h"
#include "engine/ops.h"
#include "nn/checkpoint.h"
#include "nn/layers.h"
#include "nn/safetensors.h"
#include "nn/training_state.h"
#include "tests/test_nn_util.h"
#include "tests/test_train_methods_util.h"
#include "train/class_stats.h"
#include "train/csv_rows.h"
#include "train/step_audit.h"
#include "jobs/registry.h"
#include "train/trainer.h"
#include "util/csv.h"

using namespace cw;
using namespace cw::train;
using cw_nn_test::ScratchDir;
using cw_train_test::QuietAttacks;

namespace {

constexpr int kClasses = 3;

// Natural training with a per-class counter as method state (exercises the method's save/load on resume), and a
// planted NaN for the divergence test.
class CountingNatural : public Method {
public:
    int64_t nan_at_step = -1;
    std::string name() const override { return "test_natural"; }
    std::string describe() const override { return "test natural"; }
    BatchLoss batch_loss(const BatchInput& in) override {
        Tensor logits = in.model(in.images);
        CrossEntropyOptions o;
        o.reduction = Reduction::None;
        Tensor per_sample = cross_entropy(logits, in.labels, o) / static_cast<float>(in.images.size(0));
        if (calls_++ == nan_at_step) per_sample = per_sample * std::numeric_limits<float>::quiet_NaN();
        for (int32_t y : in.host_labels) seen_[static_cast<size_t>(y)] += 1;
        return {per_sample, logits.detach()};
    }
    std::vector<std::string> class_state_names() const override { return {"seen"}; }
    std::vector<std::vector<double>> class_state() const override { return {seen_}; }
    void save_state(std::map<std::string, Tensor>& tensors, nn::Metadata& meta) const override {
        std::vector<float> v(seen_.begin(), seen_.end());
        tensors["seen"] = Tensor::from_vector(v, {kClasses});
        meta["calls"] = std::to_string(calls_);
    }
    void load_state(const std::map<std::string, Tensor>& tensors, const nn::Metadata& meta) override {
        const auto v = tensors.at("seen").to_vector();
        seen_.assign(v.begin(), v.end());
        calls_ = std::stoll(meta.at("calls"));
    }
private:
    std::vector<double> seen_ = std::vector<double>(kClasses, 0.0);
    int64_t calls_ = 0;
};

struct Run {
    std::shared_ptr<data::Dataset> data = cw_train_test::band_dataset(96, 11);
    std::shared_ptr<data::Dataset> test = cw_train_test::band_dataset(30, 12);
    std::function<std::shared_ptr<nn::Module>()> make_model;
    std::shared_ptr<nn::Module> model;
    CountingNatural method;
    Method* other_method = nullptr;   // instead of `method`
    Rng loader_rng;
    std::unique_ptr<data::Loader> loader;
    TrainerConfig config;
    bool with_val = false;
    int64_t val_n = 30;               // the validation split: the first val_n test images (labels i % 3)

    Run(const std::string& out, uint64_t seed = 5,
        std::function<std::shared_ptr<nn::Module>()> factory = [] { return cw_train_test::band_model(); })
        : make_model(std::move(factory)), loader_rng(seed + 1) {
        manual_seed(seed);
        model = make_model();
        data::LoaderOptions lo;
        lo.batch_size = 16;
        loader = std::make_unique<data::Loader>(data, lo, loader_rng);
        config.epochs = 3;
        config.recipe.lr = 0.05;
        config.recipe.schedule = "cosine";
        config.eval_eps = 0.15f;
        config.eval_alpha = 0.06f;
        config.eval_steps = 3;
        config.ema.every = "epoch";
        config.ema.start_epoch = 0;
        config.audit_steps = 4;
        config.out_dir = out;
        config.seed = seed;
    }
    TrainResult go() {
        TrainSetup s;
        s.model = model;
        s.new_model = make_model;
        s.method = other_method ? other_method : &method;
        s.loader = loader.get();
        std::vector<eval::EvalBatch> batches;
        std::vector<int64_t> idx(30);
        std::iota(idx.begin(), idx.end(), 0);
        data::Batch b = data::make_batch(*test, idx);
        batches.push_back({b.images, b.labels, b.indices});
        s.evals = {{"test", eval::batches_from(batches)}};
        if (with_val) {
            std::vector<int64_t> vidx(idx.begin(), idx.begin() + val_n);
            data::Batch v = data::make_batch(*test, vidx);
            s.evals.insert(s.evals.begin(), {"val", eval::batches_from({{v.images, v.labels, v.indices}})});
        }
        s.class_names = data->class_names;
        s.model_metadata = {{"arch", "toy"}};
        return Trainer(s, config).run();
    }
};

std::vector<std::vector<float>> state_values(nn::Module& m) {
    std::vector<std::vector<float>> v;
    for (auto& e : m.state()) {
        if (e.tensor->dtype() == DType::F32) {
            v.push_back(e.tensor->to_vector());
        } else {
            const auto ints = e.tensor->to_int_vector();
            v.emplace_back(ints.begin(), ints.end());
        }
    }
    return v;
}

// The files a run writes, without train_log.csv's wall-clock columns (images_per_second, seconds).
std::string run_record(const std::filesystem::path& dir) {
    std::stringstream in(cw_train_test::file_text(dir / "train_log.csv"));
    std::string trimmed;
    for (std::string line; std::getline(in, line);) {
        size_t cut = 0;
        for (int commas = 0; commas < 5; ++commas) cut = line.find(',', cut) + 1;
        trimmed += line.substr(0, cut) + "\n";
    }
    return cw_train_test::file_text(dir / "history.csv") + cw_train_test::file_text(dir / "steps.csv") + trimmed;
}

}  // namespace

TEST_CASE("trainer: an interrupted run resumed from its state ends bit-identical to an uninterrupted one", "[train]") {
    ScratchDir straight_dir, cut_dir;
    Run straight(straight_dir.path.string());
    const TrainResult full = straight.go();
    REQUIRE(full.epochs_completed == 3);
    REQUIRE(full.steps == 18);

    // Cut mid-epoch (step 8 of 18: epoch 2, batch 2) and again at an epoch boundary (step 12).
    for (int64_t cut : {8, 4}) {
        Run first(cut_dir.path.string());
        if (cut == 4) first.config.resume = true;   // second leg: resumes the first cut, stops again at step 12
        first.config.interrupt_after_steps = cut;
        const TrainResult r = first.go();
        REQUIRE(r.interrupted);
    }
    Run rest(cut_dir.path.string(), /*seed=*/999);  // a different seed: everything must come from the state file
    rest.config.seed = 5;
    rest.config.resume = true;
    const TrainResult resumed = rest.go();
    REQUIRE(resumed.epochs_completed == 3);
    REQUIRE(resumed.steps == 18);
    CHECK(state_values(*rest.model) == state_values(*straight.model));
    auto a = cw_train_test::band_model(), b = cw_train_test::band_model();
    nn::load_model(*a, (straight_dir.path / "ema_last.safetensors").string());
    nn::load_model(*b, (cut_dir.path / "ema_last.safetensors").string());
    CHECK(state_values(*a) == state_values(*b));
    CHECK(run_record(cut_dir.path) == run_record(straight_dir.path));
    CHECK(rest.method.class_state() == straight.method.class_state());
}

TEST_CASE("trainer: with dropout and a method that draws random numbers, a resumed run is bit-identical", "[train]") {
    // band_model with a dropout layer (global_rng's stream: every training forward draws a mask) under PGD-AT
    // (random starts from the method's stream). Both streams must come back from the state file: the resumed leg
    // seeds everything differently.
    auto dropout_model = [] {
        auto m = std::make_shared<nn::Sequential>();
        m->add(std::make_shared<nn::Conv2d>(1, 4, 3, 1, 1));
        m->add(std::make_shared<nn::ReLU>());
        m->add(std::make_shared<nn::Dropout>(0.3f));
        m->add(std::make_shared<nn::Flatten>());
        m->add(std::make_shared<nn::Linear>(4 * 36, 3));
        return std::shared_ptr<nn::Module>(m);
    };
    MethodOptions o;
    o.eps = 0.1f;
    o.alpha = 0.04f;
    o.steps = 2;
    QuietAttacks quiet;
    ScratchDir straight_dir, cut_dir;
    auto straight_method = make_method("pgd_at", o);
    Run straight(straight_dir.path.string(), 5, dropout_model);
    straight.other_method = straight_method.get();
    straight.config.audit_steps = 0;
    straight.go();

    auto first_method = make_method("pgd_at", o);
    Run first(cut_dir.path.string(), 5, dropout_model);
    first.other_method = first_method.get();
    first.config.audit_steps = 0;
    first.config.interrupt_after_steps = 8;   // mid-epoch 2
    REQUIRE(first.go().interrupted);

    auto rest_method = make_method("pgd_at", o);
    Run rest(cut_dir.path.string(), /*seed=*/999, dropout_model);
    rest.other_method = rest_method.get();
    rest.config.audit_steps = 0;
    rest.config.seed = 5;
    rest.config.resume = true;
    REQUIRE(rest.go().steps == 18);
    CHECK(state_values(*rest.model) == state_values(*straight.model));
    CHECK(run_record(cut_dir.path) == run_record(straight_dir.path));
}

TEST_CASE("trainer: SIGTERM mid-epoch saves a resumable state and the resumed run matches", "[train]") {
    ScratchDir straight_dir, cut_dir;
    Run straight(straight_dir.path.string());
    straight.config.audit_steps = 0;
    straight.go();

    Run first(cut_dir.path.string());
    first.config.audit_steps = 0;
    first.config.after_step = [](int64_t step) {
        if (step == 9) std::raise(SIGTERM);
    };
    const TrainResult r = first.go();
    REQUIRE(r.interrupted);
    CHECK(r.signal == SIGTERM);
    CHECK(r.steps == 9);   // stopped after the batch in progress, not before and not later
    nn::Metadata meta = nn::read_metadata((cut_dir.path / "state.safetensors").string());
    CHECK(meta.at("epoch") == "1");
    CHECK(meta.at("method.trainer.batches_done") == "3");

    Run rest(cut_dir.path.string());
    rest.config.audit_steps = 0;
    rest.config.resume = true;
    REQUIRE(rest.go().steps == 18);
    CHECK(state_values(*rest.model) == state_values(*straight.model));
}

TEST_CASE("trainer: a NaN loss stops the run with a clear message and the last good state kept", "[train]") {
    ScratchDir one_epoch_dir, nan_dir;
    // With a constant lr the first epoch of a longer run equals a one-epoch run.
    Run one(one_epoch_dir.path.string());
    one.config.epochs = 1;
    one.config.recipe.schedule = "constant";
    one.go();

    Run bad(nan_dir.path.string());
    bad.config.recipe.schedule = "constant";
    bad.method.nan_at_step = 8;   // epoch 2, batch 3
    std::string message;
    try {
        bad.go();
    } catch (const TrainingDiverged& e) {
        message = e.what();
    }
    CHECK_THAT(message, Catch::Contains("loss is nan at epoch 2, batch 3 (step 9)"));
    CHECK_THAT(message, Catch::Contains("state.safetensors still holds the last good state (epoch 1)"));
    // The state on disk is the end of epoch 1, identical to a clean run's.
    auto from_nan = cw_train_test::band_model(), from_clean = cw_train_test::band_model();
    nn::load_model(*from_nan, (nan_dir.path / "last.safetensors").string());
    nn::load_model(*from_clean, (one_epoch_dir.path / "last.safetensors").string());
    CHECK(state_values(*from_nan) == state_values(*from_clean));
    CHECK(nn::read_metadata((nan_dir.path / "state.safetensors").string()).at("epoch") == "1");
}

TEST_CASE("trainer: history.csv, train_log.csv, steps.csv and selection.json", "[train]") {
    ScratchDir dir;
    Run run(dir.path.string());
    const TrainResult r = run.go();
    std::stringstream history(cw_train_test::file_text(dir.path / "history.csv"));
    std::string line;
    std::getline(history, line);
    CHECK(line == "epoch,eval,overall,top,middle,bottom");
    std::vector<std::string> evals;
    while (std::getline(history, line))
        if (line.rfind("3,", 0) == 0) evals.push_back(line.substr(2, line.find(',', 2) - 2));
    CHECK(evals == std::vector<std::string>{"train_adv", "train_loss", "state_seen", "test_clean", "test_pgd3",
                                            "ema_test_clean", "ema_test_pgd3"});
    // The toy problem is easy: clean test accuracy after 3 epochs is well above chance.
    std::stringstream again(cw_train_test::file_text(dir.path / "history.csv"));
    double clean3 = 0;
    while (std::getline(again, line))
        if (line.rfind("3,test_clean,", 0) == 0) clean3 = std::stod(line.substr(13));
    CHECK(clean3 > 0.8);

    // steps.csv: steps 0, 4, 8, 12, 16 audited; each has an "all" row and one row per class.
    std::stringstream steps(cw_train_test::file_text(dir.path / "steps.csv"));
    std::getline(steps, line);
    CHECK(line == "step,epoch,batch,lr,class,name,n,loss,loss_mean,grad_norm,cosine,seen");
    int rows = 0;
    while (std::getline(steps, line)) ++rows;
    CHECK(rows == 5 * (1 + kClasses));
    CHECK(r.best.count("robust") == 1);
    CHECK(r.best.count("fair") == 1);
    CHECK(r.best.count("ema_fair") == 1);
    CHECK(std::filesystem::exists(dir.path / "best_fair.safetensors"));
}

TEST_CASE("step audit: class shares come from the whole batch's graph and add up to the real gradient", "[train]") {
    manual_seed(3);
    auto model = cw_train_test::band_model();
    model->train();
    auto data = cw_train_test::band_dataset(12, 4);
    std::vector<int64_t> idx(12);
    std::iota(idx.begin(), idx.end(), 0);
    data::Batch b = data::make_batch(*data, idx);
    const std::vector<int32_t> y = b.labels.to_int_vector();
    const auto params = model->parameters();
    auto per_sample = [&] {
        CrossEntropyOptions o;
        o.reduction = Reduction::None;
        return cross_entropy((*model)(b.images), b.labels, o) / 12.f;
    };
    // The plain step's gradient.
    model->zero_grad();
    sum(per_sample()).backward();
    std::vector<std::vector<float>> plain;
    for (Tensor* p : params) plain.push_back(p->grad().to_vector());

    model->zero_grad();
    const StepShares shares = audit_gradient_shares(per_sample(), y, kClasses, params);
    // The audit leaves exactly the plain gradient behind.
    for (size_t j = 0; j < params.size(); ++j) CHECK(params[j]->grad().to_vector() == plain[j]);
    CHECK(shares.residual < 1e-5);
    double loss_sum = 0;
    int64_t n = 0;
    for (const auto& c : shares.classes) {
        loss_sum += c.loss;
        n += c.n;
    }
    CHECK(n == 12);
    CHECK(loss_sum == Approx(shares.loss).epsilon(1e-6));
    // Σ_k ‖g_k‖ cos(g_k, g) = ‖g‖ (the shares' projections on g add up to g).
    double projected = 0;
    for (const auto& c : shares.classes) projected += c.grad_norm * c.cosine;
    CHECK(projected == Approx(shares.grad_norm).epsilon(1e-4));

    // Class 0's share, recomputed by hand on a fresh full-batch forward, equals the audit's; a forward of class 0's
    // samples alone (train-mode BN sees only them) gives a different gradient.
    model->zero_grad();
    std::vector<float> mask(12);
    for (size_t i = 0; i < 12; ++i) mask[i] = y[i] == 0;
    sum(mul(per_sample(), Tensor::from_vector(mask, {12}))).backward();
    double sq = 0;
    for (Tensor* p : params)
        for (float g : p->grad().to_vector()) sq += double(g) * g;
    CHECK(std::sqrt(sq) == Approx(shares.classes[0].grad_norm).epsilon(1e-5));

    model->zero_grad();
    std::vector<int64_t> only0;
    for (int64_t i = 0; i < 12; ++i)
        if (y[i] == 0) only0.push_back(i);
    data::Batch b0 = data::make_batch(*data, only0);
    CrossEntropyOptions o;
    o.reduction = Reduction::None;
    sum(cross_entropy((*model)(b0.images), b0.labels, o) / 12.f).backward();
    double sq0 = 0;
    for (Tensor* p : params)
        for (float g : p->grad().to_vector()) sq0 += double(g) * g;
    CHECK(std::abs(std::sqrt(sq0) - shares.classes[0].grad_norm) > 1e-3 * shares.classes[0].grad_norm);
}

TEST_CASE("steps.csv: loss is the class's share of the batch loss, loss_mean = loss * B / n", "[train]") {
    ScratchDir dir;
    const std::string path = (dir.path / "steps.csv").string();
    {
        StepsCsv csv(path, {"a", "b", "c"}, {});
        StepShares s;
        s.loss = 0.9;   // B = 4: class a has 2 samples (their l_i = CE_i/B sum to 0.3), b 2 (0.6), c none
        s.grad_norm = 1;
        s.classes = {{2, 0.3, 0.5, 0.8}, {2, 0.6, 0.25, 0.5}, {0, 0.0, 0.0, 0.0}};
        csv.write(0, 1, 1, 0.1, s, {});
    }
    std::stringstream in(cw_train_test::file_text(path));
    std::string line;
    std::getline(in, line);
    std::vector<std::string> rows;
    while (std::getline(in, line)) rows.push_back(line);
    REQUIRE(rows.size() == 4);
    CHECK(rows[0] == "0,1,1,0.1,all,all,4,0.9,0.9,1,1");
    CHECK(rows[1] == "0,1,1,0.1,0,a,2,0.3,0.6,0.5,0.8");     // mean CE of class a: 0.3 * 4 / 2
    CHECK(rows[2] == "0,1,1,0.1,1,b,2,0.6,1.2,0.25,0.5");    // 0.6 * 4 / 2
    CHECK(rows[3] == "0,1,1,0.1,2,c,0,0,,0,0");               // no samples: no mean
}

TEST_CASE("class stats: accuracy, CFA's t_k form and FAIR-TAT's CFP", "[train]") {
    ClassStats s(3);
    // labels 0 0 1 1 2 2 ; predictions 0 1 1 1 1 0 → correct 1,2,0; false positives: class1 ×2 (from 0 and 2), class0 ×1
    s.add({0, 0, 1, 1, 2, 2}, {0, 1, 1, 1, 1, 0}, {1, 2, 3, 4, 5, 6});
    CHECK(s.accuracy() == std::vector<double>{0.5, 1.0, 0.0});
    CHECK(s.accuracy_times_classes_over_n() == std::vector<double>{0.5, 1.0, 0.0});
    CHECK(s.cfp() == std::vector<double>{1.0 / 3, 2.0 / 3, 0.0});
    CHECK(s.loss_sum == std::vector<double>{3, 7, 11});
    CHECK(s.total_wrong() == 3);
    CHECK_THROWS_WITH(s.add({0, 3}, {0, 0}, {}), Catch::Contains("class 3 outside [0, 3)"));
}

TEST_CASE("selection rules: Rice's best robust and CFA's best average-plus-worst", "[train]") {
    SplitScores a, b;
    a.robust = fairness::class_metrics(std::vector<int32_t>{0, 0, 1, 1}, {0, 0, 1, 0}, 2);   // 75%, worst 50%
    b.robust = fairness::class_metrics(std::vector<int32_t>{0, 0, 1, 1}, {0, 1, 1, 0}, 2);   // 50%, worst 50%
    CHECK(selection_score(SelectRule::Robust, a) == Approx(0.75));
    CHECK(selection_score(SelectRule::Fair, a) == Approx(1.25));
    CHECK(selection_score(SelectRule::Fair, b) == Approx(1.0));
}

TEST_CASE("trainer: a selection split the run does not have is an error naming --select-split", "[train]") {
    ScratchDir dir;
    Run run(dir.path.string());
    run.config.select_split = "val";
    CHECK_THROWS_WITH(run.go(), Catch::Contains("--select-split: no evaluation split 'val' (this run has: test)"));
}

TEST_CASE("training CSVs: a resumed run cuts the file back to the resumed epoch", "[train]") {
    ScratchDir dir;
    const std::string path = (dir.path / "history.csv").string();
    {
        std::ofstream f(path);
        f << "epoch,eval,overall\n1,a,0.1\n2,a,0.2\n2,b,0.25\n3,a,0.3\n10,a,1\n";
    }
    keep_rows_up_to(path, "epoch,eval,overall", 2);   // e.g. a crash after epoch 3's rows, before its state
    CHECK(cw_train_test::file_text(path) == "epoch,eval,overall\n1,a,0.1\n2,a,0.2\n2,b,0.25\n");
    keep_rows_up_to(path, "epoch,eval,overall,extra", 2);   // another header: another run, start afresh
    CHECK(cw_train_test::file_text(path) == "epoch,eval,overall,extra\n");
    keep_rows_up_to(path, "epoch,eval,overall,extra", -1);
    CHECK(cw_train_test::file_text(path) == "epoch,eval,overall,extra\n");
    CHECK(util::csv_field("Speed limit (20km/h)") == "Speed limit (20km/h)");
    CHECK(util::csv_field("a,b \"c\"") == "\"a,b \"\"c\"\"\"");
}

TEST_CASE("trainer: FAWA averages an epoch in only when its worst validation class clears the threshold", "[train]") {
    ScratchDir plain_dir, open_dir, closed_dir;
    Run plain(plain_dir.path.string());   // per-epoch EMA from epoch 0
    plain.go();

    Run open(open_dir.path.string());     // threshold 0: every epoch accepted = the plain per-epoch EMA
    open.with_val = true;
    open.config.ema.every = "fawa";
    open.config.ema.fawa_threshold = 0.f;
    open.go();
    auto a = cw_train_test::band_model(), b = cw_train_test::band_model();
    nn::load_model(*a, (plain_dir.path / "ema_last.safetensors").string());
    nn::load_model(*b, (open_dir.path / "ema_last.safetensors").string());
    CHECK(state_values(*a) == state_values(*b));
    CHECK_THAT(cw_train_test::file_text(open_dir.path / "selection.json"), Catch::Contains("\"accepted\": 3"));

    Run closed(closed_dir.path.string());   // threshold above any accuracy: nothing is averaged in
    closed.with_val = true;
    closed.config.ema.every = "fawa";
    closed.config.ema.fawa_threshold = 1.f + 1e-6f;
    const TrainResult r = closed.go();
    CHECK_FALSE(std::filesystem::exists(closed_dir.path / "ema_last.safetensors"));
    CHECK(r.ema_last_path.empty());
    CHECK_THAT(cw_train_test::file_text(closed_dir.path / "selection.json"), Catch::Contains("\"rejected\": 3"));
    CHECK(cw_train_test::file_text(closed_dir.path / "history.csv").find("\n3,fawa,0,") != std::string::npos);

    // At the threshold exactly: accepted (worst >= threshold, CFA's code). 12 validation images, 4 per class, so
    // every per-class accuracy is a multiple of 1/4, exact in float; the threshold is epoch 1's worst class as a
    // probe run (threshold 0) measured it.
    ScratchDir probe_dir, edge_dir;
    Run probe(probe_dir.path.string());
    probe.with_val = true;
    probe.val_n = 12;
    probe.config.ema.every = "fawa";
    probe.config.ema.fawa_threshold = 0.f;
    probe.go();
    std::stringstream history(cw_train_test::file_text(probe_dir.path / "history.csv"));
    double worst = 2;
    for (std::string line; std::getline(history, line);)
        if (line.rfind("1,fawa,", 0) == 0) {
            std::stringstream fields(line.substr(7));
            std::string f;
            std::getline(fields, f, ',');   // the accepted flag
            while (std::getline(fields, f, ',')) worst = std::min(worst, std::stod(f));
        }
    REQUIRE(worst <= 1);
    REQUIRE(std::fmod(worst * 4, 1.0) == 0);
    Run edge(edge_dir.path.string());
    edge.with_val = true;
    edge.val_n = 12;
    edge.config.ema.every = "fawa";
    edge.config.ema.fawa_threshold = static_cast<float>(worst);
    edge.go();
    INFO("epoch 1's worst validation class: " << worst);
    CHECK(cw_train_test::file_text(edge_dir.path / "history.csv").find("\n1,fawa,1,") != std::string::npos);

    Run no_val(closed_dir.path.string());
    no_val.config.ema.every = "fawa";
    CHECK_THROWS_WITH(no_val.go(), Catch::Contains("--ema fawa: needs a validation split"));
}

// A state file whose counters do not read (edited, or damaged on disk) is named with what failed. Seen failing
// before: the trainer's batch count and a method's own counter stopped the run with the bare messages "stoll".
TEST_CASE("trainer: a saved counter that does not read is named with the state file", "[train]") {
    ScratchDir dir;
    Run first(dir.path.string());
    first.config.audit_steps = 0;
    first.config.interrupt_after_steps = 8;
    REQUIRE(first.go().interrupted);
    const std::string p = (dir.path / "state.safetensors").string();
    const st::File good = st::read_file(p);
    REQUIRE(good.metadata.count("method.method.calls"));   // CountingNatural's own counter
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"method.trainer.batches_done", p + ": training state: 'trainer.batches_done' should hold 1 number, got 'x'"},
        {"method.method.calls", p + ": the saved state of method test_natural does not read back (stoll)"}};
    for (const auto& [key, expected] : cases) {
        st::File damaged = good;
        damaged.metadata[key] = "x";
        st::write_file(p, damaged);
        Run rest(dir.path.string());
        rest.config.audit_steps = 0;
        rest.config.resume = true;
        INFO(key);
        CHECK_THROWS_WITH(rest.go(), Catch::StartsWith(expected));
    }
}
