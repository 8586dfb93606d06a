#include "report/summary.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "report/corruption_view.h"
#include "report/run_data.h"
#include "util/format.h"

namespace cw::report {

fairness::ClassMetrics metrics_of(const nlohmann::json& evaluation) {
    return fairness::class_metrics(evaluation.at("confusion").get<fairness::Confusion>());
}

namespace {
std::string class_name(const std::vector<std::string>& classes, int k) {
    return k >= 0 && k < static_cast<int>(classes.size()) ? classes[k] : "–";
}
// Every evaluation; for a corruption evaluation only clean and the pooled entries (the severities have their own
// table, report/corruption_view.h).
std::vector<const nlohmann::json*> table_entries(const nlohmann::json& results) {
    if (is_corruption_results(results)) return corruption_table_entries(results);
    std::vector<const nlohmann::json*> out;
    for (const auto& e : results.at("evaluations")) out.push_back(&e);
    return out;
}
}  // namespace

HtmlTable summary_table(const nlohmann::json& results) {
    const auto classes = results.at("classes").get<std::vector<std::string>>();
    HtmlTable t;
    t.caption = "Summary (accuracies in %, spread and SD in points)";
    t.header = {"evaluation", "accuracy", "worst class", "worst", "best class", "best", "spread", "SD",
                "mean of worst 10%"};
    for (const nlohmann::json* entry : table_entries(results)) {
        const nlohmann::json& e = *entry;
        const fairness::ClassMetrics m = metrics_of(e);
        t.rows.push_back({html_escape(e.at("name").get<std::string>()), util::percent(m.accuracy),
                          html_escape(class_name(classes, m.worst_class)),
                          util::percent(m.worst_class >= 0 ? m.per_class_accuracy[m.worst_class] : NAN),
                          html_escape(class_name(classes, m.best_class)),
                          util::percent(m.best_class >= 0 ? m.per_class_accuracy[m.best_class] : NAN),
                          util::percent(m.spread), util::percent(m.sd), util::percent(m.worst10_accuracy)});
        t.classes.push_back({"", "num", "worst", "num worst", "best", "num best", "num", "num", "num"});
    }
    return t;
}

HtmlTable class_table(const nlohmann::json& results) {
    const auto classes = results.at("classes").get<std::vector<std::string>>();
    const size_t C = classes.size();
    std::vector<fairness::ClassMetrics> m;
    std::vector<std::string> names;
    for (const nlohmann::json* e : table_entries(results)) {
        m.push_back(metrics_of(*e));
        names.push_back(e->at("name"));
    }
    // Twenty-odd corruptions: accuracies only (boundary errors and CFPs stay in results.json).
    const bool accuracy_only = is_corruption_results(results);
    HtmlTable t;
    t.caption = accuracy_only ? "Per class (%): accuracy clean and under each corruption, severities pooled (plain "
                                "accuracy on the corrupted images); red: the worst class of a column, green: the best"
                              : "Per class (%): accuracy, boundary error (clean − robust) and CFP; red: the worst "
                                "class of a column, green: the best";
    t.header = {"class", "N"};
    for (const auto& n : names) t.header.push_back(n + " acc");
    if (!accuracy_only) {
        for (size_t a = 1; a < names.size(); ++a) t.header.push_back(names[a] + " bdy");
        for (const auto& n : names) t.header.push_back(n + " CFP");
    }
    for (size_t k = 0; k < C; ++k) {
        std::vector<std::string> row = {html_escape(classes[k]), std::to_string(m[0].class_counts[k])};
        std::vector<std::string> cls = {"", "num"};
        for (const auto& x : m) {
            row.push_back(util::percent(x.per_class_accuracy[k]));
            cls.push_back(std::string("num") + (static_cast<int>(k) == x.worst_class ? " worst" : "") +
                          (static_cast<int>(k) == x.best_class ? " best" : ""));
        }
        for (size_t a = 1; !accuracy_only && a < m.size(); ++a) {
            row.push_back(util::percent(m[0].per_class_accuracy[k] - m[a].per_class_accuracy[k]));
            cls.push_back("num");
        }
        for (size_t a = 0; !accuracy_only && a < m.size(); ++a) {
            row.push_back(util::percent(m[a].cfp[k]));
            cls.push_back("num");
        }
        t.rows.push_back(std::move(row));
        t.classes.push_back(std::move(cls));
    }
    return t;
}

HtmlTable train_log_table(const util::CsvTable& log) {
    HtmlTable t;
    t.caption = "Training log (train_log.csv)";
    t.header = log.header;
    for (const auto& r : log.rows) {
        std::vector<std::string> row, cls;
        for (const auto& f : r) {
            double v = NAN;
            try {
                v = util::csv_number(f, "train_log.csv");
            } catch (const std::exception&) {
            }
            std::ostringstream os;
            if (std::isnan(v)) os << html_escape(f);
            else os << std::setprecision(4) << v;
            row.push_back(os.str());
            cls.push_back("num");
        }
        t.rows.push_back(std::move(row));
        t.classes.push_back(std::move(cls));
    }
    return t;
}

}  // namespace cw::report
