// End to end: a small CNN learns a synthetic, separable image problem with plain SGD.
#include "tests/test_util.h"

#include "engine/backend.h"

using namespace cw;
using namespace cw_test;

namespace {
// Class 0: a horizontal bar; class 1: a vertical bar; at random positions, with pixel noise.
void make_bars(Rng& rng, int n, std::vector<float>& images, std::vector<int32_t>& labels) {
    images.assign(static_cast<size_t>(n) * 144, 0.f);
    labels.resize(n);
    for (int i = 0; i < n; ++i) {
        const int cls = static_cast<int>(rng.below(2));
        const int pos = 2 + static_cast<int>(rng.below(8));
        float* img = images.data() + static_cast<size_t>(i) * 144;
        for (auto* p = img; p < img + 144; ++p) *p = rng.uniform(0.f, 0.3f);
        for (int t = 1; t < 11; ++t) img[cls == 0 ? pos * 12 + t : t * 12 + pos] = 1.f;
        labels[i] = cls;
    }
}
}  // namespace

TEST_CASE("a small CNN learns a separable problem to over 95%", "[e2e]") {
    Rng rng(3);
    auto kaiming = [&](Shape s, int64_t fan_in) { return randn(s, rng.next_u64(), std::sqrt(2.f / fan_in)).mark_parameter(); };
    Tensor c1 = kaiming({8, 1, 3, 3}, 9), b1 = Tensor::zeros({8}).mark_parameter();
    Tensor c2 = kaiming({16, 8, 3, 3}, 72), b2 = Tensor::zeros({16}).mark_parameter();
    Tensor fc = kaiming({2, 16}, 16), fb = Tensor::zeros({2}).mark_parameter();
    std::vector<Tensor*> params = {&c1, &b1, &c2, &b2, &fc, &fb};
    auto forward = [&](const Tensor& x) {
        Tensor h = max_pool2d(relu(conv2d(x, c1, b1, 1, 1)), 2);
        h = relu(conv2d(h, c2, b2, 1, 1));
        return linear(global_avg_pool2d(h), fc, fb);
    };
    std::vector<float> xs;
    std::vector<int32_t> ys;
    for (int step = 0; step < 150; ++step) {
        make_bars(rng, 32, xs, ys);
        Tensor loss = cross_entropy(forward(Tensor::from_vector(xs, {32, 1, 12, 12})), Tensor::from_labels(ys));
        loss.backward();
        for (Tensor* p : params) {
            backend(p->device()).axpy(-0.1f, p->grad().f32(), p->f32(), p->numel());
            p->zero_grad();
        }
    }
    make_bars(rng, 500, xs, ys);
    NoGradGuard eval;
    auto pred = argmax(forward(Tensor::from_vector(xs, {500, 1, 12, 12})), 1).to_int_vector();
    int correct = 0;
    for (int i = 0; i < 500; ++i) correct += pred[i] == ys[i];
    INFO("test accuracy " << correct / 5.0 << "%");
    REQUIRE(correct > 475);
}
