#include "util/format.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace cw::util {

std::string fixed_or_dash(double v, int digits) {
    if (std::isnan(v)) return "–";
    std::ostringstream os;
    os << std::fixed << std::setprecision(digits) << v;
    return os.str();
}

std::string percent_or_dash(double fraction, int digits) { return fixed_or_dash(100.0 * fraction, digits); }

std::string percent_text(double fraction) {
    return std::isnan(fraction) ? "–" : percent_or_dash(fraction, 2) + "%";
}

std::string format_duration(double s) {
    char buf[32];
    if (s < 60) std::snprintf(buf, sizeof buf, "%.1f s", s);
    else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm %02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    else std::snprintf(buf, sizeof buf, "%dh %02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
    return buf;
}

}  // namespace cw::util
