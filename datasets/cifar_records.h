#pragma once
// The CIFAR binary record layout, also used by our GTSRB-32 files: no header, fixed-size records of
// `label_bytes` label bytes followed by a 3x32x32 image stored as R, G, B planes (already CHW).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cw::data {

struct RecordLayout {
    // One entry per label byte, giving that label's class count (CIFAR-10: {10}; CIFAR-100: {20, 100} for the
    // coarse then fine byte; GTSRB-32: {43}).
    std::vector<int> classes_per_label;
    int channels = 3, height = 32, width = 32;
    size_t image_bytes() const { return size_t(channels) * height * width; }
    size_t record_bytes() const { return classes_per_label.size() + image_bytes(); }
};

struct Records {
    int64_t count = 0;
    std::vector<std::vector<int32_t>> labels;  // one vector per label byte
    std::vector<uint8_t> pixels;               // count * image_bytes, CHW per record
};

// Throws DataError naming `source` if the file is empty, is not a whole number of records (truncated), or holds
// a label outside its class range.
Records parse_records(const uint8_t* data, size_t size, const std::string& source, const RecordLayout& layout);

}  // namespace cw::data
