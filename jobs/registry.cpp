#include "jobs/registry.h"

#include <cmath>
#include <stdexcept>

namespace cw::train {

namespace {
void check(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("method options: " + what);
}
void validate(const MethodOptions& o) {
    check(std::isfinite(o.eps) && o.eps >= 0 && o.eps <= 1, "eps must be in [0, 1], got " + std::to_string(o.eps));
    check(o.steps >= 1, "attack steps must be >= 1, got " + std::to_string(o.steps));
    check(std::isfinite(o.alpha), "alpha must be finite");
    check(o.fgsm_alpha_factor > 0, "fgsm alpha factor must be > 0, got " + std::to_string(o.fgsm_alpha_factor));
    check(o.fgsm_guard_steps >= 1, "fgsm guard steps must be >= 1, got " + std::to_string(o.fgsm_guard_steps));
    check(o.fgsm_guard_drop >= 0 && o.fgsm_guard_drop <= 1,
          "fgsm guard drop must be in [0, 1], got " + std::to_string(o.fgsm_guard_drop));
}
}  // namespace

const std::vector<std::string>& method_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> all;
        for (const auto& f : method_families()) all.insert(all.end(), f.names.begin(), f.names.end());
        return all;
    }();
    return names;
}

MethodPtr make_method(const std::string& name, const MethodOptions& o) {
    validate(o);
    for (const auto& f : method_families())
        for (const auto& n : f.names)
            if (n == name) return f.make(name, o);
    std::string known;
    for (const auto& n : method_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown training method '" + name + "' (known: " + known + ")");
}

void add_method_flags(cli::FlagSet& app, MethodOptions& o) {
    for (const auto& f : method_families())
        if (f.add_flags) f.add_flags(app, o);
}

}  // namespace cw::train
