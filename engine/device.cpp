#include "engine/device.h"

#include <iostream>

#include "engine/backend.h"
#include "engine/cuda_backend.h"
#include "engine/error.h"

namespace cw {

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }

bool cuda_available(std::string* why) { return cuda_backend_usable(why); }

Device resolve_device(const std::string& flag_value, bool verbose) {
    std::string why;
    if (flag_value == "cpu") {
        if (verbose) std::cout << "device: cpu (requested with --device cpu)\n";
        return Device::cpu();
    }
    if (flag_value == "cuda") {
        if (!cuda_available(&why)) throw DeviceError("--device cuda: no usable GPU: " + why);
        if (verbose) std::cout << "device: cuda:0 (requested with --device cuda)\n";
        return Device::cuda(0);
    }
    if (flag_value == "auto") {
        if (cuda_available(&why)) {
            if (verbose) std::cout << "device: cuda:0 (auto: a usable GPU was found)\n";
            return Device::cuda(0);
        }
        if (verbose) std::cout << "device: cpu (auto: falling back to the CPU because " << why << ")\n";
        return Device::cpu();
    }
    throw Error("--device: expected auto, cpu or cuda, got '" + flag_value + "'");
}

}  // namespace cw
