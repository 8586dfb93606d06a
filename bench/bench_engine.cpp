// make bench: what a training run spends its time on, at batch 128, for the small CNN (the Fashion-MNIST/MNIST
// model, 1x28x28), PreAct ResNet-18 and WRN-28-10 (3x32x32):
//   train       one training step (forward + backward + SGD update)
//   input_grad  one input-gradient step in eval mode (forward + backward to the input only: an evaluation PGD step)
//   pgd10_at    one PGD-10 adversarial-training step as the trainer runs pgd_at (train/methods/pgd_at.cpp): the
//               method's batch_loss (attacks::Pgd, ten train-mode input-gradient steps from a uniform start, then
//               the train-mode forward on x_adv), backward and the SGD update; without the trainer's optional
//               clean forward after the step
// Each row: milliseconds per step (median of repetitions after warm-up), the GFLOP the step spends in
// convolutions and matrix products (bench/flop_count.h: counted from what the engine ran, so the attack steps
// count no weight gradients and the training step no data gradient for the first layer), the GFLOP/s that makes,
// and that rate as a share of the sgemm rate the engine's gemm reaches in the same run. WRN-28-10 takes minutes per
// step on two cores: it runs the pgd10_at row alone, one timed step.
// tools/bench_pytorch_cpu.py runs the same rows in PyTorch (fp32 and bf16 autocast) and, given this output,
// prints the ratios; `make bench` runs both.
// Convolutions run as CLASSWISE_CONV / CLASSWISE_PRECISION say (the first line names the setting). With --conv,
// the pgd10_at row is repeated under each named setting (bench/conv_variants.h) as rows pgd10_at:native,
// pgd10_at:onednn, pgd10_at:bf16, ...
//
//   build/bench/bench_engine [--quick] [--workloads small,preact,wrn] [--conv native,onednn,bf16]
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "util/split_list.h"
#include "bench/bench_util.h"
#include "bench/conv_variants.h"
#include "bench/flop_count.h"
#include "engine/backend.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/onednn_conv.h"
#include "engine/layout_copy.h"
#include "engine/ops.h"
#include "nn/model_registry.h"
#include "nn/optim.h"
#include "train/methods/pgd_at.h"

extern "C" int openblas_get_num_threads(void);
extern "C" char* openblas_get_corename(void);

using namespace cw;
using cw_bench::StepFlops;

namespace {

constexpr int64_t kBatch = 128;
// The FLOP count runs each step once at this batch and scales it to kBatch (every counted op is linear in the
// batch), so counting WRN-28-10 costs a fraction of a step.
constexpr int64_t kCountBatch = 2;

// The reference rate: a large square sgemm through the engine's gemm, best of several.
double sgemm_gflops(int64_t s, int reps) {
    Tensor a = Tensor::full({s, s}, 0.01f), b = Tensor::full({s, s}, 0.02f), c = Tensor::zeros({s, s});
    const double ms = cw_bench::best_ms(
        [&] { backend(Device::cpu()).gemm(false, false, s, s, s, 1.f, a.f32(), s, b.f32(), s, 0.f, c.f32(), s); }, 1,
        reps);
    return 2.0 * s * s * s / ms / 1e6;
}

struct Batch {
    Tensor images, labels;
    std::vector<int32_t> host_labels;
};

Batch random_batch(int64_t n, int64_t c, int64_t hw, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(static_cast<size_t>(n * c * hw * hw));
    rng.fill_uniform(v.data(), v.size(), 0.f, 1.f);
    Batch b{Tensor::from_vector(v, {n, c, hw, hw}), Tensor(), {}};
    for (int64_t i = 0; i < n; ++i) b.host_labels.push_back(static_cast<int32_t>(i % 10));
    b.labels = Tensor::from_labels(b.host_labels);
    return b;
}

struct Workload {
    std::string key;      // what --workloads names
    std::string arch;     // nn::make_model's name; also the row's first column
    int64_t channels, side;
    float eps;            // the dataset's training radius (Fashion-MNIST 0.1, CIFAR-10 8/255)
    bool pgd_at_only;     // too slow on two cores for the single-step rows
    int reps, at_warmup, at_reps;
};

struct Row {
    double ms;
    StepFlops flops;
    onednn_conv::TimeSplit onednn;  // summed over the row's warm-up and timed steps
    int steps;
};

void print_row(const Workload& w, const std::string& step, const Row& r, double sgemm) {
    const double gflop = r.flops.total() / 1e9, rate = gflop / r.ms * 1e3;
    std::printf("%-16s %-15s %10.1f %10.2f %8.1f %7.1f%% %8.1f   (fwd %.2f + data %.2f + weights %.2f GFLOP)\n",
                w.arch.c_str(), step.c_str(), r.ms, gflop, rate, 100 * rate / sgemm, kBatch * 1000.0 / r.ms,
                r.flops.forward / 1e9, r.flops.backward_data / 1e9, r.flops.backward_weights / 1e9);
    // Where a step's time goes when oneDNN convolves: its convolutions, the reorders between our plain fp32
    // tensors and its layouts, and the rest of the engine (batch norm, element-wise kernels, matrix products,
    // the optimiser, the first layer's image gradient in engine/cpu/thin_conv_data.cpp), per step. The oneDNN parts are means over the row's steps, the rest is the median less them.
    if (r.onednn.convolutions > 0) {
        const double conv = r.onednn.convolution_ms / r.steps, reorder = r.onednn.reorder_ms / r.steps,
                     out = r.onednn.output_reorder_ms / r.steps, rest = r.ms - conv - reorder;
        std::printf("%-16s %-15s where the time goes: oneDNN convolutions %.1f ms (%.0f%%), their reorders %.1f ms "
                    "(%.0f%%; of them %.1f ms back from the outputs' layouts), the rest of the engine %.1f ms (%.0f%%)\n",
                    w.arch.c_str(), step.c_str(), conv, 100 * conv / r.ms, reorder, 100 * reorder / r.ms, out, rest,
                    100 * rest / r.ms);
    }
    std::fflush(stdout);
}

void bench_workload(const Workload& w, double sgemm, const std::vector<cw_bench::ConvVariant>& variants) {
    manual_seed(0);
    nn::ModelConfig cfg;
    cfg.in_channels = w.channels;
    cfg.input_size = w.side;
    std::shared_ptr<nn::Module> model = nn::make_model(w.arch, cfg);
    std::printf("%-16s params %lld, input %lldx%lldx%lld\n", w.arch.c_str(), static_cast<long long>(model->num_parameters()),
                static_cast<long long>(w.channels), static_cast<long long>(w.side), static_cast<long long>(w.side));
    nn::SGD opt(model->parameters(), {0.01f, 0.9f, 0.f, 5e-4f, false});
    const Batch full = random_batch(kBatch, w.channels, w.side, 1), small = random_batch(kCountBatch, w.channels, w.side, 1);
    auto measure = [&](auto step, int warmup, int reps) {
        const StepFlops f = cw_bench::count_flops([&] { step(small); }).scaled(double(kBatch) / kCountBatch);
        onednn_conv::reset_time_split();
        const double ms = cw_bench::median_ms([&] { step(full); }, warmup, reps);
        return Row{ms, f, onednn_conv::time_split(), warmup + reps};
    };

    if (!w.pgd_at_only) {
        // Each step in a layout_copy::KeepScope, as the trainer's (train/trainer.cpp); an evaluation keeps one
        // open throughout (eval/evaluator.cpp), so the input-gradient row runs in one.
        auto train_step = [&](const Batch& b) {
            const layout_copy::KeepScope keep_converted_weights;
            model->train();
            opt.zero_grad();
            cross_entropy((*model)(b.images), b.labels).backward();
            opt.step();
        };
        print_row(w, "train", measure(train_step, 2, w.reps), sgemm);
        auto input_grad_step = [&](const Batch& b) {
            model->eval();
            InputGradOnlyGuard attack_step;
            Tensor xa = b.images.detach().set_requires_grad(true);
            cross_entropy((*model)(xa), b.labels).backward();
        };
        const layout_copy::KeepScope evaluation;
        print_row(w, "input_grad", measure(input_grad_step, 2, w.reps), sgemm);
    }

    // The trainer's step for pgd_at (train/trainer.cpp): the method's per-sample loss, backward, optimiser step.
    train::MethodOptions options;
    options.eps = w.eps;
    train::PgdAt method(options);
    std::printf("%-16s %s (the step below leaves out the clean forward)\n", w.arch.c_str(), method.describe().c_str());
    Rng method_rng(2);
    auto at_step = [&](const Batch& b) {
        const layout_copy::KeepScope keep_converted_weights;
        model->train();
        train::BatchInput in{*model, b.images, b.labels, b.host_labels, 0, 0, 10, method_rng};
        const train::BatchLoss loss = method.batch_loss(in);
        opt.zero_grad();
        sum(loss.per_sample).backward();
        opt.step();
    };
    if (variants.empty()) return print_row(w, "pgd10_at", measure(at_step, w.at_warmup, w.at_reps), sgemm);
    const ConvPolicy saved = cpu_backend().conv_policy();
    for (const auto& v : variants) {
        cpu_backend().set_conv_policy(v.policy);
        print_row(w, "pgd10_at:" + v.name, measure(at_step, w.at_warmup, w.at_reps), sgemm);
    }
    cpu_backend().set_conv_policy(saved);
}

}  // namespace

int main(int argc, char** argv) {
    attacks::default_attack_log() = nullptr;   // each workload prints its method's describe() line instead
    bool quick = false;
    std::vector<std::string> selected;
    std::vector<cw_bench::ConvVariant> variants;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            quick = true;
        } else if (a == "--workloads" && i + 1 < argc) {
            selected = cw::util::split_list(argv[++i]);
        } else if (a == "--conv" && i + 1 < argc) {
            std::string error;
            if (!cw_bench::parse_conv_variants(argv[++i], &variants, &error)) {
                std::fprintf(stderr, "bench_engine: --conv: %s\n", error.c_str());
                return 2;
            }
        } else {
            std::fprintf(stderr,
                         "bench_engine: unknown argument '%s' (expected --quick, --workloads small,preact,wrn, "
                         "--conv native,onednn,auto,bf16)\n",
                         a.c_str());
            return 2;
        }
    }
    // {key, arch, channels, side, eps, pgd_at_only, reps, pgd10_at warm-up, pgd10_at reps}
    const std::vector<Workload> all = {
        {"small", "small_cnn", 1, 28, 0.1f, false, quick ? 3 : 11, 1, quick ? 1 : 5},
        {"preact", "preact_resnet18", 3, 32, 8.f / 255, false, quick ? 1 : 5, quick ? 0 : 1, quick ? 1 : 3},
        {"wrn", "wrn28_10", 3, 32, 8.f / 255, true, 1, 0, 1},
    };
    std::vector<const Workload*> run;
    if (selected.empty())
        for (const auto& w : all) run.push_back(&w);
    for (const auto& name : selected) {
        auto it = std::find_if(all.begin(), all.end(), [&](const Workload& w) { return w.key == name; });
        if (it == all.end()) {
            std::fprintf(stderr, "bench_engine: --workloads: unknown workload '%s' (expected small, preact, wrn)\n",
                         name.c_str());
            return 2;
        }
        run.push_back(&*it);
    }

    // OpenBLAS picks its kernels by CPU unless OPENBLAS_CORETYPE names them, and the gemm rate follows them.
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("classwise CPU benchmark: %d OpenMP threads, OpenBLAS %d threads (%s kernels%s%s), batch %lld, "
                "convolutions %s\n",
                omp_get_max_threads(), openblas_get_num_threads(), openblas_get_corename(),
                coretype ? ", OPENBLAS_CORETYPE=" : "", coretype ? coretype : "", static_cast<long long>(kBatch),
                describe(cpu_backend().conv_policy()).c_str());
    const double sgemm = sgemm_gflops(2048, quick ? 3 : 5);
    std::printf("sgemm 2048x2048x2048 (engine gemm, best of %d): %.1f GFLOP/s\n", quick ? 3 : 5, sgemm);
    std::printf("%-16s %-15s %10s %10s %8s %8s %8s\n", "model", "step", "ms/step", "GFLOP/step", "GFLOP/s", "%sgemm",
                "img/s");
    for (const Workload* w : run) bench_workload(*w, sgemm, variants);
    return 0;
}
