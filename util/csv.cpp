#include "util/csv.h"

#include <cmath>
#include <stdexcept>
#include "util/parse_number.h"

namespace cw::util {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

int CsvTable::column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return static_cast<int>(i);
    return -1;
}

CsvTable parse_csv(const std::string& text, const std::string& source) {
    std::vector<std::vector<std::string>> lines;
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false, any = false;
    size_t line_no = 1;
    auto end_field = [&] {
        fields.push_back(field);
        field.clear();
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        any = true;
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += text[++i];
            else if (c == '"') quoted = false;
            else field += c;
            if (c == '\n') ++line_no;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            end_field();
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            end_field();
            lines.push_back(std::move(fields));
            fields.clear();
            any = false;
            ++line_no;
        } else {
            field += c;
        }
    }
    if (quoted) throw std::runtime_error(source + ": a quoted field is not closed (line " + std::to_string(line_no) + ")");
    if (any) {
        end_field();
        lines.push_back(std::move(fields));
    }
    CsvTable t;
    if (lines.empty()) throw std::runtime_error(source + ": empty (expected a CSV header line)");
    t.header = std::move(lines[0]);
    for (size_t l = 1; l < lines.size(); ++l) {
        if (lines[l].size() == 1 && lines[l][0].empty()) continue;   // blank line
        if (lines[l].size() != t.header.size())
            throw std::runtime_error(source + ": line " + std::to_string(l + 1) + " has " +
                                     std::to_string(lines[l].size()) + " fields, the header " +
                                     std::to_string(t.header.size()));
        t.rows.push_back(std::move(lines[l]));
    }
    return t;
}

double csv_number(const std::string& field, const std::string& source) {
    if (field.empty()) return std::nan("");
    const std::optional<double> v = whole_double(field);
    if (!v) throw std::runtime_error(source + ": '" + field + "' is not a number");
    return *v;
}

}  // namespace cw::util
