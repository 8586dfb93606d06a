#include "train/history.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "train/csv_rows.h"
#include "util/csv.h"

namespace cw::train {

namespace {
std::string number(double v) {
    if (!std::isfinite(v)) return "";
    std::ostringstream s;
    s.precision(9);
    s << v;
    return s.str();
}

void open_append(std::ofstream& out, const std::string& path) {
    out.open(path, std::ios::app);
    if (!out) throw std::runtime_error(path + ": cannot open for writing");
}

void flush_checked(std::ofstream& out, const std::string& path) {
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed");
}
}  // namespace

HistoryCsv::HistoryCsv(const std::string& path, const std::vector<std::string>& class_names, int64_t resume_epoch)
    : path_(path) {
    std::string header = "epoch,eval,overall";
    for (const auto& c : class_names) header += "," + util::csv_field(c);
    keep_rows_up_to(path_, header, resume_epoch);
    open_append(out_, path_);
}

void HistoryCsv::row(int64_t epoch, const std::string& eval, double overall, const std::vector<double>& per_class) {
    std::string line = std::to_string(epoch) + "," + util::csv_field(eval) + "," + number(overall);
    for (double v : per_class) line += "," + number(v);
    out_ << line << "\n";
    flush_checked(out_, path_);
}

TrainLogCsv::TrainLogCsv(const std::string& path, int64_t resume_epoch) : path_(path) {
    keep_rows_up_to(path_, "epoch,lr,loss,train_accuracy,train_clean_accuracy,images_per_second,seconds", resume_epoch);
    open_append(out_, path_);
}

void TrainLogCsv::row(int64_t epoch, double lr, double loss, double train_accuracy, double train_clean_accuracy,
                      double images_per_second, double seconds) {
    out_ << epoch << "," << number(lr) << "," << number(loss) << "," << number(train_accuracy) << ","
         << number(train_clean_accuracy) << "," << number(images_per_second) << "," << number(seconds) << "\n";
    flush_checked(out_, path_);
}

}  // namespace cw::train
