#pragma once
// Enum flags by name: the help shows the names ("original|cfa") instead of CLI11's name->number table, and a bad
// value is one line listing them. Shared by every method family's flags.
#include <CLI/CLI.hpp>
#include <cctype>
#include <map>
#include <string>

namespace cw::train {

template <class E>
inline CLI::Validator choice(const std::map<std::string, E>& values, const std::string& names) {
    return CLI::Validator(
        [values, names](std::string& text) -> std::string {
            std::string key = text;
            for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            const auto it = values.find(key);
            if (it == values.end()) return "expected one of " + names + ", got '" + text + "'";
            text = std::to_string(static_cast<int>(it->second));   // CLI11 then reads the enum from its number
            return std::string();
        },
        names);
}

}  // namespace cw::train
