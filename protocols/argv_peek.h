#pragma once
// An experiment whose paper setting depends on the dataset (CIFAR-10: PreAct ResNet-18 at 8/255; GTSRB: the small
// CNN at 12/255) reads --dataset before it declares its flags, so that --help and --print-config show the defaults
// of that dataset and every flag given explicitly still overrides them.
#include <string>

namespace cw::protocols {

// The value of `flag` in argv ("--flag V" or "--flag=V"; the last one wins), or `fallback` when it is absent.
inline std::string peek_flag(int argc, const char* const* argv, const std::string& flag, const std::string& fallback) {
    std::string value = fallback;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == flag && i + 1 < argc) value = argv[++i];
        else if (a.rfind(flag + "=", 0) == 0) value = a.substr(flag.size() + 1);
    }
    return value;
}

}  // namespace cw::protocols
