// The CPU backend's thread team: CLASSWISE_THREADS parsing, the wait policy set before libgomp starts, and results
// that do not depend on the number of threads (training steps, a resume under another thread count, and the
// OpenBLAS GEMM shapes our layers use).
#include <catch2/catch.hpp>
#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/ops.h"
#include "engine/ops/op_util.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "nn/training_state.h"
#include "tests/skip.h"
#include "tests/test_nn_util.h"

using namespace cw;
using namespace cw_nn_test;
using Catch::Matchers::Contains;

namespace {

// Sets (or unsets, with nullptr) an environment variable for one scope.
class EnvScope {
public:
    EnvScope(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~EnvScope() {
        if (old_) setenv(name_, old_->c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

// The thread count for one scope, restored afterwards.
class ThreadsScope {
public:
    explicit ThreadsScope(int n) : old_(cpu_threads()) { set_cpu_threads(n); }
    ~ThreadsScope() { set_cpu_threads(old_); }

private:
    int old_;
};

// The benchmark's small MNIST CNN with a batch norm: Winograd and im2col convolutions, batch-norm statistics,
// max-pool, linear layers, all above the parallel grain at batch 32.
std::shared_ptr<nn::Sequential> small_cnn() {
    Rng init(7);
    return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::Conv2d>(1, 32, 3, 1, 0, true, init), std::make_shared<nn::BatchNorm2d>(32),
        std::make_shared<nn::ReLU>(), std::make_shared<nn::Conv2d>(32, 32, 3, 1, 0, true, init),
        std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
        std::make_shared<nn::Conv2d>(32, 64, 3, 1, 0, true, init), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Conv2d>(64, 64, 3, 1, 0, true, init), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
        std::make_shared<nn::Linear>(1024, 200, true, init), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Linear>(200, 10, true, init)});
}

struct Run {
    std::shared_ptr<nn::Sequential> model = small_cnn();
    nn::SGD sgd{model->parameters(), options()};

    static nn::SgdOptions options() {
        nn::SgdOptions o;
        o.lr = 0.05f;
        return o;
    }

    // Optimiser step `step` (0-based) on its own batch of 32 images.
    void train_step(int64_t step) {
        Rng data(100 + static_cast<uint64_t>(step));
        std::vector<float> x(32 * 28 * 28);
        data.fill_uniform(x.data(), x.size(), 0.f, 1.f);
        std::vector<int32_t> y(32);
        for (auto& label : y) label = static_cast<int32_t>(data.below(10));
        model->train();
        sgd.zero_grad();
        cross_entropy(model->forward(Tensor::from_vector(x, {32, 1, 28, 28})), Tensor::from_labels(y)).backward();
        sgd.step();
    }

    std::vector<std::vector<float>> state() {
        std::vector<std::vector<float>> out;
        for (const auto& e : model->state())
            if (e.tensor->dtype() == DType::F32) out.push_back(e.tensor->to_vector());
        return out;
    }
};

void require_bit_identical(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        INFO("state tensor " << i);
        REQUIRE(a[i].size() == b[i].size());
        REQUIRE(std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) == 0);
    }
}

std::vector<std::vector<float>> train(int threads, int64_t steps) {
    ThreadsScope t(threads);
    Run run;
    for (int64_t s = 0; s < steps; ++s) run.train_step(s);
    return run.state();
}

}  // namespace

TEST_CASE("CLASSWISE_THREADS: a whole number from 1 up, anything else a clear error", "[threads]") {
    REQUIRE(parse_thread_count("CLASSWISE_THREADS", "1") == 1);
    REQUIRE(parse_thread_count("CLASSWISE_THREADS", "16") == 16);
    for (const char* bad : {"", "0", "-2", "two", "2x", "1.5", " 3", "1025", "99999999999999999999"}) {
        INFO("'" << bad << "'");
        const std::string msg = error_of<Error>([&] { parse_thread_count("CLASSWISE_THREADS", bad); });
        CHECK_THAT(msg, Contains("CLASSWISE_THREADS must be a whole number of threads from 1 to 1024"));
        CHECK_THAT(msg, Contains(std::string("got '") + bad + "'"));
    }
    {
        EnvScope env("CLASSWISE_THREADS", "3");
        REQUIRE(cpu_threads_from_environment() == 3);
    }
    {
        EnvScope env("CLASSWISE_THREADS", "lots");
        CHECK_THAT(error_of<Error>([] { cpu_threads_from_environment(); }), Contains("CLASSWISE_THREADS"));
    }
    {
        EnvScope env("CLASSWISE_THREADS", nullptr), omp("OMP_NUM_THREADS", nullptr);
        REQUIRE(cpu_threads_from_environment() == available_cores());
        REQUIRE(available_cores() >= 1);
    }
    {
        EnvScope env("CLASSWISE_THREADS", nullptr), omp("OMP_NUM_THREADS", "2");
        REQUIRE(cpu_threads_from_environment() == 0);  // the user's OMP_NUM_THREADS stands
    }
}

TEST_CASE("the OpenMP spin count was set before libgomp read its environment", "[threads]") {
    // Unless the user chose a policy or a spin count, the .preinit_array entry of engine/cpu/threads.cpp set
    // GOMP_SPINCOUNT=1000 before libgomp's constructor (which is when libgomp reads it).
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const char* spin = std::getenv("GOMP_SPINCOUNT");
    REQUIRE((policy != nullptr || spin != nullptr));
    if (policy == nullptr) REQUIRE(std::string(spin) != "");   // "1000" unless the user gave a count
}

// Whether OpenBLAS's sgemm gives the same bits on 1, 2 and 3 threads for the shapes our layers use (conv forward
// k x cols x crs, conv filter gradient k x crs x cols, conv data gradient, linear layers): "" if so, else the first
// shape that differs. It depends on the CPU and the kernels OpenBLAS picks for it: it holds on our CI machines
// (AMD EPYC, Debian's OpenBLAS 0.3.21 with its Cooperlake kernels) and not on the Intel Xeon host of the H100
// machine used for the CUDA work (Prescott kernels picked; OPENBLAS_CORETYPE=Haswell differed as well). Our own
// kernels' thread invariance can only be checked where OpenBLAS has it.
std::string sgemm_thread_variance() {
    struct Shape3 {
        bool ta, tb;
        int64_t m, n, k;
    };
    for (Shape3 s : {Shape3{false, false, 64, 4096, 288}, Shape3{false, true, 64, 288, 4096},
                     Shape3{true, false, 288, 4096, 64}, Shape3{false, true, 32, 200, 1024},
                     Shape3{false, false, 200, 1024, 32}, Shape3{false, false, 512, 512, 512},
                     // the small CNN's first conv: a 32 x 9 filter gradient summed over 4732 columns
                     Shape3{false, true, 32, 9, 4732}}) {
        Tensor a = cw_test::randn({s.m * s.k}, 1, 1.f, false), b = cw_test::randn({s.k * s.n}, 2, 1.f, false);
        std::vector<std::vector<float>> results;
        for (int threads : {1, 2, 3}) {
            ThreadsScope t(threads);
            Tensor c = Tensor::zeros({s.m * s.n});
            cpu_backend().gemm(s.ta, s.tb, s.m, s.n, s.k, 1.f, a.f32(), s.ta ? s.m : s.k, b.f32(), s.tb ? s.k : s.n,
                               0.f, c.f32(), s.n);
            results.push_back(c.to_vector());
        }
        for (int r : {1, 2})
            if (std::memcmp(results[0].data(), results[r].data(), results[0].size() * sizeof(float)) != 0)
                return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " (trans " +
                       std::to_string(s.ta) + std::to_string(s.tb) + ") differs between 1 and " +
                       std::to_string(r + 1) + " threads";
    }
    return "";
}

// Skips (counted) where OpenBLAS itself is not thread-count invariant, naming its kernels and the shape.
#define CW_SKIP_WITHOUT_INVARIANT_SGEMM()                                                                  \
    do {                                                                                                   \
        static const std::string variance = sgemm_thread_variance();                                       \
        if (!variance.empty())                                                                             \
            CW_SKIP("OpenBLAS (" + std::string(openblas_get_corename()) + " kernels) is not thread-count "  \
                    "invariant on this CPU: " + variance);                                                \
    } while (0)

TEST_CASE("whole-tensor sums and broadcast-gradient sums give the same bits on 1, 2 and 3 threads", "[threads]") {
    // Where the order of additions shows: two huge values that cancel, between them ones that are lost next to a
    // huge partial sum and kept next to a small one. Summed in one pass: 2^19 - 1; cut at the middle (the old
    // two-thread OpenMP reduction): 0.
    const int64_t n = int64_t(1) << 20;
    std::vector<float> v(static_cast<size_t>(n), 1.f);
    v[0] = 1e17f;
    v[n / 2] = -1e17f;
    Tensor big = Tensor::from_vector(v, {n});
    Tensor rows = cw_test::randn({4096, 64}, 9, 1.f, false);
    const BroadcastIndex to_bias = detail::reduce_index({1, 64}, {4096, 64});
    std::vector<float> sums, squares;
    std::vector<std::vector<float>> bias;
    for (int threads : {1, 2, 3}) {
        ThreadsScope t(threads);
        float s = 0;
        cpu_backend().sum_all(big.f32(), &s, n);
        sums.push_back(s);
        squares.push_back(cpu_backend().sum_squares(rows.f32(), rows.numel()));
        std::vector<float> gb(64);
        cpu_backend().sum_to(rows.f32(), gb.data(), to_bias, 64);
        bias.push_back(gb);
    }
    INFO("sum_all: " << sums[0] << " " << sums[1] << " " << sums[2]);
    REQUIRE(std::memcmp(&sums[0], &sums[1], sizeof(float)) == 0);
    REQUIRE(std::memcmp(&sums[0], &sums[2], sizeof(float)) == 0);
    REQUIRE(std::memcmp(&squares[0], &squares[1], sizeof(float)) == 0);
    REQUIRE(std::memcmp(&squares[0], &squares[2], sizeof(float)) == 0);
    require_bit_identical({bias[0]}, {bias[1]});
    require_bit_identical({bias[0]}, {bias[2]});
}

TEST_CASE("training steps give bit-identical weights on 1, 2 and 3 threads", "[threads]") {
    CW_SKIP_WITHOUT_INVARIANT_SGEMM();
    const auto one = train(1, 3);
    require_bit_identical(one, train(2, 3));
    require_bit_identical(one, train(3, 3));
}

TEST_CASE("a run saved on one thread count and resumed on another matches the uninterrupted run bit for bit",
          "[threads]") {
    CW_SKIP_WITHOUT_INVARIANT_SGEMM();
    ScratchDir dir;
    const std::string path = dir.file("state.safetensors");
    const auto uninterrupted = train(1, 4);
    {
        ThreadsScope t(1);
        Run first;
        first.train_step(0);
        first.train_step(1);
        nn::TrainingState s;
        s.model = first.model.get();
        s.optimizer = &first.sgd;
        s.step = 2;
        nn::save_training_state(path, s);
    }
    ThreadsScope t(2);
    Run resumed;
    nn::TrainingState s;
    s.model = resumed.model.get();
    s.optimizer = &resumed.sgd;
    nn::load_training_state(path, s);
    REQUIRE(s.step == 2);
    resumed.train_step(2);
    resumed.train_step(3);
    require_bit_identical(uninterrupted, resumed.state());
}
