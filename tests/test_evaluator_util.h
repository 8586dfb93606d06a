#pragma once
// What the evaluator tests share: a scratch folder, the blob problem cut into batches of 16, and the attack suite
// (FGSM, PGD-5 and a cut-down AutoAttack) they evaluate under.
#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "attacks/autoattack.h"
#include "attacks/fgsm.h"
#include "attacks/pgd.h"
#include "eval/evaluator.h"
#include "tests/test_attacks_fixture.h"

namespace cw_test {

struct EvalTempDir {
    std::filesystem::path path;
    explicit EvalTempDir(const std::string& prefix)
        : path(std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(path);
    }
    ~EvalTempDir() { std::filesystem::remove_all(path); }
    std::string sub(const std::string& name) const { return (path / name).string(); }
};

// `batches` batches of 16 blob images (make_blobs(16 · batches, seed)); sample i has dataset index first_index + i.
inline cw::eval::BatchSource blob_batches(int batches, uint64_t seed, int64_t first_index = 0) {
    const Blobs b = make_blobs(16 * batches, seed);
    const auto xs = b.x.to_vector();
    std::vector<cw::eval::EvalBatch> out;
    for (int k = 0; k < batches; ++k) {
        cw::eval::EvalBatch e;
        e.images = cw::Tensor::from_vector(
            std::vector<float>(xs.begin() + k * 16 * 192, xs.begin() + (k + 1) * 16 * 192), {16, 3, 8, 8});
        e.labels = cw::Tensor::from_labels(
            std::vector<int32_t>(b.labels.begin() + k * 16, b.labels.begin() + (k + 1) * 16));
        for (int i = 0; i < 16; ++i) e.indices.push_back(first_index + k * 16 + i);
        out.push_back(e);
    }
    return cw::eval::batches_from(std::move(out));
}

// fgsm, pgd5, autoattack (cut down): on 3 batches 3 clean + 3 + 3 + 4·3 = 21 evaluator steps.
struct BlobAttackSuite {
    std::unique_ptr<cw::attacks::Attack> fgsm, pgd, aa;
    BlobAttackSuite() {
        using namespace cw::attacks;
        fgsm = std::make_unique<Fgsm>(FgsmConfig{kBlobEps, false, ModelMode::Eval});
        PgdConfig c;
        c.eps = kBlobEps;
        c.alpha = kBlobEps / 4;
        c.steps = 5;
        pgd = std::make_unique<Pgd>(c);
        AutoAttackConfig a;
        a.eps = kBlobEps;
        a.n_iter = 8;
        a.n_target_classes = 3;
        a.square_queries = 40;
        aa = make_autoattack(a);
        for (Attack* x : list()) x->set_log(nullptr);
    }
    std::vector<cw::attacks::Attack*> list() const { return {fgsm.get(), pgd.get(), aa.get()}; }
};

// results.json without its wall-clock fields, for comparing two runs.
inline nlohmann::json timeless(nlohmann::json j) {
    for (auto& e : j["evaluations"]) e.erase("time_s");
    return j;
}

}  // namespace cw_test
