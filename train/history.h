#pragma once
// history.csv (docs/results_json.md): one row per epoch and evaluation with the per-class values,
//   epoch,eval,overall,<class 0 name>,...,<class C-1 name>
// eval names: "<split>_clean" / "<split>_pgd<K>" (per-epoch evaluation, accuracy in [0,1]; "ema_" in front for the
// weight-averaged model), "train_adv" (accuracy on the examples the method trained on, e.g. adversarial, measured
// in the training forward pass), "train_loss" (mean per-sample loss term per class), "state_<name>" (the method's
// per-class state, e.g. state_eps; overall empty). epoch is 1-based.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace cw::train {

class HistoryCsv {
public:
    // resume_epoch >= 0 keeps the rows of epochs <= resume_epoch; otherwise the file starts afresh.
    HistoryCsv(const std::string& path, const std::vector<std::string>& class_names, int64_t resume_epoch = -1);
    // overall NaN is written as an empty field (no meaningful total).
    void row(int64_t epoch, const std::string& eval, double overall, const std::vector<double>& per_class);
    const std::string& path() const { return path_; }
private:
    std::string path_;
    std::ofstream out_;
};

// train_log.csv: one row per epoch with the run's scalars,
//   epoch,lr,loss,train_accuracy,train_clean_accuracy,images_per_second,seconds
// train_accuracy from the logits the method trained on; train_clean_accuracy from the clean forward after the step
// (empty when the method does none).
class TrainLogCsv {
public:
    TrainLogCsv(const std::string& path, int64_t resume_epoch = -1);
    void row(int64_t epoch, double lr, double loss, double train_accuracy, double train_clean_accuracy,
             double images_per_second, double seconds);
private:
    std::string path_;
    std::ofstream out_;
};

}  // namespace cw::train
