#include "protocols/class_columns.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "report/run_data.h"
#include "util/csv.h"
#include "util/format.h"

namespace cw::protocols {

ClassColumn class_column(const std::string& label, const nlohmann::json& results, const std::string& evaluation,
                         const std::string& file) {
    const nlohmann::json* e = report::find_evaluation(results, evaluation);
    if (!e) throw std::runtime_error(file + ": no evaluation '" + evaluation + "'");
    const nlohmann::json& acc = e->at("accuracy");
    return {label, acc.is_number() ? acc.get<double>() : std::nan(""), report::per_class_values(*e, "per_class_accuracy")};
}

namespace {
void check_lengths(const std::vector<std::string>& classes, const std::vector<ClassColumn>& columns) {
    for (const ClassColumn& c : columns)
        if (c.per_class.size() != classes.size())
            throw std::invalid_argument("class table: column '" + c.label + "' has " + std::to_string(c.per_class.size()) +
                                        " classes, expected " + std::to_string(classes.size()));
}
}  // namespace

std::string per_class_markdown(const std::vector<std::string>& classes, const std::vector<ClassColumn>& columns) {
    check_lengths(classes, columns);
    std::string s = "| class |";
    std::string rule = "|---|";
    for (const ClassColumn& c : columns) s += " " + c.label + " |", rule += "---|";
    s += "\n" + rule + "\n";
    for (size_t k = 0; k < classes.size(); ++k) {
        s += "| " + classes[k] + " |";
        for (const ClassColumn& c : columns) s += " " + util::percent(c.per_class[k]) + " |";
        s += "\n";
    }
    s += "| **average** |";
    for (const ClassColumn& c : columns) s += " **" + util::percent(c.overall) + "** |";
    return s + "\n";
}

std::string per_class_csv(const std::vector<std::string>& classes, const std::vector<ClassColumn>& columns) {
    check_lengths(classes, columns);
    std::string s = "class";
    for (const ClassColumn& c : columns) s += "," + util::csv_field(c.label);
    s += "\n";
    char buf[32];
    for (size_t k = 0; k < classes.size(); ++k) {
        s += util::csv_field(classes[k]);
        for (const ClassColumn& c : columns) {
            std::snprintf(buf, sizeof buf, "%.6g", c.per_class[k]);
            s += std::string(",") + (std::isnan(c.per_class[k]) ? "" : buf);
        }
        s += "\n";
    }
    return s;
}

std::string extremes_markdown(const std::vector<std::string>& classes, const std::vector<ClassColumn>& columns) {
    check_lengths(classes, columns);
    std::string s = "| evaluation | average | worst class | best class | spread |\n|---|---|---|---|---|\n";
    for (const ClassColumn& c : columns) {
        int worst = -1, best = -1;
        for (size_t k = 0; k < classes.size(); ++k) {
            if (std::isnan(c.per_class[k])) continue;
            if (worst < 0 || c.per_class[k] < c.per_class[worst]) worst = static_cast<int>(k);
            if (best < 0 || c.per_class[k] > c.per_class[best]) best = static_cast<int>(k);
        }
        if (worst < 0) {
            s += "| " + c.label + " | " + util::percent(c.overall) + " | – | – | – |\n";
            continue;
        }
        s += "| " + c.label + " | " + util::percent(c.overall) + " | " + util::percent(c.per_class[worst]) + " (" + classes[worst] +
             ") | " + util::percent(c.per_class[best]) + " (" + classes[best] + ") | " +
             util::percent(c.per_class[best] - c.per_class[worst]) + " |\n";
    }
    return s;
}

}  // namespace cw::protocols
