#pragma once
// Shuffled mini-batches over a list of dataset indices, with the next batches prepared on a background thread
// while the caller trains on the current one.
//
// Reproducibility: the loader forks its own Rng from the one passed in. Each epoch's shuffle is drawn from it on
// the caller's thread, and each epoch's augmentation uses a further fork consumed in batch order, so the batches
// depend only on the seed — not on thread timing, on background vs. synchronous mode, or on abandoned epochs.
//
//     Loader loader(data, split.train, opts, rng);
//     Batch b;
//     for (int e = 0; e < epochs; ++e)
//         while (loader.next(b)) train_step(b.images, b.labels);   // next() returns false once per epoch end
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "datasets/augment.h"
#include "datasets/batch.h"
#include "datasets/dataset.h"
#include "engine/device.h"
#include "engine/rng.h"

namespace cw::data {

struct LoaderOptions {
    int64_t batch_size = 128;
    bool shuffle = true;
    bool drop_last = false;
    Augmentation augmentation;  // none unless set (training code sets default_augmentation(dataset))
    cw::Device device = cw::Device::cpu();
    bool background = true;     // prepare batches on a worker thread
    int prefetch = 2;           // batches prepared ahead of the consumer
};

class Loader {
public:
    Loader(std::shared_ptr<const Dataset> data, std::vector<int64_t> indices, LoaderOptions options, cw::Rng& rng);
    Loader(std::shared_ptr<const Dataset> data, LoaderOptions options, cw::Rng& rng);  // every image
    ~Loader();
    Loader(const Loader&) = delete;
    Loader& operator=(const Loader&) = delete;

    // Begins a new epoch (a fresh shuffle), abandoning what is left of the current one. next() calls it itself
    // when no epoch is running.
    void start_epoch();
    // The next batch of the current epoch; false (and the epoch ends) when it is exhausted. Rethrows an error
    // raised while preparing the batch.
    bool next(Batch& out);
    bool next_host(HostBatch& out);  // the same without making tensors

    int64_t batches_per_epoch() const;
    int64_t epochs_started() const;
    int64_t size() const { return static_cast<int64_t>(indices_.size()); }
    const std::vector<int64_t>& indices() const { return indices_; }
    const Dataset& dataset() const { return *data_; }
    const LoaderOptions& options() const { return opts_; }

    // For checkpoints: restoring the state between epochs reproduces the following epochs.
    std::vector<uint64_t> rng_state() const;
    void set_rng_state(const std::vector<uint64_t>& state);

private:
    struct Epoch {
        std::vector<int64_t> order;
        int64_t batches = 0;
        cw::Rng rng;  // augmentation draws of this epoch, used by whoever prepares its batches, in batch order
    };
    void start_epoch_locked();
    HostBatch prepare(Epoch& epoch, int64_t batch) const;
    void worker_loop();

    std::shared_ptr<const Dataset> data_;
    std::vector<int64_t> indices_;
    LoaderOptions opts_;
    cw::Rng rng_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::shared_ptr<Epoch> epoch_;  // null between epochs
    int64_t produced_ = 0, consumed_ = 0;
    std::deque<HostBatch> ready_;
    std::exception_ptr error_;
    int64_t epochs_started_ = 0;
    bool stop_ = false;
    std::thread worker_;
};

}  // namespace cw::data
