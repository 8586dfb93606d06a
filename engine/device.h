#pragma once
// Where a tensor lives. The device is chosen at run time (--device auto|cpu|cuda), never at compile time.
#include <string>

namespace cw {

enum class DeviceType { CPU, CUDA };

struct Device {
    DeviceType type = DeviceType::CPU;
    int index = 0;

    static Device cpu() { return {DeviceType::CPU, 0}; }
    static Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
    bool is_cpu() const { return type == DeviceType::CPU; }
    bool is_cuda() const { return type == DeviceType::CUDA; }
    bool operator==(const Device& o) const { return type == o.type && index == o.index; }
    bool operator!=(const Device& o) const { return !(*this == o); }
    std::string str() const;
};

// Is a CUDA backend compiled in and is a usable GPU present? `why` receives a one-line reason when not.
bool cuda_available(std::string* why = nullptr);

// Resolves a --device value. "auto" picks a usable GPU, else the CPU, printing one line that says which and why;
// "cuda" without a usable GPU throws with a clear message; anything else throws naming the flag.
Device resolve_device(const std::string& flag_value, bool verbose = true);

}  // namespace cw
