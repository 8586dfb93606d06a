// fuzz-sources: datasets/cifar_records.cpp
// parse_records() must turn any input into Records or a DataError. The first byte picks a layout (CIFAR-10,
// CIFAR-100's two label bytes, GTSRB-32, or a tiny 1x2x2 layout that lets short inputs hold whole records);
// accepted records must have in-range labels and the right pixel count.
#include <cstdint>
#include <cstdlib>

#include "datasets/cifar_records.h"
#include "datasets/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    cw::data::RecordLayout layout;
    switch (data[0] % 4) {
        case 0: layout.classes_per_label = {10}; break;
        case 1: layout.classes_per_label = {20, 100}; break;
        case 2: layout.classes_per_label = {43}; break;
        default:
            layout.classes_per_label = {5, 7};
            layout.channels = 1;
            layout.height = layout.width = 2;
    }
    try {
        const cw::data::Records r = cw::data::parse_records(data + 1, size - 1, "fuzz.bin", layout);
        if (r.count <= 0 || r.pixels.size() != size_t(r.count) * layout.image_bytes()) std::abort();
        for (size_t k = 0; k < r.labels.size(); ++k)
            for (int32_t y : r.labels[k])
                if (y < 0 || y >= layout.classes_per_label[k]) std::abort();
    } catch (const cw::data::DataError&) {
    }
    return 0;
}
