#include "eval/eval_records.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include "util/parse_number.h"

namespace cw::eval {

size_t EvalRecords::attack_position(const std::string& name) const {
    for (size_t a = 0; a < attacks.size(); ++a)
        if (attacks[a] == name) return a;
    throw std::invalid_argument("evaluation records have no attack '" + name + "'");
}

bool class_indices_in_range(const std::vector<int32_t>& v, int32_t num_classes, int32_t lowest) {
    return std::all_of(v.begin(), v.end(), [&](int32_t k) { return k >= lowest && k < num_classes; });
}

std::string records_csv(const EvalRecords& r) {
    std::ostringstream os;
    os << "index,label,clean_pred";
    for (const auto& a : r.attacks) os << "," << a << "_pred";
    os << "\n";
    for (int64_t i = 0; i < r.size(); ++i) {
        os << r.index[i] << "," << r.label[i] << "," << r.clean_pred[i];
        for (const auto& p : r.adv_pred) os << "," << p[i];
        os << "\n";
    }
    return os.str();
}

EvalRecords parse_records_csv(const std::string& text, const std::string& source) {
    auto fail = [&](const std::string& what) { throw std::invalid_argument(source + ": " + what); };
    EvalRecords r;
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line)) fail("empty (expected the header index,label,clean_pred,...)");
    std::vector<std::string> header;
    {
        std::istringstream h(line);
        std::string cell;
        while (std::getline(h, cell, ',')) header.push_back(cell);
    }
    if (header.size() < 3 || header[0] != "index" || header[1] != "label" || header[2] != "clean_pred")
        fail("header must start with index,label,clean_pred");
    for (size_t c = 3; c < header.size(); ++c) {
        const std::string& h = header[c];
        if (h.size() < 6 || h.compare(h.size() - 5, 5, "_pred") != 0) fail("column '" + h + "' is not <attack>_pred");
        r.attacks.push_back(h.substr(0, h.size() - 5));
    }
    r.adv_pred.resize(r.attacks.size());
    for (int64_t line_no = 2; std::getline(in, line); ++line_no) {
        if (line.empty()) continue;
        std::istringstream row(line);
        std::string cell;
        std::vector<long long> v;
        while (std::getline(row, cell, ',')) {
            const std::optional<long long> x = util::whole_integer(cell);
            if (!x || *x < INT32_MIN || *x > INT32_MAX)
                fail("line " + std::to_string(line_no) + ": '" + cell + "' is not an integer");
            v.push_back(*x);
        }
        if (v.size() != header.size())
            fail("line " + std::to_string(line_no) + " has " + std::to_string(v.size()) + " fields, the header " +
                 std::to_string(header.size()));
        r.index.push_back(v[0]);
        r.label.push_back(static_cast<int32_t>(v[1]));
        r.clean_pred.push_back(static_cast<int32_t>(v[2]));
        for (size_t a = 0; a < r.attacks.size(); ++a) r.adv_pred[a].push_back(static_cast<int32_t>(v[3 + a]));
    }
    return r;
}

}  // namespace cw::eval
