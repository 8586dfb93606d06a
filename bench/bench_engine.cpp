// make bench: one training step (forward + backward + SGD update) and one input-gradient step (forward +
// backward to the input only, the PGD step) at batch 128 for (a) the small MNIST CNN and (b) PreAct ResNet-18,
// plus the sgemm throughput the CPU reaches. Median of timed repetitions after warm-up.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "engine/backend.h"
#include "engine/ops.h"
#include "nn/layers.h"
#include "nn/models/preact_resnet.h"
#include "nn/optim.h"

extern "C" int openblas_get_num_threads(void);
extern "C" char* openblas_get_corename(void);

using namespace cw;
using cw_bench::median_ms;

namespace {


void bench_gemm() {
    for (int64_t s : {512, 1024}) {
        Tensor a = Tensor::full({s, s}, 0.01f), b = Tensor::full({s, s}, 0.02f), c = Tensor::zeros({s, s});
        const double ms = median_ms([&] { backend(Device::cpu()).gemm(false, false, s, s, s, 1.f, a.f32(), s, b.f32(), s, 0.f, c.f32(), s); }, 2, 7);
        std::printf("sgemm %lldx%lldx%lld: %.1f GFLOP/s\n", (long long)s, (long long)s, (long long)s, 2.0 * s * s * s / ms / 1e6);
    }
}

Tensor random_images(int64_t n, int64_t c, int64_t hw, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(static_cast<size_t>(n * c * hw * hw));
    rng.fill_uniform(v.data(), v.size(), 0.f, 1.f);
    return Tensor::from_vector(v, {n, c, hw, hw});
}

void bench_model(const char* name, nn::Module& model, int64_t c, int64_t hw, int reps) {
    const int64_t batch = 128;
    Tensor x = random_images(batch, c, hw, 1);
    std::vector<int32_t> y(batch);
    for (int64_t i = 0; i < batch; ++i) y[i] = static_cast<int32_t>(i % 10);
    Tensor labels = Tensor::from_labels(y);
    nn::SGD opt(model.parameters(), {0.01f, 0.9f, 0.f, 5e-4f, false});

    model.train();
    const double train_ms = median_ms([&] {
        opt.zero_grad();
        cross_entropy(model(x), labels).backward();
        opt.step();
    }, 2, reps);

    model.eval();
    const double input_grad_ms = median_ms([&] {
        InputGradOnlyGuard attack_step;
        Tensor xa = x.detach().set_requires_grad(true);
        cross_entropy(model(xa), labels).backward();
    }, 2, reps);

    std::printf("%-18s batch %lld  train step %8.1f ms (%7.1f img/s)   input-grad step %8.1f ms (%7.1f img/s)\n", name,
                (long long)batch, train_ms, batch * 1000.0 / train_ms, input_grad_ms, batch * 1000.0 / input_grad_ms);
}

}  // namespace

int main(int argc, char** argv) {
    // [--quick] [small|resnet]: fewer repetitions; one model only.
    bool quick = false;
    std::string only;
    for (int i = 1; i < argc; ++i) (std::string(argv[i]) == "--quick" ? quick = true : (only = argv[i], false));
    std::printf("classwise CPU benchmark: %d OpenMP threads, OpenBLAS %d threads (%s kernels)\n", omp_get_max_threads(),
                openblas_get_num_threads(), openblas_get_corename());
    bench_gemm();
    manual_seed(0);
    nn::Sequential small_cnn{
        std::make_shared<nn::Conv2d>(1, 32, 3), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Conv2d>(32, 32, 3), std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
        std::make_shared<nn::Conv2d>(32, 64, 3), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Conv2d>(64, 64, 3), std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
        std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(1024, 200), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Linear>(200, 10)};
    if (only.empty() || only == "small") bench_model("small CNN 1x28x28", small_cnn, 1, 28, quick ? 3 : 11);
    nn::PreActResNet resnet({2, 2, 2, 2}, 10);
    if (only.empty() || only == "resnet") bench_model("PreAct ResNet-18", resnet, 3, 32, quick ? 1 : 5);
    return 0;
}
