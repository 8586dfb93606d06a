// Linked instead of engine/cuda when classwise is built without the CUDA toolkit.
#include "engine/cuda_backend.h"

#include "engine/error.h"

namespace cw {

bool cuda_backend_usable(std::string* why) {
    if (why) *why = "this build of classwise has no CUDA backend (the CUDA toolkit was not found at build time)";
    return false;
}

Backend& cuda_backend() {
    throw DeviceError("CUDA requested, but this build of classwise has no CUDA backend (rebuild with the CUDA "
                      "toolkit at /usr/local/cuda)");
}

}  // namespace cw
