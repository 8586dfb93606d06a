#include "datasets/loader.h"

#include <algorithm>
#include <numeric>

#include "datasets/error.h"

namespace cw::data {

namespace {
std::vector<int64_t> all_indices(const Dataset& d) {
    std::vector<int64_t> idx(d.size());
    std::iota(idx.begin(), idx.end(), 0);
    return idx;
}
}  // namespace

Loader::Loader(std::shared_ptr<const Dataset> data, std::vector<int64_t> indices, LoaderOptions options, cw::Rng& rng)
    : data_(std::move(data)), indices_(std::move(indices)), opts_(options), rng_(rng.fork()) {
    if (!data_) throw DataError("Loader: no dataset");
    if (opts_.batch_size <= 0) throw DataError("Loader: batch size must be positive, got " + std::to_string(opts_.batch_size));
    if (opts_.prefetch < 1) opts_.prefetch = 1;
    for (int64_t i : indices_)
        if (i < 0 || i >= data_->size())
            throw DataError(data_->name + ": loader index " + std::to_string(i) + " out of range [0, " +
                            std::to_string(data_->size()) + ")");
    if (opts_.background) worker_ = std::thread([this] { worker_loop(); });
}

Loader::Loader(std::shared_ptr<const Dataset> data, LoaderOptions options, cw::Rng& rng)
    : Loader(data, data ? all_indices(*data) : std::vector<int64_t>{}, options, rng) {}

Loader::~Loader() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
}

int64_t Loader::batches_per_epoch() const {
    const int64_t n = size(), b = opts_.batch_size;
    return opts_.drop_last ? n / b : (n + b - 1) / b;
}

int64_t Loader::epochs_started() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return epochs_started_;
}

std::vector<uint64_t> Loader::rng_state() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return rng_.state();
}

void Loader::set_rng_state(const std::vector<uint64_t>& state) {
    std::lock_guard<std::mutex> lock(mutex_);
    rng_.set_state(state);
}

void Loader::start_epoch() {
    std::lock_guard<std::mutex> lock(mutex_);
    start_epoch_locked();
}

void Loader::start_epoch_locked() {
    auto epoch = std::make_shared<Epoch>();
    epoch->order = indices_;
    if (opts_.shuffle) rng_.shuffle(epoch->order);
    epoch->rng = rng_.fork();
    epoch->batches = batches_per_epoch();
    epoch_ = std::move(epoch);
    produced_ = consumed_ = 0;
    ready_.clear();
    error_ = nullptr;
    ++epochs_started_;
    changed_.notify_all();
}

HostBatch Loader::prepare(Epoch& epoch, int64_t batch) const {
    const int64_t begin = batch * opts_.batch_size;
    const int64_t end = std::min<int64_t>(begin + opts_.batch_size, static_cast<int64_t>(epoch.order.size()));
    const std::vector<int64_t> slice(epoch.order.begin() + begin, epoch.order.begin() + end);
    return gather_batch(*data_, slice, opts_.augmentation, &epoch.rng);
}

void Loader::worker_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] {
            return stop_ || (epoch_ && !error_ && produced_ < epoch_->batches &&
                             static_cast<int>(ready_.size()) < opts_.prefetch);
        });
        if (stop_) return;
        std::shared_ptr<Epoch> epoch = epoch_;
        const int64_t batch = produced_++;
        lock.unlock();
        HostBatch prepared;
        std::exception_ptr failure;
        try {
            prepared = prepare(*epoch, batch);
        } catch (...) {
            failure = std::current_exception();
        }
        lock.lock();
        if (epoch_ != epoch) continue;  // the epoch was abandoned while we worked on it
        if (failure) error_ = failure;
        else ready_.push_back(std::move(prepared));
        changed_.notify_all();
    }
}

bool Loader::next_host(HostBatch& out) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!epoch_) start_epoch_locked();
    if (consumed_ == epoch_->batches) {
        epoch_.reset();
        return false;
    }
    if (!opts_.background) {
        std::shared_ptr<Epoch> epoch = epoch_;
        const int64_t batch = consumed_++;
        lock.unlock();
        out = prepare(*epoch, batch);
        return true;
    }
    changed_.wait(lock, [&] { return !ready_.empty() || error_; });
    if (ready_.empty()) {
        std::exception_ptr failure = error_;
        epoch_.reset();  // the epoch cannot continue; the next call starts a fresh one
        error_ = nullptr;
        std::rethrow_exception(failure);
    }
    out = std::move(ready_.front());
    ready_.pop_front();
    ++consumed_;
    changed_.notify_all();
    return true;
}

bool Loader::next(Batch& out) {
    HostBatch host;
    if (!next_host(host)) return false;
    out = to_batch(host, opts_.device);
    return true;
}

}  // namespace cw::data
