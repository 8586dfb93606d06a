#include "engine/backend.h"

#include "engine/cpu/cpu_backend.h"
#include "engine/cuda_backend.h"

namespace cw {

Backend& backend(Device d) { return d.is_cpu() ? static_cast<Backend&>(cpu_backend()) : cuda_backend(); }

}  // namespace cw
