#pragma once
// One exception type for every dataset problem, so callers can tell "your data is wrong or missing" apart from
// engine bugs. Messages are one line and start with the file (or dataset) they are about.
#include <string>

#include "engine/error.h"

namespace cw::data {

struct DataError : cw::Error {
    using Error::Error;
};

// "<source>: <what>" — the common shape of every message this module throws.
[[noreturn]] inline void fail(const std::string& source, const std::string& what) {
    throw DataError(source + ": " + what);
}

}  // namespace cw::data
