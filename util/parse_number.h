#pragma once
// Numbers read from flags and files, all or nothing. std::stod and its kin read a prefix ("3x" is 3) and throw their
// own one-word messages ("stod") on text that starts with no number; every reader here wants instead to refuse the
// whole item with a message of its own that names the flag or file.
#include <optional>
#include <string>

namespace cw::util {

// `text` read whole as a number (leading blanks allowed, as strtod allows them; "nan" and "inf" are numbers): nothing
// for "", "3x", "x" or a value outside the type's range (which includes a float that underflows).
std::optional<double> whole_double(const std::string& text);
std::optional<float> whole_float(const std::string& text);
// The same for integers: "3.5", "3e2" and "" are not integers.
std::optional<long long> whole_integer(const std::string& text);

}  // namespace cw::util
