#include "util/format.h"

#include <fmt/format.h>

#include <cmath>

namespace cw::util {

std::string percent(double fraction, int digits) {
    if (std::isnan(fraction)) return "–";
    return fmt::format("{:.{}f}", 100.0 * fraction, digits);
}

std::string percent_of(int64_t count, int64_t total, int digits) {
    if (total == 0) return "–";
    // 100·count/total in this order: the digits of the tables printed before this function existed.
    return fmt::format("{:.{}f}", 100.0 * static_cast<double>(count) / static_cast<double>(total), digits);
}

std::string percent_pm(double mean, double std) { return percent(mean) + " ± " + percent(std); }

std::string in_255ths(double eps) { return fmt::format("{:.3g}", eps * 255); }

std::string radius_text(double eps) { return in_255ths(eps) + "/255"; }

std::string fixed(double value, int digits, bool sign) {
    if (std::isnan(value)) return "–";
    return sign ? fmt::format("{:+.{}f}", value, digits) : fmt::format("{:.{}f}", value, digits);
}

std::string duration_clock(double s) {
    if (s < 60) return fmt::format("{:.1f} s", s);
    const int whole = static_cast<int>(s);
    if (s < 3600) return fmt::format("{}m {:02}s", whole / 60, whole % 60);
    return fmt::format("{}h {:02}m", whole / 3600, (whole % 3600) / 60);
}

std::string duration_estimate(double s) {
    if (s < 120) return fmt::format("{:.1f} s", s);
    if (s < 7200) return fmt::format("{:.1f} min", s / 60);
    if (s < 3 * 86400) return fmt::format("{:.1f} h", s / 3600);
    return fmt::format("{:.1f} days", s / 86400);
}

std::string duration_seconds(double s) {
    std::string out = fmt::format("{:.{}f} s", s, s < 100 ? 1 : 0);
    if (s >= 120) out += fmt::format(" ({:.1f} min)", s / 60);
    return out;
}

std::string one_line(const std::string& message) {
    std::string line;
    line.reserve(message.size());
    for (size_t i = 0; i < message.size(); ++i) {
        if (message[i] == '\r' && i + 1 < message.size() && message[i + 1] == '\n') continue;  // \r\n: one break
        line += (message[i] == '\n' || message[i] == '\r') ? ' ' : message[i];
    }
    return line;
}

}  // namespace cw::util
