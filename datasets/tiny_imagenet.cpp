// TinyImageNet-200: wnids.txt, train/<wnid>/images/*.JPEG (500 per class), val/images/*.JPEG labelled by
// val/val_annotations.txt (file, wnid, box). All images are 64x64; some JPEGs are grayscale and are expanded to RGB.
#include <algorithm>
#include <map>
#include <sstream>

#include "datasets/error.h"
#include "datasets/file_io.h"
#include "datasets/image.h"
#include "datasets/loaders.h"
#include "datasets/parallel.h"
#include "datasets/paths.h"

namespace cw::data {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) lines.push_back(line);
    }
    return lines;
}

std::string first_field(const std::string& line) { return line.substr(0, line.find_first_of("\t ")); }

struct TinyClasses {
    std::string root;
    std::vector<std::string> wnids;  // sorted
    std::vector<std::string> names;
    std::map<std::string, int> index_of;
};

TinyClasses read_classes(const std::string& data_dir) {
    PathSearch search("tinyimagenet", {join_path(data_dir, "tiny-imagenet-200"),
                                       join_path(data_dir, "tinyimagenet/tiny-imagenet-200"),
                                       join_path(data_dir, "tinyimagenet")});
    TinyClasses t;
    t.root = search.find_folder_with("wnids.txt");
    if (t.root.empty()) search.fail_missing("wnids.txt");
    const std::string wnids_path = join_path(t.root, "wnids.txt");
    for (const auto& line : lines_of(read_text_file(wnids_path))) t.wnids.push_back(first_field(line));
    std::sort(t.wnids.begin(), t.wnids.end());
    if (t.wnids.empty()) fail(wnids_path, "lists no classes");
    if (std::adjacent_find(t.wnids.begin(), t.wnids.end()) != t.wnids.end()) fail(wnids_path, "lists a wnid twice");
    for (size_t c = 0; c < t.wnids.size(); ++c) t.index_of[t.wnids[c]] = static_cast<int>(c);
    t.names = t.wnids;
    if (const std::string words = join_path(t.root, "words.txt"); file_exists(words)) {
        for (const auto& line : lines_of(read_text_file(words))) {
            const size_t tab = line.find('\t');
            if (tab == std::string::npos) continue;
            auto it = t.index_of.find(line.substr(0, tab));
            if (it != t.index_of.end()) t.names[it->second] = line.substr(tab + 1, line.find(',', tab) - tab - 1);
        }
    }
    return t;
}

}  // namespace

std::vector<std::string> tiny_imagenet_class_names(const std::string& data_dir) { return read_classes(data_dir).names; }

Dataset load_tiny_imagenet(const std::string& data_dir, const std::string& split) {
    if (split != "train" && split != "val")
        throw DataError("tinyimagenet: unknown split '" + split + "' (expected train or val; test has no labels)");
    const TinyClasses classes = read_classes(data_dir);
    const std::string& root = classes.root;
    const std::vector<std::string>& wnids = classes.wnids;
    const std::map<std::string, int>& class_of = classes.index_of;

    Dataset d;
    d.name = "tinyimagenet/" + split;
    d.source = root;
    d.channels = 3;
    d.height = d.width = 64;
    d.class_names = classes.names;

    std::vector<std::string> paths;
    if (split == "train") {
        for (size_t c = 0; c < wnids.size(); ++c) {
            const std::string folder = join_path(root, "train/" + wnids[c] + "/images");
            if (!directory_exists(folder)) fail(folder, "missing (class " + wnids[c] + " has no training folder)");
            for (const auto& name : list_files(folder, ".JPEG")) {
                paths.push_back(join_path(folder, name));
                d.labels.push_back(static_cast<int32_t>(c));
            }
        }
    } else {
        const std::string ann = join_path(root, "val/val_annotations.txt");
        int line_no = 0;
        for (const auto& line : lines_of(read_text_file(ann))) {
            ++line_no;
            std::istringstream fields(line);
            std::string file, wnid;
            fields >> file >> wnid;
            auto it = class_of.find(wnid);
            if (file.empty() || it == class_of.end())
                fail(ann, "line " + std::to_string(line_no) + ": '" + wnid + "' is not a wnid listed in wnids.txt");
            paths.push_back(join_path(root, "val/images/" + file));
            d.labels.push_back(it->second);
        }
    }
    if (paths.empty()) fail(root, "no " + split + " images found");

    d.pixels.resize(paths.size() * size_t(d.image_bytes()));
    parallel_for(static_cast<int64_t>(paths.size()), [&](int64_t i) {
        const std::vector<uint8_t> bytes = read_file(paths[i]);
        const HwcImage img = decode_image(bytes.data(), bytes.size(), paths[i], 3);
        if (img.width != 64 || img.height != 64)
            fail(paths[i], "image is " + std::to_string(img.width) + "x" + std::to_string(img.height) +
                               ", expected 64x64");
        hwc_to_chw(img, d.image(i));
    });
    d.check();
    return d;
}

}  // namespace cw::data
