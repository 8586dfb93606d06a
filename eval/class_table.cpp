#include "eval/class_table.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "util/format.h"

namespace cw::eval {

void print_class_table(std::ostream& os, const EvalRecords& r, const std::vector<std::string>& classes) {
    const size_t C = classes.size();
    std::vector<std::vector<int32_t>> columns = {r.clean_pred};
    std::vector<std::string> heads = {"clean"};
    for (size_t a = 0; a < r.attacks.size(); ++a) {
        columns.push_back(r.adv_pred[a]);
        heads.push_back(r.attacks[a]);
    }
    size_t name_w = 7;
    for (const auto& c : classes) name_w = std::max(name_w, c.size());
    std::vector<size_t> col_w;
    for (const auto& h : heads) col_w.push_back(std::max<size_t>(h.size(), 6));

    os << std::left << std::setw(static_cast<int>(name_w)) << "class";
    for (size_t c = 0; c < heads.size(); ++c) os << "  " << std::right << std::setw(static_cast<int>(col_w[c])) << heads[c];
    os << "\n";
    auto row = [&](const std::string& label, int64_t cls) {
        os << std::left << std::setw(static_cast<int>(name_w)) << label;
        for (size_t c = 0; c < columns.size(); ++c) {
            int64_t n = 0, ok = 0;
            for (int64_t i = 0; i < r.size(); ++i)
                if (cls < 0 || r.label[i] == cls) {
                    ++n;
                    ok += columns[c][i] == r.label[i];
                }
            os << "  " << std::right << std::setw(static_cast<int>(col_w[c])) << (n > 0 ? util::percent_of(ok, n) : "-");
        }
        os << "\n";
    };
    for (size_t k = 0; k < C; ++k) row(classes[k], static_cast<int64_t>(k));
    row("overall", -1);
}

}  // namespace cw::eval
