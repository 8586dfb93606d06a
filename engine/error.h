#pragma once
// Errors the engine throws. Messages name the op and the shapes involved so a user can act on one line.
#include <stdexcept>
#include <string>

namespace cw {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct ShapeError : Error {
    using Error::Error;
};
struct DeviceError : Error {
    using Error::Error;
};
struct AutogradError : Error {
    using Error::Error;
};

#define CW_CHECK(cond, ErrType, msg)              \
    do {                                          \
        if (!(cond)) throw ErrType(msg);          \
    } while (0)

}  // namespace cw
