#pragma once
// The training CSV files (history.csv, steps.csv, train_log.csv) read back as tables of strings: a header and rows,
// with quoted fields (a class name holding a comma is written quoted, train/csv_rows.h) unquoted again.
#include <string>
#include <vector>

namespace cw::report {

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

}  // namespace cw::report
