#include "datasets/cifar_records.h"

#include <cstring>

#include "datasets/error.h"

namespace cw::data {

Records parse_records(const uint8_t* data, size_t size, const std::string& source, const RecordLayout& layout) {
    const size_t record = layout.record_bytes();
    if (layout.classes_per_label.empty() || layout.image_bytes() == 0) fail(source, "invalid record layout");
    if (size == 0) fail(source, "empty file (expected " + std::to_string(record) + "-byte records)");
    if (size % record != 0)
        fail(source, "truncated or wrong format: " + std::to_string(size) + " bytes is not a whole number of " +
                         std::to_string(record) + "-byte records (" + std::to_string(size / record) + " records + " +
                         std::to_string(size % record) + " bytes)");
    Records out;
    out.count = static_cast<int64_t>(size / record);
    const size_t nlab = layout.classes_per_label.size();
    out.labels.assign(nlab, std::vector<int32_t>(out.count));
    out.pixels.resize(out.count * layout.image_bytes());
    for (int64_t r = 0; r < out.count; ++r) {
        const uint8_t* rec = data + r * record;
        for (size_t k = 0; k < nlab; ++k) {
            const int label = rec[k];
            if (label >= layout.classes_per_label[k])
                fail(source, "record " + std::to_string(r) + ": label " + std::to_string(label) +
                                 " out of range [0, " + std::to_string(layout.classes_per_label[k]) + ")");
            out.labels[k][r] = label;
        }
        std::memcpy(out.pixels.data() + r * layout.image_bytes(), rec + nlab, layout.image_bytes());
    }
    return out;
}

}  // namespace cw::data
