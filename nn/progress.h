#pragma once
// One-line progress for long jobs: epoch, batch, running loss and accuracy, throughput and ETA.
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace cw::nn {

class Progress {
public:
    Progress(std::ostream& os, int64_t epochs, int64_t batches_per_epoch, int64_t print_every = 20);
    void start_epoch(int64_t epoch);  // 0-based
    // After each batch: its mean loss, correct predictions and size.
    void update(int64_t batch, double loss, int64_t correct, int64_t size);
    double epoch_loss() const { return seen_ ? loss_sum_ / seen_ : 0; }
    double epoch_accuracy() const { return seen_ ? static_cast<double>(correct_) / seen_ : 0; }
    double epoch_seconds() const;
private:
    std::ostream& os_;
    int64_t epochs_, batches_, every_, epoch_ = 0, seen_ = 0, correct_ = 0, done_batches_ = 0;
    double loss_sum_ = 0;
    std::chrono::steady_clock::time_point run_start_, epoch_start_;
    int64_t batches_at_run_start_ = -1;
};

}  // namespace cw::nn
