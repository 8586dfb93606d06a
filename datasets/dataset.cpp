#include "datasets/dataset.h"

#include <algorithm>
#include <cstring>

#include "datasets/error.h"

namespace cw::data {

std::vector<int64_t> Dataset::class_counts() const {
    std::vector<int64_t> counts(class_names.size(), 0);
    for (int32_t y : labels)
        if (y >= 0 && y < num_classes()) ++counts[y];
    return counts;
}

void Dataset::check() const {
    const std::string who = name.empty() ? source : name;
    if (channels <= 0 || height <= 0 || width <= 0)
        fail(who, "image shape " + std::to_string(channels) + "x" + std::to_string(height) + "x" +
                      std::to_string(width) + " is not valid");
    if (class_names.empty()) fail(who, "no class names");
    if (pixels.size() != labels.size() * static_cast<size_t>(image_bytes()))
        fail(who, std::to_string(pixels.size()) + " pixel bytes for " + std::to_string(labels.size()) +
                      " images of " + std::to_string(image_bytes()) + " bytes");
    for (size_t i = 0; i < labels.size(); ++i)
        if (labels[i] < 0 || labels[i] >= num_classes())
            fail(who, "image " + std::to_string(i) + ": label " + std::to_string(labels[i]) + " out of range [0, " +
                          std::to_string(num_classes()) + ")");
    if (!coarse_labels.empty()) {
        if (coarse_labels.size() != labels.size())
            fail(who, std::to_string(coarse_labels.size()) + " coarse labels for " + std::to_string(labels.size()) +
                          " images");
        const int nc = static_cast<int>(coarse_class_names.size());
        for (size_t i = 0; i < coarse_labels.size(); ++i)
            if (coarse_labels[i] < 0 || coarse_labels[i] >= nc)
                fail(who, "image " + std::to_string(i) + ": coarse label " + std::to_string(coarse_labels[i]) +
                              " out of range [0, " + std::to_string(nc) + ")");
    }
}

Dataset with_coarse_labels(Dataset d) {
    if (d.coarse_labels.empty()) fail(d.name, "has no coarse labels");
    d.labels.swap(d.coarse_labels);
    d.class_names.swap(d.coarse_class_names);
    d.coarse_labels.clear();
    d.coarse_class_names.clear();
    if (d.name.find("coarse") == std::string::npos) d.name += "/coarse";
    return d;
}

std::vector<int32_t> coarse_of_fine(const Dataset& d) {
    if (d.coarse_labels.empty()) return {};
    if (d.coarse_labels.size() != d.labels.size())
        fail(d.name, std::to_string(d.coarse_labels.size()) + " coarse labels for " + std::to_string(d.size()) +
                         " images");
    std::vector<int32_t> coarse(d.class_names.size(), -1);
    std::vector<int64_t> first(d.class_names.size(), -1);   // the image that fixed each class's superclass
    for (int64_t i = 0; i < d.size(); ++i) {
        const int32_t y = d.labels[i];
        if (y < 0 || y >= d.num_classes())
            fail(d.name, "image " + std::to_string(i) + ": label " + std::to_string(y) + " out of range [0, " +
                             std::to_string(d.num_classes()) + ")");
        if (coarse[y] < 0) {
            coarse[y] = d.coarse_labels[i];
            first[y] = i;
        } else if (coarse[y] != d.coarse_labels[i]) {
            fail(d.name, "class " + std::to_string(y) + " (" + d.class_names[y] + ") is in two superclasses: " +
                             std::to_string(coarse[y]) + " (image " + std::to_string(first[y]) + ") and " +
                             std::to_string(d.coarse_labels[i]) + " (image " + std::to_string(i) + ")");
        }
    }
    for (size_t k = 0; k < coarse.size(); ++k)
        if (coarse[k] < 0)
            fail(d.name, "class " + std::to_string(k) + " (" + d.class_names[k] +
                             ") has no image, so its superclass is unknown");
    return coarse;
}

namespace {
Dataset empty_like(const Dataset& d) {
    Dataset out;
    out.name = d.name;
    out.source = d.source;
    out.channels = d.channels;
    out.height = d.height;
    out.width = d.width;
    out.class_names = d.class_names;
    out.coarse_class_names = d.coarse_class_names;
    return out;
}

void append(Dataset& out, const Dataset& d, int64_t i, int32_t label) {
    out.pixels.insert(out.pixels.end(), d.image(i), d.image(i) + d.image_bytes());
    out.labels.push_back(label);
    if (!d.coarse_labels.empty()) out.coarse_labels.push_back(d.coarse_labels[i]);
}
}  // namespace

Dataset select_classes(const Dataset& d, const std::vector<int>& classes, std::vector<int64_t>* original_index) {
    std::vector<int> new_label(d.class_names.size(), -1);
    Dataset out = empty_like(d);
    out.class_names.clear();
    for (size_t k = 0; k < classes.size(); ++k) {
        const int c = classes[k];
        if (c < 0 || c >= d.num_classes())
            fail(d.name, "select_classes: class " + std::to_string(c) + " out of range [0, " +
                             std::to_string(d.num_classes()) + ")");
        if (new_label[c] != -1) fail(d.name, "select_classes: class " + std::to_string(c) + " listed twice");
        new_label[c] = static_cast<int>(k);
        out.class_names.push_back(d.class_names[c]);
    }
    if (original_index) original_index->clear();
    for (int64_t i = 0; i < d.size(); ++i) {
        const int nl = new_label[d.labels[i]];
        if (nl < 0) continue;
        append(out, d, i, nl);
        if (original_index) original_index->push_back(i);
    }
    out.name = d.name + "/classes" + std::to_string(classes.size());
    return out;
}

Dataset take(const Dataset& d, const std::vector<int64_t>& indices) {
    Dataset out = empty_like(d);
    out.pixels.reserve(indices.size() * d.image_bytes());
    for (int64_t i : indices) {
        if (i < 0 || i >= d.size())
            fail(d.name, "take: index " + std::to_string(i) + " out of range [0, " + std::to_string(d.size()) + ")");
        append(out, d, i, d.labels[i]);
    }
    return out;
}

}  // namespace cw::data
