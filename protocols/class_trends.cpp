#include "protocols/class_trends.h"

#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "eval/agreement.h"
#include "report/figure_bars.h"
#include "report/table_values.h"

namespace cw::protocols {

namespace {
bool per_epoch_eval(const std::string& eval) {
    for (const char* p : {"test_", "val_", "ema_test_", "ema_val_"})
        if (eval.rfind(p, 0) == 0) return true;
    return false;
}
}  // namespace

std::vector<ClassSeries> history_series(const util::CsvTable& history, size_t num_classes, const std::string& source) {
    if (history.header.size() != 3 + num_classes || history.header[0] != "epoch" || history.header[1] != "eval" ||
        history.header[2] != "overall")
        throw std::runtime_error(source + ": expected the columns epoch,eval,overall and one per class (" +
                                 std::to_string(num_classes) + "), found " + std::to_string(history.header.size()) +
                                 " columns");
    std::vector<ClassSeries> out;
    std::map<std::string, size_t> index;
    for (const auto& r : history.rows) {
        if (!per_epoch_eval(r[1])) continue;
        if (!index.count(r[1])) {
            index[r[1]] = out.size();
            out.push_back({r[1], {}, {}, {}});
        }
        ClassSeries& s = out[index[r[1]]];
        const double e = util::csv_number(r[0], source);
        if (std::isnan(e) || e != std::floor(e)) throw std::runtime_error(source + ": epoch '" + r[0] + "' is not a whole number");
        std::vector<double> v;
        for (size_t k = 0; k < num_classes; ++k) v.push_back(util::csv_number(r[3 + k], source));
        const auto epoch = static_cast<int64_t>(e);
        // A resumed run may have written an epoch again; the later row is the one the run continued from.
        size_t at = 0;
        while (at < s.epochs.size() && s.epochs[at] != epoch) ++at;
        if (at == s.epochs.size()) {
            s.epochs.push_back(epoch);
            s.overall.push_back(util::csv_number(r[2], source));
            s.per_class.push_back(std::move(v));
        } else {
            s.overall[at] = util::csv_number(r[2], source);
            s.per_class[at] = std::move(v);
        }
    }
    return out;
}

TrendAnalysis analyse_trend(const ClassSeries& s) {
    TrendAnalysis t;
    t.eval = s.eval;
    t.epochs = s.epochs;
    const size_t n = s.epochs.size();
    std::set<int> seen;
    for (size_t i = 0; i < n; ++i) {
        const std::vector<double>& v = s.per_class[i];
        const int w = report::argmin_defined(v);
        t.worst.push_back(w);
        double lo = NAN, hi = NAN;
        for (double x : v)
            if (!std::isnan(x)) lo = std::isnan(lo) ? x : std::min(lo, x), hi = std::isnan(hi) ? x : std::max(hi, x);
        t.worst_accuracy.push_back(lo);
        int ties = 0;
        for (double x : v) ties += !std::isnan(x) && x == lo;
        t.tied.push_back(ties);
        t.spread.push_back(hi - lo);
        t.class_mean.push_back(report::mean_defined(v));
        if (w >= 0) seen.insert(w);
        if (i > 0 && w != t.worst[i - 1]) {
            ++t.changes;
            t.change_epochs.push_back(s.epochs[i]);
            t.changes_at_ties += ties > 1;
        }
        t.spearman_previous.push_back(i == 0 ? NAN : fairness::spearman(s.per_class[i - 1], v));
        t.spearman_last.push_back(fairness::spearman(v, s.per_class[n - 1]));
    }
    t.distinct_worst = static_cast<int>(seen.size());
    if (n > 0) {
        // The final run, not the first time the last worst class was the worst: a class that was worst early,
        // lost the place and took it back is stable only from its return.
        size_t first = n - 1;
        while (first > 0 && t.worst[first - 1] == t.worst[n - 1]) --first;
        t.stable_from = s.epochs[first];
    }
    return t;
}

nlohmann::json trend_json(const TrendAnalysis& t, const std::vector<std::string>& classes) {
    nlohmann::json epochs = nlohmann::json::array();
    for (size_t i = 0; i < t.epochs.size(); ++i)
        epochs.push_back({{"epoch", t.epochs[i]},
                          {"worst_class", t.worst[i]},
                          {"worst_class_name", report::class_label(classes, t.worst[i])},
                          {"classes_tied_worst", t.tied[i]},
                          {"worst_accuracy", report::number_or_null(t.worst_accuracy[i])},
                          {"class_mean", report::number_or_null(t.class_mean[i])},
                          {"spread", report::number_or_null(t.spread[i])},
                          {"spearman_previous", report::number_or_null(t.spearman_previous[i])},
                          {"spearman_last", report::number_or_null(t.spearman_last[i])}});
    const int last = t.worst.empty() ? -1 : t.worst.back();
    return {{"eval", t.eval},
            {"evaluated_epochs", t.epochs.size()},
            {"worst_changes", t.changes},
            {"change_epochs", t.change_epochs},
            {"changes_at_ties", t.changes_at_ties},
            {"distinct_worst_classes", t.distinct_worst},
            {"final_worst_class", last},
            {"final_worst_class_name", report::class_label(classes, last)},
            {"stable_from_epoch", t.stable_from},
            {"epochs", epochs}};
}

std::string trends_markdown(const std::string& arm, const std::vector<TrendAnalysis>& trends,
                            const std::vector<std::string>& classes) {
    std::ostringstream md;
    md << "## " << arm << "\n\n";
    if (trends.empty()) return md.str() + "No per-epoch evaluation in history.csv.\n\n";
    md << "| evaluation | epochs | worst class at the end | stable from epoch | changes of the worst class (at epochs) | "
          "classes ever worst | ρ(first, last) | spread first → last (points) |\n|---|---|---|---|---|---|---|---|\n";
    for (const TrendAnalysis& t : trends) {
        std::string at;
        for (int64_t e : t.change_epochs) at += (at.empty() ? "" : ", ") + std::to_string(e);
        md << "| " << t.eval << " | " << t.epochs.size() << " | " << report::class_label(classes, t.worst.back()) << " | "
           << t.stable_from << " | " << t.changes << (at.empty() ? "" : " (" + at + ")")
           << (t.changes_at_ties ? ", " + std::to_string(t.changes_at_ties) + " at a tie" : "") << " | " << t.distinct_worst
           << " | " << report::fixed_or_dash(t.spearman_last.front(), 2) << " | " << report::fixed_or_dash(100 * t.spread.front(), 1) << " → "
           << report::fixed_or_dash(100 * t.spread.back(), 1) << " |\n";
    }
    for (const TrendAnalysis& t : trends) {
        md << "\n### " << arm << ", " << t.eval << " per epoch\n\n| epoch | worst class | its accuracy (%) | class mean (%) | "
              "spread (points) | ρ with the previous | ρ with the last |\n|---|---|---|---|---|---|---|\n";
        for (size_t i = 0; i < t.epochs.size(); ++i)
            md << "| " << t.epochs[i] << " | " << report::class_label(classes, t.worst[i])
               << (t.tied[i] > 1 ? " (+" + std::to_string(t.tied[i] - 1) + " tied)" : "") << " | "
               << report::fixed_or_dash(100 * t.worst_accuracy[i], 1) << " | " << report::fixed_or_dash(100 * t.class_mean[i], 1) << " | "
               << report::fixed_or_dash(100 * t.spread[i], 1) << " | " << report::fixed_or_dash(t.spearman_previous[i], 2) << " | "
               << report::fixed_or_dash(t.spearman_last[i], 2) << " |\n";
    }
    return md.str() + "\n";
}

}  // namespace cw::protocols
