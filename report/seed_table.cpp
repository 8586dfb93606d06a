#include "report/seed_table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>

#include "util/atomic_file.h"
#include "util/format.h"
#include "report/run_data.h"
#include "report/table_values.h"

namespace cw::report {

using nlohmann::json;

MeanStd mean_std(const std::vector<double>& v) {
    MeanStd m;
    if (v.empty()) return m;
    for (double x : v) m.mean += x;
    m.mean /= static_cast<double>(v.size());
    if (v.size() == 1) {
        m.std = std::nan("");
    } else {
        double ss = 0;
        for (double x : v) ss += (x - m.mean) * (x - m.mean);
        m.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
    }
    return m;
}

namespace {

json load(const std::string& where) {
    std::filesystem::path p(where);
    if (std::filesystem::is_directory(p) && !std::filesystem::exists(p / "results.json") &&
        std::filesystem::exists(p / "eval_last" / "results.json"))
        // A training run's folder: its evaluations are one per checkpoint, and which one is the user's choice.
        throw std::runtime_error(where + ": a training run's folder; give one of its evaluations, e.g. " +
                                 (p / "eval_last").string());
    if (std::filesystem::is_directory(p)) p /= "results.json";
    return load_results_json(p.string());  // checked against the contract before any number is read
}

// The per-class accuracies of evaluation `name` in run r.
std::vector<double> per_class(const SeedRuns& runs, size_t r, const std::string& name) {
    if (const nlohmann::json* e = find_evaluation(runs.results[r], name)) return per_class_values(*e, "per_class_accuracy");
    throw std::runtime_error(runs.names[r] + ": no evaluation '" + name + "'");
}

double overall(const SeedRuns& runs, size_t r, const std::string& name) {
    if (const nlohmann::json* e = find_evaluation(runs.results[r], name))
        return e->at("accuracy").is_number() ? e->at("accuracy").get<double>() : std::nan("");  // null: no samples
    throw std::runtime_error(runs.names[r] + ": no evaluation '" + name + "'");
}

// The per-class accuracies of the classes that had samples: a class without any (null in results.json, e.g. under
// --n) has no accuracy, so it is neither a run's worst class nor part of its spread (and NaN would break the sort).
std::vector<double> classes_with_samples(const SeedRuns& runs, size_t r, const std::string& name) {
    std::vector<double> acc;
    for (double a : per_class(runs, r, name))
        if (!std::isnan(a)) acc.push_back(a);
    if (acc.empty()) throw std::runtime_error(runs.names[r] + ": evaluation '" + name + "' has no class with samples");
    return acc;
}

// Per run, in %: the weakest class's accuracy, and the mean of the `k` weakest (sum of the k, / k, · 100).
std::vector<double> worst_percent(const SeedRuns& runs, const std::string& name) {
    std::vector<double> out;
    for (size_t r = 0; r < runs.results.size(); ++r) {
        const auto acc = classes_with_samples(runs, r, name);
        out.push_back(*std::min_element(acc.begin(), acc.end()) * 100);
    }
    return out;
}
std::vector<double> bottom_percent(const SeedRuns& runs, const std::string& name, size_t k) {
    std::vector<double> out;
    for (size_t r = 0; r < runs.results.size(); ++r) {
        auto acc = classes_with_samples(runs, r, name);
        std::sort(acc.begin(), acc.end());
        double sum = 0;
        for (size_t i = 0; i < std::min(k, acc.size()); ++i) sum += acc[i];
        out.push_back(sum / static_cast<double>(std::min(k, acc.size())) * 100);
    }
    return out;
}

struct Columns {
    std::vector<double> overall, worst, spread;
};
Columns columns(const SeedRuns& runs, const std::string& name) {
    Columns c;
    for (size_t r = 0; r < runs.results.size(); ++r) {
        const auto acc = classes_with_samples(runs, r, name);
        const auto [lo, hi] = std::minmax_element(acc.begin(), acc.end());
        c.overall.push_back(overall(runs, r, name));
        c.worst.push_back(*lo);
        c.spread.push_back(*hi - *lo);
    }
    return c;
}

std::string points_pm(const MeanStd& m) { return util::fixed(m.mean, 1) + " ± " + util::fixed(m.std, 1); }

}  // namespace

SeedRuns load_seed_runs(const std::vector<std::string>& where) {
    if (where.empty()) throw std::invalid_argument("runs: give at least one results.json or folder");
    SeedRuns runs;
    for (const auto& w : where) {
        runs.names.push_back(w);
        runs.results.push_back(load(w));
    }
    runs.classes = runs.results.front()["classes"].get<std::vector<std::string>>();
    for (size_t i = 1; i < runs.results.size(); ++i)
        if (runs.results[i]["classes"].get<std::vector<std::string>>() != runs.classes)
            throw std::runtime_error(where[i] + ": its classes differ from " + where[0] + "'s");
    return runs;
}

std::string seed_table(const SeedRuns& runs, json& summary) {
    const auto& classes = runs.classes;
    std::string md = "| evaluation | overall | worst class | spread |";
    for (const auto& c : classes) md += " " + c + " |";
    md += "\n|---|---|---|---|";
    for (size_t k = 0; k < classes.size(); ++k) md += "---|";
    md += "\n";
    summary = json::object();
    for (const auto& ev : runs.results.front()["evaluations"]) {
        const std::string name = ev["name"];
        const Columns c = columns(runs, name);
        std::vector<std::vector<double>> by_class(classes.size());
        for (size_t r = 0; r < runs.results.size(); ++r) {
            const auto acc = per_class(runs, r, name);
            for (size_t k = 0; k < acc.size() && k < classes.size(); ++k) by_class[k].push_back(acc[k]);
        }
        const MeanStd o = mean_std(c.overall), w = mean_std(c.worst), s = mean_std(c.spread);
        md += "| " + name + " | " + util::percent_pm(o.mean, o.std) + " | " + util::percent_pm(w.mean, w.std) + " | " +
              util::percent_pm(s.mean, s.std) + " |";
        json& j = summary[name];
        j["overall"] = {number_or_null(o.mean), number_or_null(o.std)};
        j["worst_class"] = {number_or_null(w.mean), number_or_null(w.std)};
        j["spread"] = {number_or_null(s.mean), number_or_null(s.std)};
        for (size_t k = 0; k < classes.size(); ++k) {
            const MeanStd m = mean_std(by_class[k]);
            md += " " + util::percent_pm(m.mean, m.std) + " |";
            j["per_class"][classes[k]] = {number_or_null(m.mean), number_or_null(m.std)};
        }
        md += "\n";
    }
    const size_t n = runs.results.size();
    md += "\n" + std::to_string(n) + (n == 1 ? " run" : " runs") +
          "; accuracies in %, mean ± sample std over the runs (– with one run: no spread to estimate); worst class and "
          "spread (best − worst class) are taken per run, then averaged.\n";
    return md;
}

std::string lift(const std::vector<double>& method, const std::vector<double>& reference) {
    if (method.empty() || reference.empty()) throw std::invalid_argument("lift: no runs to compare");
    const double d = mean_std(method).mean - mean_std(reference).mean;
    if (d != 0 && (method.size() < 2 || reference.size() < 2)) return fmt::format("{:+.1f}", d) + " (one seed)";
    const bool real = *std::min_element(method.begin(), method.end()) >
                      *std::max_element(reference.begin(), reference.end());
    return fmt::format("{:+.1f}", d) + (real ? " (real)" : d == 0 ? "" : " (within the seeds)");
}

std::string summary_row(const SeedRuns& runs, const SeedRuns* reference, const std::string& attack) {
    const Columns clean = columns(runs, "clean"), adv = columns(runs, attack);
    const MeanStd co = mean_std(clean.overall), cw = mean_std(clean.worst), ao = mean_std(adv.overall),
                  aw = mean_std(adv.worst), as = mean_std(adv.spread);
    std::string row = util::percent_pm(co.mean, co.std) + " | " + util::percent_pm(cw.mean, cw.std) + " | " +
                      util::percent_pm(ao.mean, ao.std) + " | " + util::percent_pm(aw.mean, aw.std) + " | " +
                      points_pm(mean_std(bottom_percent(runs, attack, 3))) + " | " +
                      util::percent_pm(as.mean, as.std) + " | ";
    if (!reference) return row + "— | — | —";
    return row + lift(worst_percent(runs, attack), worst_percent(*reference, attack)) + " | " +
           lift(bottom_percent(runs, attack, 3), bottom_percent(*reference, attack, 3)) + " | " +
           lift(worst_percent(runs, "clean"), worst_percent(*reference, "clean"));
}

}  // namespace cw::report
