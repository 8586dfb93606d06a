#pragma once
// CSV as the project writes it (history.csv, steps.csv, train_log.csv, the protocols' tables): fields quoted only
// when they must be (a class name holding a comma), and read back as tables of strings, the quotes undone.
#include <string>
#include <vector>

namespace cw::util {

// A CSV field: quoted (with doubled quotes) if it holds a comma, a quote or a newline.
std::string csv_field(const std::string& s);


struct CsvTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;   // each as long as the header

    // Position of a column; -1 if absent.
    int column(const std::string& name) const;
};

// Throws std::runtime_error naming `source` and the line when a row's field count differs from the header's or a
// quote is left open.
CsvTable parse_csv(const std::string& text, const std::string& source);

// A number field: NaN for an empty field; throws naming `source` for anything that is not a number.
double csv_number(const std::string& field, const std::string& source);

}  // namespace cw::util
