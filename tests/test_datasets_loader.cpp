// The mini-batch loader: every index exactly once per epoch, reproducible shuffles, identical batches with and
// without the background thread, clean shutdown, and batch tensors of the right shape, type and range.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <numeric>

#include "datasets/batch.h"
#include "datasets/error.h"
#include "datasets/loader.h"
#include "engine/rng.h"

using namespace cw::data;

namespace {
std::shared_ptr<const Dataset> toy_dataset(int n, int classes = 10) {
    auto d = std::make_shared<Dataset>();
    d->name = "toy/train";
    d->channels = 3;
    d->height = d->width = 8;
    for (int c = 0; c < classes; ++c) d->class_names.push_back("c" + std::to_string(c));
    for (int i = 0; i < n; ++i) {
        d->labels.push_back(i % classes);
        // The first byte of every image encodes its index, so batches can be checked against indices.
        for (int p = 0; p < 192; ++p) d->pixels.push_back(static_cast<uint8_t>(p == 0 ? i % 256 : (i + p) % 256));
    }
    d->check();
    return d;
}

std::vector<std::vector<int64_t>> one_epoch(Loader& loader) {
    std::vector<std::vector<int64_t>> batches;
    HostBatch b;
    while (loader.next_host(b)) batches.push_back(b.indices);
    return batches;
}

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& batches) {
    std::vector<int64_t> all;
    for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
    return all;
}
}  // namespace

TEST_CASE("loader: every index exactly once per epoch, with and without the background thread", "[datasets]") {
    auto data = toy_dataset(103);
    for (bool background : {true, false}) {
        LoaderOptions opts;
        opts.batch_size = 10;
        opts.background = background;
        cw::Rng rng(11);
        Loader loader(data, opts, rng);
        CHECK(loader.batches_per_epoch() == 11);
        std::vector<int64_t> previous;
        for (int epoch = 0; epoch < 3; ++epoch) {
            const auto batches = one_epoch(loader);
            REQUIRE(batches.size() == 11);
            CHECK(batches.back().size() == 3);
            auto all = flatten(batches);
            CHECK(all != previous);  // reshuffled each epoch
            previous = all;
            std::sort(all.begin(), all.end());
            std::vector<int64_t> expected(103);
            std::iota(expected.begin(), expected.end(), 0);
            CHECK(all == expected);
        }
        CHECK(loader.epochs_started() == 3);
    }
}

TEST_CASE("loader: batches depend only on the seed, not on the thread mode", "[datasets]") {
    auto data = toy_dataset(64);
    LoaderOptions opts;
    opts.batch_size = 16;
    opts.augmentation.random_crop = true;
    opts.augmentation.horizontal_flip = true;
    auto run = [&](uint64_t seed, bool background, int prefetch) {
        LoaderOptions o = opts;
        o.background = background;
        o.prefetch = prefetch;
        cw::Rng rng(seed);
        Loader loader(data, o, rng);
        std::vector<std::vector<float>> images;
        std::vector<int64_t> order;
        for (int epoch = 0; epoch < 2; ++epoch) {
            HostBatch b;
            while (loader.next_host(b)) {
                images.push_back(b.images);
                order.insert(order.end(), b.indices.begin(), b.indices.end());
            }
        }
        return std::make_pair(order, images);
    };
    const auto a = run(5, true, 2);
    CHECK(run(5, false, 1) == a);
    CHECK(run(5, true, 1) == a);
    CHECK(run(5, true, 4) == a);
    CHECK(run(6, true, 2).first != a.first);
}

TEST_CASE("loader: an abandoned epoch does not change later epochs", "[datasets]") {
    auto data = toy_dataset(50);
    LoaderOptions opts;
    opts.batch_size = 7;
    opts.augmentation.horizontal_flip = true;
    cw::Rng r1(9), r2(9);
    Loader full(data, opts, r1), partial(data, opts, r2);
    one_epoch(full);
    HostBatch b;
    REQUIRE(partial.next_host(b));  // take one batch, then start over
    partial.start_epoch();
    const auto e2_full = one_epoch(full);
    const auto e2_partial = one_epoch(partial);
    CHECK(e2_full == e2_partial);
}

TEST_CASE("loader: clean shutdown mid-epoch and with an idle worker", "[datasets]") {
    auto data = toy_dataset(40);
    LoaderOptions opts;
    opts.batch_size = 4;
    opts.prefetch = 3;
    for (int i = 0; i < 20; ++i) {
        cw::Rng rng(i);
        Loader loader(data, opts, rng);
        HostBatch b;
        if (i % 2) loader.next_host(b);  // destroyed while the worker is filling its queue
    }
    cw::Rng rng(1);
    { Loader idle(data, opts, rng); }  // destroyed before any epoch
    SUCCEED();
}

TEST_CASE("loader: subsets, drop_last, no shuffle", "[datasets]") {
    auto data = toy_dataset(30);
    LoaderOptions opts;
    opts.batch_size = 4;
    opts.shuffle = false;
    opts.drop_last = true;
    cw::Rng rng(1);
    Loader loader(data, {29, 3, 5, 7, 11, 13, 17, 19, 23}, opts, rng);
    CHECK(loader.batches_per_epoch() == 2);
    const auto batches = one_epoch(loader);
    CHECK(batches == std::vector<std::vector<int64_t>>{{29, 3, 5, 7}, {11, 13, 17, 19}});
    CHECK_THROWS_AS(Loader(data, {30}, opts, rng), DataError);
    LoaderOptions zero = opts;
    zero.batch_size = 0;
    CHECK_THROWS_AS(Loader(data, zero, rng), DataError);
    Loader empty(data, std::vector<int64_t>{}, opts, rng);
    HostBatch b;
    CHECK_FALSE(empty.next_host(b));
}

TEST_CASE("loader: rng state restores the following epochs", "[datasets]") {
    auto data = toy_dataset(40);
    LoaderOptions opts;
    opts.batch_size = 8;
    cw::Rng rng(3);
    Loader a(data, opts, rng);
    one_epoch(a);
    const auto saved = a.rng_state();
    const auto next_a = one_epoch(a);
    cw::Rng other(99);
    Loader b(data, opts, other);
    b.set_rng_state(saved);
    CHECK(one_epoch(b) == next_a);
}

TEST_CASE("batch: float32 [B,C,H,W] in [0,1], int32 labels, dataset indices", "[datasets]") {
    auto data = toy_dataset(20);
    LoaderOptions opts;
    opts.batch_size = 6;
    cw::Rng rng(2);
    Loader loader(data, opts, rng);
    Batch b;
    int64_t seen = 0;
    while (loader.next(b)) {
        REQUIRE(b.images.shape() == cw::Shape{b.size(), 3, 8, 8});
        REQUIRE(b.labels.shape() == cw::Shape{b.size()});
        CHECK(b.images.dtype() == cw::DType::F32);
        CHECK(b.labels.dtype() == cw::DType::I32);
        const float* px = b.images.data();
        const int32_t* y = b.labels.i32();
        for (int64_t k = 0; k < b.size(); ++k) {
            const int64_t i = b.indices[k];
            CHECK(y[k] == data->labels[i]);
            CHECK(px[k * 192] == Approx((i % 256) / 255.0f));  // first byte encodes the index
            CHECK(px[k * 192 + 191] == Approx(data->image(i)[191] / 255.0f));
        }
        const auto values = b.images.to_vector();
        CHECK(*std::min_element(values.begin(), values.end()) >= 0.0f);
        CHECK(*std::max_element(values.begin(), values.end()) <= 1.0f);
        seen += b.size();
    }
    CHECK(seen == 20);
    const Batch m = make_batch(*data, {19, 0});
    CHECK(m.indices == std::vector<int64_t>{19, 0});
    CHECK(m.labels.to_int_vector() == std::vector<int32_t>{9, 0});
    CHECK(m.images.data()[192] == 0.0f);
    CHECK(make_batch(*data, {255 % 20}).images.data()[0] == Approx(15 / 255.0f));
    CHECK_THROWS_AS(make_batch(*data, {20}), DataError);
    Augmentation crop;
    crop.random_crop = true;
    CHECK_THROWS_AS(gather_batch(*data, {0}, crop, nullptr), DataError);
}
