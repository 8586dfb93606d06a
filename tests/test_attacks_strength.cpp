// Attack strength on a small trained model: the usual ordering of attacks, AutoAttack against its parts,
// targeted PGD reaching its targets, Square's query budget, and the two early-stop (FAT) bookkeepings.
#include "attacks/apgd.h"
#include "attacks/apgd_targeted.h"
#include "attacks/autoattack.h"
#include "attacks/early_stop_pgd.h"
#include "attacks/fab.h"
#include "attacks/fgsm.h"
#include "attacks/pgd.h"
#include "attacks/square.h"
#include "attacks/steps.h"
#include "tests/test_attacks_fixture.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw_test;

namespace {
double robust_accuracy(Attack& attack, nn::Module& model, const Blobs& data, uint64_t seed = 0) {
    Rng rng(seed);
    return accuracy_of(attack.run(model, data.x, data.y, rng).pred, data.labels);
}
PgdConfig pgd20(float eps) {
    PgdConfig c;
    c.eps = eps;
    c.alpha = eps / 4;
    c.steps = 20;
    return c;
}
}  // namespace

TEST_CASE("PGD-20 <= FGSM and APGD-CE <= PGD-20 on a trained model", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    // A larger set than the other tests use: the orderings are statements about accuracies, and on a few dozen
    // samples a single point PGD breaks and APGD does not can flip them.
    const Blobs data = make_blobs(400, 77);
    Fgsm fgsm(FgsmConfig{kBlobEps, false, ModelMode::Eval});
    Pgd pgd(pgd20(kBlobEps));
    Apgd apgd(ApgdConfig{Norm::Linf, kBlobEps});
    const double clean = accuracy(model, data.x, data.labels);
    const double a_fgsm = robust_accuracy(fgsm, model, data);
    const double a_pgd = robust_accuracy(pgd, model, data);
    const double a_apgd = robust_accuracy(apgd, model, data);
    INFO("clean " << clean << " fgsm " << a_fgsm << " pgd20 " << a_pgd << " apgd-ce " << a_apgd);
    REQUIRE(a_fgsm < clean);   // the attacks matter on this problem ...
    REQUIRE(a_apgd > 0.05);    // ... without breaking everything
    REQUIRE(a_pgd <= a_fgsm);
    REQUIRE(a_apgd <= a_pgd);
}

TEST_CASE("AutoAttack is at most as accurate as each of its parts", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    AutoAttackConfig c;
    c.eps = kBlobEps;
    c.square_queries = 500;
    auto aa = make_autoattack(c);
    Rng rng(9);
    const AttackResult r = aa->run(model, data.x, data.y, rng);
    const double a_aa = accuracy_of(r.pred, data.labels);

    // Each part alone, seeded as the ensemble seeds it (one seed drawn from the caller's Rng, shared by all).
    const uint64_t part_seed = Rng(9).next_u64();
    std::vector<std::vector<int32_t>> part_pred;
    for (const auto& part : aa->parts()) {
        Rng part_rng(part_seed);
        part_pred.push_back(part->run(model, data.x, data.y, part_rng).pred);
        INFO(part->name() << " " << accuracy_of(part_pred.back(), data.labels) << " autoattack " << a_aa);
        REQUIRE(a_aa <= accuracy_of(part_pred.back(), data.labels));
    }
    // Pointwise worst case where the part sees exactly what it saw inside the ensemble: APGD-CE runs first on the
    // same points with the same seed; FAB-T is deterministic and per sample independent.
    for (size_t i = 0; i < data.labels.size(); ++i) {
        const bool robust = r.pred[i] == data.labels[i];
        if (robust) {
            REQUIRE(part_pred[0][i] == data.labels[i]);
            REQUIRE(part_pred[2][i] == data.labels[i]);
        }
    }
    REQUIRE(a_aa > 0.05);
}

TEST_CASE("targeted PGD reaches the target on an undefended model", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    PgdConfig c;
    c.eps = 0.12f;
    c.alpha = 0.01f;
    c.steps = 40;
    c.targeted = true;
    Pgd pgd(c);
    Rng rng(4);
    const AttackResult r = pgd.run(model, data.x, data.y, rng);
    REQUIRE(r.targets.size() == data.labels.size());
    int hit = 0;
    for (size_t i = 0; i < r.targets.size(); ++i) {
        REQUIRE(r.targets[i] != data.labels[i]);
        hit += r.pred[i] == r.targets[i];
        REQUIRE(r.success[i] == (r.pred[i] == r.targets[i]));
    }
    INFO(hit << " of " << r.targets.size() << " reached their target");
    REQUIRE(hit > 0.9 * r.targets.size());

    // Fixed targets (FAIR-TAT draws them itself) are honoured.
    PerSample ps;
    for (int32_t y : data.labels) ps.targets.push_back((y + 3) % kClasses);
    const AttackResult fixed = pgd.run(model, data.x, data.y, rng, ps);
    REQUIRE(fixed.targets == ps.targets);
}

TEST_CASE("Square runs n_queries iterations after its initialisation, and counts every forward", "[attacks]") {
    QuietAttacks quiet;
    auto counting = std::make_shared<CountingModel>(trained_mlp_ptr());
    const Blobs& data = test_blobs();
    const int budget = 150;
    Square square(SquareConfig{kBlobEps, budget, 0.8f, 1, ModelMode::Eval});

    // Per sample: one sample per run, so every forward pass the wrapper sees belongs to that sample.
    bool some_survived = false;
    const std::vector<float> all = data.x.to_vector();
    for (int i = 0; i < 12; ++i) {
        const Tensor x = Tensor::from_vector(std::vector<float>(all.begin() + i * 192, all.begin() + (i + 1) * 192),
                                             {1, 3, 8, 8});
        const Tensor y = Tensor::from_labels({data.labels[i]});
        counting->forwards = 0;
        Rng rng(i);
        const AttackResult r = square.run(*counting, x, y, rng);
        INFO("sample " << i << ": " << counting->forwards << " forward passes");
        // the clean check, the stripe initialisation, then at most n_queries iterations (AutoAttack's loop)
        REQUIRE(counting->forwards <= budget + 2);
        REQUIRE(r.queries.at(0) == counting->forwards);
        if (r.pred[0] == data.labels[i]) {
            REQUIRE(counting->forwards == budget + 2);   // an unbroken sample runs every iteration
            some_survived = true;
        }
    }
    REQUIRE(some_survived);

    // Whole batch: the per-sample counts add up to what the model saw.
    counting->forwards = 0;
    Rng rng(1);
    const AttackResult r = square.run(*counting, data.x, data.y, rng);
    int64_t total = 0;
    for (int64_t q : r.queries) {
        REQUIRE(q <= budget + 2);
        total += q;
    }
    REQUIRE(total == counting->forwards);
}

TEST_CASE("early-stopped PGD (FAT): both bookkeepings", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    const std::vector<float> eps(data.labels.size(), kBlobEps);
    const Images x = from_tensor(data.x);

    // With a budget no sample can exhaust and no noise, both are plain PGD-K from the same uniform start.
    Pgd pgd(pgd20(kBlobEps));
    Rng r0(3);
    const auto plain = pgd.run(model, data.x, data.y, r0).x_adv.to_vector();
    for (FatSemantics sem : {FatSemantics::Original, FatSemantics::Cfa}) {
        EarlyStopPgdConfig c;
        c.eps = kBlobEps;
        c.alpha = kBlobEps / 4;
        c.steps = 20;
        c.tau = 21;
        c.semantics = sem;
        c.mode = ModelMode::Eval;
        EarlyStopPgd fat(c);
        Rng r1(3);
        REQUIRE(fat.run(model, data.x, data.y, r1).x_adv.to_vector() == plain);
    }

    // CFA, τ = 0: random start only.
    {
        EarlyStopPgdConfig c = fat_cfa_config(kBlobEps);
        c.tau = 0;
        c.mode = ModelMode::Eval;
        EarlyStopPgd fat(c);
        Rng r1(5), r2(5);
        const Images start = uniform_linf_start(x, eps, r2);
        REQUIRE(fat.run(model, data.x, data.y, r1).x_adv.to_vector() == start.v);
    }

    // τ = 1 at a radius where the random start itself is sometimes misclassified: CFA spends the whole budget on
    // that first miss and leaves those samples at the start for good; the original only freezes a sample on a
    // miss once its budget is already 0, so they still move.
    {
        const float big = 0.5f;
        const std::vector<float> eps_big(data.labels.size(), big);
        Rng r2(6);
        const Images start = uniform_linf_start(x, eps_big, r2);
        ModelOracle oracle(model, Device::cpu());
        const auto start_pred = oracle.forward(start).preds();
        int wrong_at_start = 0;
        for (size_t i = 0; i < start_pred.size(); ++i) wrong_at_start += start_pred[i] != data.labels[i];
        REQUIRE(wrong_at_start > 5);

        EarlyStopPgdConfig c = fat_cfa_config(big);
        c.tau = 1;
        c.alpha = 0.01f;
        c.mode = ModelMode::Eval;
        EarlyStopPgd cfa(c);
        c.semantics = FatSemantics::Original;
        EarlyStopPgd original(c);
        Rng r1(6), r3(6);
        const Images out_cfa = from_tensor(cfa.run(model, data.x, data.y, r1).x_adv);
        const Images out_orig = from_tensor(original.run(model, data.x, data.y, r3).x_adv);
        // Cfa (the CFA code's order): a sample misclassified at its start still moves at that first check (its
        // counter is 1 there), spends it and never moves again, so it ends exactly one PGD step from the start.
        PgdConfig one = pgd20(big);
        one.steps = 1;
        one.alpha = 0.01f;
        Rng r4(6);
        const Images one_step = from_tensor(Pgd(one).run(model, data.x, data.y, r4).x_adv);
        for (size_t i = 0; i < start_pred.size(); ++i) {
            if (start_pred[i] == data.labels[i]) continue;
            INFO("sample " << i);
            REQUIRE(std::equal(out_cfa.row(i), out_cfa.row(i) + x.dim(), one_step.row(i)));
            REQUIRE_FALSE(std::equal(out_cfa.row(i), out_cfa.row(i) + x.dim(), start.row(i)));
            REQUIRE_FALSE(std::equal(out_orig.row(i), out_orig.row(i) + x.dim(), start.row(i)));
        }
    }
}

TEST_CASE("early-stopped PGD, targeted (FAIR-TAT on FAT): targeted PGD until a sample leaves its class", "[attacks]") {
    QuietAttacks quiet;
    nn::Module& model = trained_mlp();
    const Blobs& data = test_blobs();
    const Images x = from_tensor(data.x);
    PerSample fixed;
    for (int32_t y : data.labels) fixed.targets.push_back((y + 1) % kClasses);

    // A budget no sample can exhaust: exactly targeted PGD-K with the same start and targets.
    PgdConfig pc = pgd20(kBlobEps);
    pc.targeted = true;
    Pgd pgd(pc);
    EarlyStopPgdConfig c = fat_cfa_config(kBlobEps);
    c.alpha = pc.alpha;
    c.steps = pc.steps;
    c.tau = pc.steps + 1;
    c.targeted = true;
    c.mode = ModelMode::Eval;
    EarlyStopPgd fat(c);
    Rng r0(3), r1(3);
    const AttackResult want = pgd.run(model, data.x, data.y, r0, fixed);
    const AttackResult got = fat.run(model, data.x, data.y, r1, fixed);
    REQUIRE(got.x_adv.to_vector() == want.x_adv.to_vector());
    REQUIRE(got.targets == fixed.targets);
    // Without fixed targets it draws its own, never the true class.
    Rng r2(4);
    const AttackResult drawn = fat.run(model, data.x, data.y, r2);
    REQUIRE(drawn.targets.size() == data.labels.size());
    for (size_t i = 0; i < drawn.targets.size(); ++i) REQUIRE(drawn.targets[i] != data.labels[i]);

    // τ = 1 at a radius where the random start is sometimes misclassified: "misclassified" is ŷ ≠ y, so a sample
    // whose start lands in a class other than its target spends its counter at the first check (moving once, as
    // the CFA code does) and ends one targeted PGD step from the start.
    const float big = 0.5f;
    const std::vector<float> eps_big(data.labels.size(), big);
    Rng rs(6);
    const Images start = uniform_linf_start(x, eps_big, rs);
    ModelOracle oracle(model, Device::cpu());
    const auto start_pred = oracle.forward(start).preds();
    PerSample elsewhere;   // a target that is neither y nor where the start landed
    int stopped_short = 0;
    for (size_t i = 0; i < start_pred.size(); ++i) {
        int32_t t = (data.labels[i] + 1) % kClasses;
        if (t == start_pred[i]) t = (t + 1) % kClasses;
        if (t == data.labels[i]) t = (t + 1) % kClasses;
        elsewhere.targets.push_back(t);
        stopped_short += start_pred[i] != data.labels[i] && start_pred[i] != t;
    }
    REQUIRE(stopped_short > 3);
    EarlyStopPgdConfig s = fat_cfa_config(big);
    s.tau = 1;
    s.alpha = 0.01f;
    s.targeted = true;
    s.mode = ModelMode::Eval;
    EarlyStopPgd stopping(s);
    Rng r3(6);
    const Images out = from_tensor(stopping.run(model, data.x, data.y, r3, elsewhere).x_adv);
    PgdConfig one = pgd20(big);
    one.steps = 1;
    one.alpha = 0.01f;
    one.targeted = true;
    Rng r4(6);
    const Images one_step = from_tensor(Pgd(one).run(model, data.x, data.y, r4, elsewhere).x_adv);
    int moved = 0;
    for (size_t i = 0; i < start_pred.size(); ++i) {
        const bool at_start = std::equal(out.row(i), out.row(i) + x.dim(), start.row(i));
        if (start_pred[i] != data.labels[i]) {
            INFO("sample " << i << ": label " << data.labels[i] << ", start predicted " << start_pred[i] << ", target "
                           << elsewhere.targets[i]);
            REQUIRE(std::equal(out.row(i), out.row(i) + x.dim(), one_step.row(i)));
            REQUIRE_FALSE(at_start);
        } else {
            moved += !at_start;
        }
    }
    REQUIRE(moved > 0);   // the others are pushed toward their targets

    EarlyStopPgdConfig bad = fat_cfa_config(kBlobEps);
    bad.targeted = true;
    bad.semantics = FatSemantics::Original;
    REQUIRE_THROWS_WITH(EarlyStopPgd(bad), Catch::Matchers::Contains("targeted form exists with the CFA bookkeeping only"));
}
