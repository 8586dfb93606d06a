// make bench (GPU): PreAct ResNet-18, batch 128 of 3x32x32, on the CUDA backend — milliseconds per training step
// (forward + backward + SGD update), per input-gradient step (the PGD step: forward + backward to the input
// only) and per PGD-10 adversarial-training step (the trainer's pgd_at: ten train-mode input-gradient steps of
// attacks::Pgd, then one training step on x_adv), images per second, and the peak GPU memory held by the caching
// allocator. Median of timed repetitions
// after warm-up (the warm-up includes cuDNN's algorithm search); each repetition ends with a device
// synchronisation. tools/bench_pytorch_gpu.py measures the same workload in PyTorch and prints the same keys.
// Without a usable GPU it prints one line "CUDA benchmark skipped: <why>" and exits 0, or, under
// CLASSWISE_REQUIRE_GPU=1, prints the reason and exits 1.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "attacks/pgd.h"
#include "engine/autograd.h"
#include "engine/cuda_backend.h"
#include "engine/cuda/plugin_api.h"
#include "engine/ops.h"
#include "nn/models/preact_resnet.h"
#include "nn/optim.h"

using namespace cw;

namespace {

template <class Fn>
Fn plugin(const char* name) {
    Fn f = cuda_plugin_fn<Fn>(name);
    if (!f) {
        std::fprintf(stderr, "bench_cuda: the CUDA plugin lacks %s\n", name);
        std::exit(1);
    }
    return f;
}

void synchronize() {
    static auto sync = plugin<cw_cuda_synchronize_fn>("cw_cuda_synchronize");
    char err[512] = {0};
    if (sync(err, sizeof err) != 0) {
        std::fprintf(stderr, "bench_cuda: %s\n", err);
        std::exit(1);
    }
}

struct Peak {
    double in_use_mib, reserved_mib;
};

Peak peak_since_reset() {
    static auto stats = plugin<cw_cuda_memory_stats_fn>("cw_cuda_memory_stats");
    int64_t in_use, cached, peak_in_use, peak_reserved;
    stats(&in_use, &cached, &peak_in_use, &peak_reserved);
    return {peak_in_use / 1048576.0, peak_reserved / 1048576.0};
}

}  // namespace

int main(int argc, char** argv) {
    std::string why;
    if (!cuda_available(&why)) {
        // On a GPU machine (CLASSWISE_REQUIRE_GPU=1) a skipped benchmark would read as a clean run.
        bool required = false;
        try {
            required = gpu_required();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bench_cuda: %s\n", e.what());
            return 1;
        }
        if (required) {
            std::fprintf(stderr, "bench_cuda: CLASSWISE_REQUIRE_GPU=1 but no usable GPU: %s\n", why.c_str());
            return 1;
        }
        std::printf("CUDA benchmark skipped: %s\n", why.c_str());
        return 0;
    }
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const int warmup = quick ? 3 : 10, reps = quick ? 5 : 30;
    const int64_t batch = 128;
    const Device gpu = Device::cuda(0);
    auto reset_peak = plugin<cw_cuda_reset_peak_memory_fn>("cw_cuda_reset_peak_memory");

    char info[512] = {0};
    plugin<cw_cuda_device_info_fn>("cw_cuda_device_info")(info, sizeof info);
    std::printf("classwise CUDA benchmark on %s\n", info);
    std::printf("TF32: %s, deterministic: %s (CLASSWISE_TF32, CLASSWISE_DETERMINISTIC, CLASSWISE_CUDNN_BENCHMARK)\n",
                plugin<cw_cuda_tf32_fn>("cw_cuda_tf32")() ? "on" : "off",
                plugin<cw_cuda_deterministic_fn>("cw_cuda_deterministic")() ? "on" : "off");

    manual_seed(0);
    nn::PreActResNet model({2, 2, 2, 2}, 10);
    model.to(gpu);
    Rng rng(1);
    std::vector<float> pixels(static_cast<size_t>(batch * 3 * 32 * 32));
    rng.fill_uniform(pixels.data(), pixels.size(), 0.f, 1.f);
    Tensor x = Tensor::from_vector(pixels, {batch, 3, 32, 32}, gpu);
    std::vector<int32_t> y(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) y[i] = static_cast<int32_t>(i % 10);
    Tensor labels = Tensor::from_labels(y, gpu);
    nn::SGD opt(model.parameters(), {0.1f, 0.9f, 0.f, 5e-4f, false});

    model.train();
    auto train_step = [&] {
        opt.zero_grad();
        cross_entropy(model(x), labels).backward();
        opt.step();
    };
    for (int i = 0; i < warmup; ++i) train_step();
    synchronize();
    reset_peak();
    const double train_ms = cw_bench::median_ms(train_step, 0, reps, synchronize);
    const Peak train_peak = peak_since_reset();

    model.eval();
    auto pgd_step = [&] {
        InputGradOnlyGuard attack_step;
        Tensor xa = x.detach().set_requires_grad(true);
        cross_entropy(model(xa), labels).backward();
    };
    for (int i = 0; i < warmup; ++i) pgd_step();
    synchronize();
    reset_peak();
    const double pgd_ms = cw_bench::median_ms(pgd_step, 0, reps, synchronize);
    const Peak pgd_peak = peak_since_reset();

    // The adversarial-training step as train/methods/pgd_at.cpp runs it (without the optional clean forward).
    attacks::PgdConfig pgd_config;
    pgd_config.mode = attacks::ModelMode::Train;
    attacks::Pgd pgd(pgd_config);
    Rng attack_rng(2);
    auto at_step = [&] {
        const Tensor x_adv = pgd.run(model, x, labels, attack_rng).x_adv;
        model.train();
        opt.zero_grad();
        cross_entropy(model(x_adv), labels).backward();
        opt.step();
    };
    // Where the AT step's time goes: one train-mode input-gradient step, and the whole attack (ten of them plus
    // the attack's own bookkeeping: input checks, random start, labels to the host).
    auto pgd_train_step = [&] {
        model.train();
        InputGradOnlyGuard attack_step;
        Tensor xa = x.detach().set_requires_grad(true);
        cross_entropy(model(xa), labels).backward();
    };
    auto attack_only = [&] { (void)pgd.run(model, x, labels, attack_rng); };
    attacks::PgdConfig no_steps = pgd_config;
    no_steps.steps = 0;
    attacks::Pgd pgd0(no_steps);
    auto attack_overhead = [&] { (void)pgd0.run(model, x, labels, attack_rng); };
    auto row_max = [&] {  // the attack's input check reduces the whole batch as one row
        NoGradGuard no_grad;
        (void)max(reshape(x, {1, -1}), 1).item();
    };
    for (int i = 0; i < warmup; ++i) attack_overhead(), row_max();
    synchronize();
    const double overhead_ms = cw_bench::median_ms(attack_overhead, 0, reps, synchronize);
    const double row_max_ms = cw_bench::median_ms(row_max, 0, reps, synchronize);
    for (int i = 0; i < warmup; ++i) pgd_train_step();
    synchronize();
    const double pgd_train_ms = cw_bench::median_ms(pgd_train_step, 0, reps, synchronize);
    for (int i = 0; i < warmup; ++i) attack_only();
    synchronize();
    const double attack_ms = cw_bench::median_ms(attack_only, 0, reps, synchronize);
    for (int i = 0; i < warmup; ++i) at_step();
    synchronize();
    reset_peak();
    const double at_ms = cw_bench::median_ms(at_step, 0, reps, synchronize);
    const Peak at_peak = peak_since_reset();
    // The same step with every host-to-device copy waiting for the queue (as before staged uploads), this run.
    static auto set_staged = plugin<cw_cuda_set_staged_uploads_fn>("cw_cuda_set_staged_uploads");
    set_staged(0);
    for (int i = 0; i < warmup; ++i) at_step();
    synchronize();
    const double at_unstaged_ms = cw_bench::median_ms(at_step, 0, reps, synchronize);
    set_staged(1);

    std::printf("workload: PreAct ResNet-18, batch %lld, 3x32x32, SGD momentum 0.9, median of %d after %d warm-up\n",
                static_cast<long long>(batch), reps, warmup);
    std::printf("train_step_ms: %.2f\n", train_ms);
    std::printf("train_images_per_s: %.0f\n", batch * 1000.0 / train_ms);
    std::printf("pgd_step_ms: %.2f\n", pgd_ms);
    std::printf("pgd_images_per_s: %.0f\n", batch * 1000.0 / pgd_ms);
    std::printf("at_step_ms: %.2f\n", at_ms);
    std::printf("at_step_unstaged_uploads_ms: %.2f (every upload waiting for the queue)\n", at_unstaged_ms);
    std::printf("pgd_train_mode_step_ms: %.2f\n", pgd_train_ms);
    std::printf("attack_pgd10_train_mode_ms: %.2f\n", attack_ms);
    std::printf("attack_pgd0_overhead_ms: %.2f (checks, random start, labels: the attack without its steps)\n", overhead_ms);
    std::printf("row_max_item_ms: %.3f (max over one row of %lld values, then .item())\n", row_max_ms,
                static_cast<long long>(x.numel()));
    std::printf("at_images_per_s: %.0f\n", batch * 1000.0 / at_ms);
    std::printf("train_peak_memory_mib: %.1f in use, %.1f reserved\n", train_peak.in_use_mib, train_peak.reserved_mib);
    std::printf("pgd_peak_memory_mib: %.1f in use, %.1f reserved\n", pgd_peak.in_use_mib, pgd_peak.reserved_mib);
    std::printf("at_peak_memory_mib: %.1f in use, %.1f reserved\n", at_peak.in_use_mib, at_peak.reserved_mib);
    return 0;
}
