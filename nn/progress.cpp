#include "nn/progress.h"

#include <algorithm>
#include <cstdio>

#include "util/format.h"

namespace cw::nn {

using Clock = std::chrono::steady_clock;

Progress::Progress(std::ostream& os, int64_t epochs, int64_t batches_per_epoch, int64_t print_every)
    : os_(os), epochs_(epochs), batches_(batches_per_epoch), every_(print_every < 1 ? 1 : print_every),
      run_start_(Clock::now()), epoch_start_(run_start_) {}

void Progress::start_epoch(int64_t epoch) {
    epoch_ = epoch;
    seen_ = correct_ = 0;
    loss_sum_ = 0;
    epoch_start_ = Clock::now();
    // ETA counts only the batches of this run (a resumed run does not know how fast the earlier one was).
    if (batches_at_run_start_ < 0) {
        batches_at_run_start_ = epoch * batches_;
        run_start_ = epoch_start_;
    }
}

double Progress::epoch_seconds() const { return std::chrono::duration<double>(Clock::now() - epoch_start_).count(); }

void Progress::update(int64_t batch, double loss, int64_t correct, int64_t size) {
    loss_sum_ += loss * static_cast<double>(size);
    correct_ += correct;
    seen_ += size;
    done_batches_ = epoch_ * batches_ + batch + 1;
    if ((batch + 1) % every_ != 0 && batch + 1 != batches_) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - run_start_).count();
    const int64_t done_here = done_batches_ - batches_at_run_start_;
    const int64_t left = epochs_ * batches_ - done_batches_;
    const double eta = done_here > 0 ? elapsed / static_cast<double>(done_here) * static_cast<double>(left) : 0;
    char line[256];
    std::snprintf(line, sizeof line, "epoch %lld/%lld  batch %lld/%lld  loss %.4f  acc %.2f%%  %.1f img/s  ETA %s",
                  static_cast<long long>(epoch_ + 1), static_cast<long long>(epochs_), static_cast<long long>(batch + 1),
                  static_cast<long long>(batches_), epoch_loss(), 100.0 * epoch_accuracy(),
                  seen_ / std::max(1e-9, epoch_seconds()), util::duration_clock(eta).c_str());
    os_ << line << std::endl;
}

}  // namespace cw::nn
