#include "protocols/frl_violation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "util/atomic_file.h"

namespace cw::protocols {

namespace {
const std::string kPrefix = "state_violation_";

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
}
std::string class_name(const std::vector<std::string>& classes, int k) {
    return k >= 0 && k < static_cast<int>(classes.size()) ? classes[k] : std::to_string(k);
}
}  // namespace

std::vector<std::string> history_classes(const util::CsvTable& history) {
    if (history.header.size() < 3 || history.header[0] != "epoch" || history.header[1] != "eval")
        throw std::runtime_error("history.csv: expected the columns epoch,eval,overall,<classes>");
    return {history.header.begin() + 3, history.header.end()};
}

std::vector<MaxViolation> max_violations(const util::CsvTable& history, const std::string& source) {
    const size_t first_class = 3;
    std::vector<MaxViolation> out;
    for (size_t r = 0; r < history.rows.size(); ++r) {
        const auto& row = history.rows[r];
        if (row[1].rfind(kPrefix, 0) != 0) continue;
        MaxViolation m;
        m.constraint = row[1].substr(kPrefix.size());
        m.epoch = static_cast<int64_t>(util::csv_number(row[0], source));
        for (size_t j = first_class; j < row.size(); ++j) {
            const double v = util::csv_number(row[j], source);
            if (std::isnan(v)) continue;   // a class the split had no image of
            // The largest violation: the sign matters, the least-violated class is the minimum, not this.
            if (m.cls < 0 || v > m.value) {
                m.value = v;
                m.cls = static_cast<int>(j - first_class);
            }
        }
        if (m.cls < 0) throw std::runtime_error(source + ": row " + std::to_string(r + 2) + " (" + row[1] + ") has no values");
        out.push_back(m);
    }
    return out;
}

std::vector<MaxViolation> read_max_violations(const std::string& run_dir) {
    const std::string file = run_dir + "/history.csv";
    return max_violations(util::parse_csv(util::read_file_text(file), file), file);
}

std::string max_violations_csv(const std::vector<RunViolations>& runs, const std::vector<std::string>& classes) {
    std::string s = "run,epoch,constraint,max_violation,class\n";
    for (const RunViolations& run : runs)
        for (const MaxViolation& m : run.rows) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.6g", m.value);
            std::string name = class_name(classes, m.cls);
            if (name.find_first_of(",\"") != std::string::npos) {
                std::string q = "\"";
                for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
                name = q + "\"";
            }
            s += run.run + "," + std::to_string(m.epoch) + "," + m.constraint + "," + buf + "," + name + "\n";
        }
    return s;
}

std::string max_violations_markdown(const RunViolations& run, const std::vector<std::string>& classes) {
    std::vector<std::string> constraints;
    std::map<int64_t, std::map<std::string, const MaxViolation*>> by_epoch;
    for (const MaxViolation& m : run.rows) {
        if (std::find(constraints.begin(), constraints.end(), m.constraint) == constraints.end())
            constraints.push_back(m.constraint);
        by_epoch[m.epoch][m.constraint] = &m;
    }
    if (by_epoch.empty()) return run.run + ": no constraint violations in history.csv\n";
    std::string s = "| epoch |", rule = "|---|";
    for (const std::string& c : constraints) s += " max violation " + c + " |", rule += "---|";
    s += " all met |\n" + rule + "---|\n";
    for (const auto& [epoch, row] : by_epoch) {
        s += "| " + std::to_string(epoch) + " |";
        bool met = true;
        for (const std::string& c : constraints) {
            const auto it = row.find(c);
            if (it == row.end()) {
                s += " |";
                continue;
            }
            met &= it->second->value <= 0;
            s += " " + number(it->second->value) + " (" + class_name(classes, it->second->cls) + ") |";
        }
        s += met ? " yes |\n" : " no |\n";
    }
    return s;
}

}  // namespace cw::protocols
