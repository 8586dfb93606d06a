// GTSRB in its official layout: per-class folders of variable-size PPMs with semicolon-separated ground truth
// (Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId). We crop each sign to its ROI and resize it.
#include <climits>
#include <cstdio>
#include <sstream>

#include "datasets/class_names.h"
#include "datasets/error.h"
#include "datasets/file_io.h"
#include "datasets/image.h"
#include "datasets/loaders.h"
#include "datasets/parallel.h"
#include "datasets/paths.h"
#include "util/parse_number.h"

namespace cw::data {

namespace {

struct GtsrbRow {
    std::string image_path;
    int width = 0, height = 0, x1 = 0, y1 = 0, x2 = 0, y2 = 0, class_id = 0;
};

std::vector<std::string> split_line(const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, ';')) fields.push_back(field);
    if (!line.empty() && line.back() == ';') fields.emplace_back();
    return fields;
}

int to_int(const std::string& s, const std::string& csv, int line, const char* column) {
    const std::optional<long long> v = util::whole_integer(s);
    if (!v || *v < INT_MIN || *v > INT_MAX)
        fail(csv, "line " + std::to_string(line) + ": " + column + " '" + s + "' is not an integer");
    return static_cast<int>(*v);
}

// Rows of a GT csv; image paths are resolved against `image_folder`.
std::vector<GtsrbRow> read_gt_csv(const std::string& csv, const std::string& image_folder) {
    std::istringstream in(read_text_file(csv));
    std::string line;
    if (!std::getline(in, line)) fail(csv, "empty ground-truth file");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> header = split_line(line);
    const char* needed[] = {"Filename", "Width", "Height", "Roi.X1", "Roi.Y1", "Roi.X2", "Roi.Y2", "ClassId"};
    int col[8];
    for (int k = 0; k < 8; ++k) {
        col[k] = -1;
        for (size_t j = 0; j < header.size(); ++j)
            if (header[j] == needed[k]) col[k] = static_cast<int>(j);
        if (col[k] < 0)
            fail(csv, std::string("header has no column '") + needed[k] +
                          "' (expected Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId)");
    }
    std::vector<GtsrbRow> rows;
    for (int line_no = 2; std::getline(in, line); ++line_no) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const std::vector<std::string> f = split_line(line);
        if (f.size() < header.size())
            fail(csv, "line " + std::to_string(line_no) + " has " + std::to_string(f.size()) + " fields, expected " +
                          std::to_string(header.size()));
        GtsrbRow r;
        r.image_path = join_path(image_folder, f[col[0]]);
        r.width = to_int(f[col[1]], csv, line_no, "Width");
        r.height = to_int(f[col[2]], csv, line_no, "Height");
        r.x1 = to_int(f[col[3]], csv, line_no, "Roi.X1");
        r.y1 = to_int(f[col[4]], csv, line_no, "Roi.Y1");
        r.x2 = to_int(f[col[5]], csv, line_no, "Roi.X2");
        r.y2 = to_int(f[col[6]], csv, line_no, "Roi.Y2");
        r.class_id = to_int(f[col[7]], csv, line_no, "ClassId");
        if (r.class_id < 0 || r.class_id >= 43)
            fail(csv, "line " + std::to_string(line_no) + ": ClassId " + std::to_string(r.class_id) +
                          " out of range [0, 43)");
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string class_folder(int c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%05d", c);
    return buf;
}

}  // namespace

Dataset load_gtsrb(const std::string& data_dir, const std::string& split, const GtsrbOptions& options) {
    if (split != "train" && split != "test")
        throw DataError("gtsrb: unknown split '" + split + "' (expected train or test)");
    if (options.size <= 0 || options.size > 1024)
        throw DataError("gtsrb: output size " + std::to_string(options.size) + " is not in [1, 1024]");
    PathSearch search("gtsrb", {join_path(data_dir, "GTSRB"), join_path(data_dir, "gtsrb/GTSRB"),
                                join_path(data_dir, "gtsrb")});
    std::vector<GtsrbRow> rows;
    std::string root;
    if (split == "train") {
        root = search.find_folder_with("Final_Training/Images/00000/GT-00000.csv");
        if (root.empty()) search.fail_missing("Final_Training/Images/00000/GT-00000.csv");
        for (int c = 0; c < 43; ++c) {
            const std::string folder = join_path(root, "Final_Training/Images/" + class_folder(c));
            PathSearch in_folder("gtsrb", {folder});
            const std::string csv = in_folder.find_file({"GT-" + class_folder(c) + ".csv"});
            if (csv.empty()) in_folder.fail_missing("ground truth of class " + std::to_string(c));
            std::vector<GtsrbRow> class_rows = read_gt_csv(csv, folder);
            for (const auto& r : class_rows)
                if (r.class_id != c)
                    fail(csv, "lists ClassId " + std::to_string(r.class_id) + " inside the folder of class " +
                                  std::to_string(c));
            rows.insert(rows.end(), class_rows.begin(), class_rows.end());
        }
    } else {
        std::string csv;
        for (const char* probe : {"Final_Test/Images/GT-final_test.csv", "Final_Test/GT-final_test.csv",
                                  "GT-final_test.csv"}) {
            root = search.find_folder_with(probe);
            if (!root.empty()) {
                csv = join_path(root, probe);
                break;
            }
        }
        if (csv.empty())
            search.fail_missing("GT-final_test.csv (the test ground truth, GTSRB_Final_Test_GT.zip)");
        rows = read_gt_csv(csv, join_path(root, "Final_Test/Images"));
    }

    if (rows.empty()) fail(root, "the ground truth lists no images");

    Dataset d;
    d.name = "gtsrb/" + split;
    d.source = root;
    d.channels = 3;
    d.height = d.width = options.size;
    d.class_names = gtsrb_class_names();
    d.labels.resize(rows.size());
    d.pixels.resize(rows.size() * size_t(d.image_bytes()));
    parallel_for(static_cast<int64_t>(rows.size()), [&](int64_t i) {
        const GtsrbRow& r = rows[i];
        const std::vector<uint8_t> bytes = read_file(r.image_path);
        HwcImage img = parse_ppm(bytes.data(), bytes.size(), r.image_path);
        if (img.width != r.width || img.height != r.height)
            fail(r.image_path, "image is " + std::to_string(img.width) + "x" + std::to_string(img.height) +
                                   ", its ground truth says " + std::to_string(r.width) + "x" +
                                   std::to_string(r.height));
        if (options.crop_to_roi) img = crop(img, r.x1, r.y1, r.x2, r.y2, r.image_path);
        img = resize(img, options.size, options.size, r.image_path);
        hwc_to_chw(img, d.image(i));
        d.labels[i] = r.class_id;
    });
    d.check();
    return d;
}

}  // namespace cw::data
