#include "datasets/batch.h"

#include <array>

#include "datasets/error.h"

namespace cw::data {

namespace {
const std::array<float, 256>& byte_to_unit() {
    static const std::array<float, 256> table = [] {
        std::array<float, 256> t{};
        for (int i = 0; i < 256; ++i) t[i] = static_cast<float>(i) / 255.0f;
        return t;
    }();
    return table;
}
}  // namespace

HostBatch gather_batch(const Dataset& data, const std::vector<int64_t>& indices, const Augmentation& aug,
                       cw::Rng* rng) {
    if (aug.enabled() && !rng) throw DataError(data.name + ": augmentation needs an Rng");
    const auto& unit = byte_to_unit();
    HostBatch b;
    b.channels = data.channels;
    b.height = data.height;
    b.width = data.width;
    const size_t bytes = static_cast<size_t>(data.image_bytes());
    b.images.resize(indices.size() * bytes);
    b.labels.resize(indices.size());
    b.indices = indices;
    std::vector<uint8_t> view(bytes);
    for (size_t k = 0; k < indices.size(); ++k) {
        const int64_t i = indices[k];
        if (i < 0 || i >= data.size())
            throw DataError(data.name + ": index " + std::to_string(i) + " out of range [0, " +
                            std::to_string(data.size()) + ")");
        const uint8_t* src = data.image(i);
        if (aug.enabled()) {
            augment_image(src, view.data(), data.channels, data.height, data.width, aug, *rng);
            src = view.data();
        }
        float* out = b.images.data() + k * bytes;
        for (size_t p = 0; p < bytes; ++p) out[p] = unit[src[p]];
        b.labels[k] = data.labels[i];
    }
    return b;
}

Batch to_batch(const HostBatch& host, cw::Device device) {
    Batch b;
    b.images = cw::Tensor::from_vector(host.images, {host.size(), host.channels, host.height, host.width}, device);
    b.labels = cw::Tensor::from_labels(host.labels, device);
    b.indices = host.indices;
    return b;
}

Batch make_batch(const Dataset& data, const std::vector<int64_t>& indices, cw::Device device, const Augmentation& aug,
                 cw::Rng* rng) {
    return to_batch(gather_batch(data, indices, aug, rng), device);
}

}  // namespace cw::data
