#include "report/comparison.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "report/html.h"
#include "report/summary.h"
#include "util/format.h"

namespace cw::report {

namespace fs = std::filesystem;

namespace {
std::string common_attack(const std::vector<RunColumn>& cols) {
    for (const auto& e : cols[0].evaluation->results.at("evaluations")) {
        const std::string name = e.at("name");
        if (name == "clean") continue;
        bool everywhere = true;
        for (const RunColumn& c : cols) everywhere &= find_evaluation(c.evaluation->results, name) != nullptr;
        if (everywhere) return name;
    }
    return "";
}

// Column names: the fewest trailing path components that tell the runs apart (pgd_at/seed0, trades/seed0 rather
// than seed0 twice).
std::vector<std::string> distinct_labels(const std::vector<RunData>& runs) {
    std::vector<std::vector<std::string>> parts;
    size_t longest = 0;
    for (const RunData& r : runs) {
        std::vector<std::string> p;
        for (const auto& c : fs::absolute(r.dir).lexically_normal()) if (!c.empty() && c != "/") p.push_back(c.string());
        if (fs::is_regular_file(r.dir) && !p.empty()) p.pop_back();   // a results.json given directly
        longest = std::max(longest, p.size());
        parts.push_back(std::move(p));
    }
    for (size_t k = 1;; ++k) {
        std::vector<std::string> labels;
        for (const auto& p : parts) {
            std::string l;
            for (size_t i = p.size() > k ? p.size() - k : 0; i < p.size(); ++i) l += (l.empty() ? "" : "/") + p[i];
            labels.push_back(l);
        }
        std::vector<std::string> sorted = labels;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end() || k >= longest) return labels;
    }
}


// Mean of the three lowest per-class accuracies (finer than the worst class when that one sits at 0%).
double bottom3(const std::vector<double>& acc) {
    std::vector<double> v;
    for (double x : acc)
        if (!std::isnan(x)) v.push_back(x);
    std::sort(v.begin(), v.end());
    const size_t n = std::min<size_t>(3, v.size());
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += v[i];
    return n ? s / double(n) : std::nan("");
}
}  // namespace

Comparison compare_runs(const std::vector<RunData>& runs, const std::string& checkpoint, const std::string& attack) {
    return compare_runs(runs, std::vector<std::string>(runs.size(), checkpoint), attack);
}

Comparison compare_runs(const std::vector<RunData>& runs, const std::vector<std::string>& checkpoints,
                        const std::string& attack) {
    if (checkpoints.size() != runs.size()) throw std::invalid_argument("compare_runs: one checkpoint per run");
    if (runs.empty()) throw std::runtime_error("report: no runs to compare");
    std::vector<RunColumn> cols;
    for (size_t r = 0; r < runs.size(); ++r) {
        const RunData& run = runs[r];
        const std::string& checkpoint = checkpoints[r];
        const Evaluation* e = run.evaluation(checkpoint);
        if (!e)
            throw std::runtime_error(run.dir + ": no finished evaluation" +
                                     (checkpoint.empty() ? "" : " of checkpoint '" + checkpoint + "'") +
                                     " to compare (expected " +
                                     (checkpoint.empty() ? "results.json or eval_*/results.json"
                                                                 : "eval_" + checkpoint + "/results.json") + ")");
        if (!cols.empty() && e->results.at("classes") != cols.front().evaluation->results.at("classes"))
            throw std::runtime_error(e->file + ": its classes differ from the first run's; only runs on the same "
                                               "classes can be compared");
        cols.push_back({"", &run, e, {}, {}});
    }
    const std::vector<std::string> labels = distinct_labels(runs);
    for (size_t i = 0; i < cols.size(); ++i) cols[i].label = labels[i];
    const std::string chosen = attack.empty() ? common_attack(cols) : attack;
    for (RunColumn& c : cols) {
        c.clean = metrics_of(*find_evaluation(c.evaluation->results, "clean"));
        if (!chosen.empty()) {
            const nlohmann::json* e = find_evaluation(c.evaluation->results, chosen);
            if (!e) throw std::runtime_error(c.evaluation->file + ": no evaluation named '" + chosen + "' (--attack)");
            c.robust = metrics_of(*e);
        }
    }
    Comparison out;
    out.columns = std::move(cols);
    out.attack = chosen;
    out.classes = out.columns[0].evaluation->results.at("classes").get<std::vector<std::string>>();
    return out;
}

std::string markdown_table(const Comparison& c) {
    auto worst = [&](const fairness::ClassMetrics& m) {
        return m.worst_class < 0 ? std::string("–")
                                 : util::percent(m.per_class_accuracy[m.worst_class]) + " (" + c.classes[m.worst_class] + ")";
    };
    const bool robust = !c.attack.empty();
    std::ostringstream os;
    const bool worst10 = c.classes.size() >= 20;
    os << "| run | clean | clean worst | clean bottom 3 |" << (worst10 ? " clean worst 10% |" : "");
    if (robust)
        os << " " << c.attack << " | " << c.attack << " worst | " << c.attack << " bottom 3 | " << c.attack
           << " spread |" << (worst10 ? " " + c.attack + " worst 10% |" : "");
    const int columns = 4 + worst10 + (robust ? 4 + worst10 : 0);
    os << "\n|";
    for (int i = 0; i < columns; ++i) os << "---|";
    os << "\n";
    for (const RunColumn& col : c.columns) {
        os << "| " << col.label << " | " << util::percent(col.clean.accuracy) << " | " << worst(col.clean) << " | "
           << util::percent(bottom3(col.clean.per_class_accuracy)) << " |"
           << (worst10 ? " " + util::percent(col.clean.worst10_accuracy) + " |" : "");
        if (robust)
            os << " " << util::percent(col.robust.accuracy) << " | " << worst(col.robust) << " | "
               << util::percent(bottom3(col.robust.per_class_accuracy)) << " | " << util::percent(col.robust.spread) << " |"
               << (worst10 ? " " + util::percent(col.robust.worst10_accuracy) + " |" : "");
        os << "\n";
    }
    return os.str();
}

}  // namespace cw::report
