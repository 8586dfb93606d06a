#include "report/run_figures.h"

#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "report/corruption_view.h"
#include "report/figure_bars.h"
#include "report/figure_heatmap.h"
#include "report/figure_lines.h"

namespace cw::report {

std::string eps_text(double eps) {
    std::ostringstream os;
    const double in255 = eps * 255.0;
    if (std::fabs(in255 - std::round(in255)) < 1e-3) os << std::llround(in255) << "/255";
    else os << std::setprecision(4) << eps;
    return os.str();
}

std::string attack_description(const nlohmann::json& e) {
    if (!e.contains("attack") || !e.at("attack").is_object()) return e.at("name").get<std::string>();
    const auto& a = e.at("attack");
    std::ostringstream os;
    os << e.at("name").get<std::string>();
    if (a.contains("norm")) os << ", " << a.at("norm").get<std::string>();
    if (a.contains("eps") && a.at("eps").is_number()) os << ", eps " << eps_text(a.at("eps").get<double>());
    if (a.contains("steps") && a.at("steps").is_number() && a.at("steps").get<int64_t>() > 1)
        os << ", " << a.at("steps").get<int64_t>() << " steps";
    if (a.contains("restarts") && a.at("restarts").is_number() && a.at("restarts").get<int64_t>() > 1)
        os << ", " << a.at("restarts").get<int64_t>() << " restarts";
    return os.str();
}

namespace {
std::vector<double> scaled(std::vector<double> v, double by) {
    for (double& x : v) x *= by;
    return v;
}
std::vector<double> minus_mean(std::vector<double> v) {
    const double m = mean_defined(v);
    for (double& x : v) x -= m;
    return v;
}
std::vector<std::vector<double>> matrix_of(const nlohmann::json& m) {
    std::vector<std::vector<double>> out;
    for (const auto& row : m) {
        std::vector<double> r;
        for (const auto& x : row) r.push_back(x.is_number() ? x.get<double>() : std::nan(""));
        out.push_back(std::move(r));
    }
    return out;
}
// File names keep letters, digits, - and _ (an attack named "corruption:fog:3" becomes corruption_fog_3).
std::string file_stem(const std::string& s) {
    std::string out;
    for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
    return out;
}
// Row-normalised: the % of each true class (a row) predicted as each class (a column).
Figure confusion_heatmap(const std::string& name, const std::string& what, const std::string& unit,
                         const std::vector<std::string>& labels, const nlohmann::json& counts) {
    return heatmap_figure({name, what + ": % of each true " + unit + " (rows) predicted as each " + unit + " (columns).",
                           "predicted " + unit, "true " + unit, "% of the true " + unit, labels, labels,
                           row_percentages(matrix_of(counts)), 0, 100, false, "%.0f"});
}
}  // namespace

std::vector<Figure> evaluation_figures(const nlohmann::json& results, const std::string& prefix) {
    if (is_corruption_results(results)) return corruption_figures(results, prefix);
    const auto classes = results.at("classes").get<std::vector<std::string>>();
    const std::string where = results.value("checkpoint_label", std::string());
    std::vector<Figure> figs;

    BarChart acc{prefix + "class_accuracy", "", "accuracy (%)", classes, {}, false, 105, -1, true};
    BarChart centred{prefix + "class_accuracy_centred", "", "accuracy − class mean (points)", classes, {}, true, 0, -1, false};
    BarChart cfp{prefix + "class_cfp", "", "CFP (% of the misclassified)", classes, {}, false, 0, -1, false};
    std::string attacks;
    for (const auto& e : results.at("evaluations")) {
        const std::string name = e.at("name");
        const std::vector<double> a = scaled(per_class_values(e, "per_class_accuracy"), 100);
        acc.series.push_back({name, a});
        centred.series.push_back({name, minus_mean(a)});
        cfp.series.push_back({name, scaled(per_class_values(e, "cfp"), 100)});
        if (name != "clean") attacks += (attacks.empty() ? "" : "; ") + attack_description(e);
    }
    const std::string under = attacks.empty() ? "" : " and under attack (" + attacks + ")";
    // The worst-class marker follows the last attack (the strongest one, by the evaluators' ordering), else clean.
    acc.marked_series = centred.marked_series = static_cast<int>(acc.series.size()) - 1;
    acc.caption = "Per-class accuracy, clean" + under + "; dashed lines: each series' class mean; ▼ marks the worst "
                  "class of " + acc.series.back().label + ".";
    centred.caption = "Per-class accuracy minus its class mean (Benz et al., Figs. 1-2): which classes fall below "
                      "the average, clean" + under + ".";
    cfp.caption = "Class false-positive score CFP_k (FAIR-TAT eq. 8): the share of all misclassified samples that "
                  "were predicted as class k, clean" + under + ".";
    figs.push_back(bar_figure(acc));
    figs.push_back(bar_figure(centred));
    figs.push_back(bar_figure(cfp));

    for (const auto& e : results.at("evaluations")) {
        const std::string name = e.at("name");
        figs.push_back(confusion_heatmap(prefix + "confusion_" + file_stem(name),
                                         "Confusion matrix, " + attack_description(e), "class", classes,
                                         e.at("confusion")));
        if (e.contains("cross_class_similarity") && e.at("cross_class_similarity").contains("matrix")) {
            Heatmap cos{prefix + "cosine_" + file_stem(name),
                        "Cross-class cosine similarity of the classes' mean logit vectors (Benz et al. 3.2), " +
                            attack_description(e) + ".",
                        "class", "class", "cosine similarity", classes, classes,
                        matrix_of(e.at("cross_class_similarity").at("matrix")), -1, 1, true, "%.2f"};
            figs.push_back(heatmap_figure(cos));
        }
        if (e.contains("superclass_confusion") && results.contains("coarse_classes")) {
            figs.push_back(confusion_heatmap(prefix + "superclass_confusion_" + file_stem(name),
                                             "Superclass confusion, " + attack_description(e), "superclass",
                                             results.at("coarse_classes").get<std::vector<std::string>>(),
                                             e.at("superclass_confusion")));
        }
    }
    return figs;
}

std::vector<Figure> history_figures(const util::CsvTable& history, const std::vector<std::string>& classes) {
    const std::string source = "history.csv";
    std::vector<std::string> order;   // evaluation names in first-seen order
    std::map<std::string, std::vector<const std::vector<std::string>*>> rows;
    for (const auto& r : history.rows) {
        if (!rows.count(r[1])) order.push_back(r[1]);
        rows[r[1]].push_back(&r);
    }
    std::vector<Figure> figs;
    const size_t C = classes.size();
    for (const std::string& eval : order) {
        const bool accuracy = eval != "train_loss" && eval.rfind("state_", 0) != 0;
        const double unit = accuracy ? 100 : 1;
        LineChart chart;
        chart.name = "history_" + file_stem(eval);
        chart.xlabel = "epoch";
        chart.ylabel = accuracy ? "accuracy (%)" : eval == "train_loss" ? "mean loss" : eval.substr(6);
        std::vector<std::vector<double>> per_class;   // [row][class]
        std::vector<double> overall;
        for (const auto* r : rows[eval]) {
            chart.x.push_back(util::csv_number((*r)[0], source));
            overall.push_back(util::csv_number((*r)[2], source) * unit);
            std::vector<double> v;
            for (size_t k = 0; k < C; ++k) v.push_back(util::csv_number((*r)[3 + k], source) * unit);
            per_class.push_back(std::move(v));
        }
        if (C <= 12) {
            for (size_t k = 0; k < C; ++k) {
                Series s{classes[k], {}};
                for (const auto& v : per_class) s.values.push_back(v[k]);
                chart.lines.push_back(std::move(s));
            }
        } else {
            // Many classes: the spread instead of one line per class.
            Series lo{"worst class", {}}, hi{"best class", {}}, mean{"class mean", {}};
            for (const auto& v : per_class) {
                double mn = NAN, mx = NAN;
                for (double x : v)
                    if (!std::isnan(x)) mn = std::isnan(mn) ? x : std::min(mn, x), mx = std::isnan(mx) ? x : std::max(mx, x);
                lo.values.push_back(mn);
                hi.values.push_back(mx);
                mean.values.push_back(mean_defined(v));
            }
            chart.lines = {lo, mean, hi};
        }
        bool has_overall = false;
        for (double x : overall) has_overall |= !std::isnan(x);
        if (has_overall) {
            chart.lines.push_back({"overall", overall});
            chart.emphasised = static_cast<int>(chart.lines.size()) - 1;
        }
        chart.caption = "Per-class " + (accuracy ? "accuracy" : chart.ylabel) + " over epochs, '" + eval + "'" +
                        (has_overall ? " (thick black: overall)" : "") + ".";
        figs.push_back(line_figure(chart));
    }
    return figs;
}

std::vector<Figure> step_figures(const util::CsvTable& steps, const std::vector<std::string>& classes) {
    const std::string source = "steps.csv";
    const int c_step = steps.column("step"), c_class = steps.column("class"), c_loss = steps.column("loss"),
              c_cos = steps.column("cosine");
    if (c_step < 0 || c_class < 0 || c_loss < 0 || c_cos < 0)
        throw std::runtime_error(source + ": expected the columns step, class, loss and cosine");
    std::vector<double> step_ids;
    std::map<double, double> total;                         // step → batch loss
    std::map<double, std::vector<double>> loss, cosine;     // step → per class
    const size_t C = classes.size();
    for (const auto& r : steps.rows) {
        const double step = util::csv_number(r[c_step], source);
        if (!loss.count(step)) {
            step_ids.push_back(step);
            loss[step].assign(C, 0.0);
            cosine[step].assign(C, NAN);
        }
        if (r[c_class] == "all") {
            total[step] = util::csv_number(r[c_loss], source);
            continue;
        }
        const double k = util::csv_number(r[c_class], source);
        if (k < 0 || k >= C) throw std::runtime_error(source + ": class " + r[c_class] + " is not one of the classes");
        loss[step][static_cast<size_t>(k)] = util::csv_number(r[c_loss], source);
        cosine[step][static_cast<size_t>(k)] = util::csv_number(r[c_cos], source);
    }
    LineChart shares{"steps_loss_share", "", "audited step (optimiser steps before it)", "share of the batch loss (%)",
                     step_ids, {}, -1, true, {}, {}};
    LineChart cos{"steps_cosine", "", "audited step", "cos(g_k, g)", step_ids, {}, -1, false, {}, {}};
    for (size_t k = 0; k < C; ++k) {
        Series s{classes[k], {}}, c{classes[k], {}};
        for (double st : step_ids) {
            const double t = total.count(st) ? total[st] : NAN;
            s.values.push_back(t != 0 ? 100.0 * loss[st][k] / t : NAN);
            c.values.push_back(cosine[st][k]);
        }
        shares.lines.push_back(std::move(s));
        cos.lines.push_back(std::move(c));
    }
    shares.caption = "Each class's share of the batch loss at every audited step (steps.csv): which classes the "
                     "method's update is made of.";
    cos.caption = "Cosine between each class's gradient share g_k and the full step g (steps.csv): 1 = the class "
                  "pulls the model the way the step goes.";
    return {line_figure(shares), line_figure(cos)};
}

}  // namespace cw::report
