#include "report/table_values.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <sstream>

namespace cw::report {

double mean_defined(const std::vector<double>& values) {
    double sum = 0;
    int n = 0;
    for (double x : values)
        if (!std::isnan(x)) sum += x, ++n;
    return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

int argmin_defined(const std::vector<double>& values) {
    int w = -1;
    for (size_t k = 0; k < values.size(); ++k)
        if (!std::isnan(values[k]) && (w < 0 || values[k] < values[static_cast<size_t>(w)])) w = static_cast<int>(k);
    return w;
}

std::string class_label(const std::vector<std::string>& classes, int k) {
    return k >= 0 && k < static_cast<int>(classes.size()) ? classes[static_cast<size_t>(k)] : "–";
}

std::string fixed_or_dash(double v, int digits) {
    if (std::isnan(v)) return "–";
    std::ostringstream os;
    os << std::fixed << std::setprecision(digits) << v;
    return os.str();
}

nlohmann::json number_or_null(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

std::string points_change(double delta) {
    if (std::isnan(delta)) return "–";
    const double p = delta * 100;
    if (std::fabs(p) < 0.05) return "0.0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", std::fabs(p));
    return std::string(p > 0 ? "+" : "−") + buf;
}

}  // namespace cw::report
