#include "jobs/job_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <stdexcept>

#include "datasets/batch.h"
#include "datasets/error.h"
#include "datasets/registry.h"
#include "nn/safetensors.h"
#include "util/parse_number.h"

namespace cw::train {

namespace {

std::invalid_argument bad_split(const std::string& rule_text) {
    return std::invalid_argument("--val-split: expected none, first:K, last:K (K >= 0 images per class) or fraction:F "
                                 "(0 <= F <= 1), got '" + rule_text + "'");
}

// "first:100" → ("first", "100"); throws naming --val-split.
std::pair<std::string, std::string> split_rule(const std::string& text) {
    const size_t colon = text.find(':');
    if (text == "none") return {"none", ""};
    if (colon == std::string::npos || colon + 1 == text.size()) throw bad_split(text);
    return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace

data::Split make_split(const data::Dataset& train, const std::string& rule_text) {
    const auto [rule, value] = split_rule(rule_text);
    data::Split split;
    if (rule == "none") {
        split.train.resize(static_cast<size_t>(train.size()));
        std::iota(split.train.begin(), split.train.end(), 0);
        return split;
    }
    const int C = train.num_classes();
    const std::optional<double> parsed = util::whole_double(value);
    if (!parsed) throw bad_split(rule_text);
    const double number = *parsed;
    // A count beyond any dataset (1e300) would overflow the conversion below: refused with the malformed ones.
    const bool whole = number == std::floor(number) && number >= 0 && number <= 1e15;
    if (!std::isfinite(number) || (rule != "fraction" && !whole) ||
        (rule == "fraction" && (number < 0 || number > 1)))
        throw bad_split(rule_text);
    try {
        if (rule == "first") return data::split_first_k_per_class(train.labels, C, static_cast<int64_t>(number));
        if (rule == "last") return data::split_last_k_per_class(train.labels, C, static_cast<int64_t>(number));
        if (rule == "fraction") return data::split_fraction_per_class(train.labels, C, number);
    } catch (const cw::data::DataError& e) {
        throw std::invalid_argument("--val-split " + rule_text + ": " + e.what());   // e.g. more than a class holds
    }
    throw bad_split(rule_text);
}

std::vector<int64_t> proportional_subset(const std::vector<int64_t>& indices, const data::Dataset& d, int64_t n) {
    if (n <= 0 || n >= static_cast<int64_t>(indices.size())) return indices;
    const int C = d.num_classes();
    const std::vector<int64_t> counts = data::count_per_class(indices, d.labels, C);
    std::vector<int64_t> quota(static_cast<size_t>(C));
    for (int k = 0; k < C; ++k)
        quota[static_cast<size_t>(k)] = static_cast<int64_t>(std::llround(static_cast<double>(n) * counts[static_cast<size_t>(k)] /
                                                                           static_cast<double>(indices.size())));
    std::vector<int64_t> out;
    for (int64_t i : indices) {
        int64_t& q = quota[static_cast<size_t>(d.labels[static_cast<size_t>(i)])];
        if (q > 0) {
            out.push_back(i);
            --q;
        }
    }
    return out;
}

eval::BatchSource batches_of(std::shared_ptr<const data::Dataset> d, std::vector<int64_t> indices, int64_t batch_size,
                             Device device) {
    eval::BatchSource src;
    src.num_batches = (static_cast<int64_t>(indices.size()) + batch_size - 1) / batch_size;
    src.batch = [d, indices = std::move(indices), batch_size, device](int64_t b) {
        const auto first = indices.begin() + b * batch_size;
        const auto last = indices.begin() + std::min<int64_t>(static_cast<int64_t>(indices.size()), (b + 1) * batch_size);
        data::Batch batch = data::make_batch(*d, std::vector<int64_t>(first, last), device);
        return eval::EvalBatch{batch.images, batch.labels, batch.indices};
    };
    return src;
}

int classes_kept(const std::string& flag, const std::string& rule, int num_classes) {
    if (rule == "all") return 0;
    const int64_t k = rule.rfind("top:", 0) == 0 ? util::whole_integer(rule.substr(4)).value_or(0) : 0;
    if (k < 2 || k > num_classes)
        throw std::invalid_argument(flag + ": expected all or top:K with 2 <= K <= " + std::to_string(num_classes) +
                                    ", got '" + rule + "'");
    return static_cast<int>(k);
}

void keep_job_classes(const std::string& flag, const std::string& rule, const std::string& dataset,
                      const std::string& data_dir, data::Dataset& d) {
    const int k = classes_kept(flag, rule, d.num_classes());
    if (k == 0) return;
    // The job ranks the classes by their training images; so must we, to keep the same classes in its order.
    const data::Dataset train = data::load_dataset(dataset, data::dataset_info(dataset).train_split, data_dir);
    d = data::select_classes(d, data::most_frequent_classes(train.labels, train.num_classes(), k));
}

data::Dataset read_train_file(const std::string& path, const data::Dataset& like) {
    const auto fail = [&](const std::string& why) { return std::invalid_argument("--train-file " + path + ": " + why); };
    st::File f;
    try {
        f = st::read_file(path);
    } catch (const std::exception& e) {
        throw fail(e.what());
    }
    for (const char* key : {"images", "labels"})
        if (!f.tensors.count(key)) throw fail(std::string("no tensor '") + key + "'");
    const st::TensorRecord& img = f.tensors.at("images");
    const st::TensorRecord& lab = f.tensors.at("labels");
    const auto shape_text = [](const std::vector<int64_t>& s) {
        std::string t;
        for (int64_t d : s) t += (t.empty() ? "" : "x") + std::to_string(d);
        return t;
    };
    const std::vector<int64_t> want = {like.channels, like.height, like.width};
    if (img.dtype != st::DType::F32 || img.shape.size() != 4 || std::vector<int64_t>(img.shape.begin() + 1, img.shape.end()) != want)
        throw fail("images must be F32 [N," + shape_text(want) + "] like " + like.name + ", got " +
                   st::dtype_name(img.dtype) + " [" + shape_text(img.shape) + "]");
    if (lab.dtype != st::DType::I32 || lab.shape != std::vector<int64_t>{img.shape[0]})
        throw fail("labels must be I32 [" + std::to_string(img.shape[0]) + "], got " + st::dtype_name(lab.dtype) + " [" +
                   shape_text(lab.shape) + "]");
    if (img.shape[0] == 0) throw fail("no images");
    data::Dataset d;
    d.name = like.name.substr(0, like.name.find('/')) + "/" + std::filesystem::path(path).filename().string();
    d.source = path;
    d.channels = like.channels;
    d.height = like.height;
    d.width = like.width;
    d.class_names = like.class_names;
    d.labels = st::to_i32(lab, path + ": labels");
    for (size_t i = 0; i < d.labels.size(); ++i)
        if (d.labels[i] < 0 || d.labels[i] >= like.num_classes())
            throw fail("label " + std::to_string(d.labels[i]) + " of image " + std::to_string(i) + " is outside 0.." +
                       std::to_string(like.num_classes() - 1) + " (" + like.name + " has " +
                       std::to_string(like.num_classes()) + " classes)");
    const std::vector<float> px = st::to_f32(img, path);
    d.pixels.resize(px.size());
    for (size_t i = 0; i < px.size(); ++i) {
        if (!(px[i] >= 0.f && px[i] <= 1.f))
            throw fail("pixel " + std::to_string(i) + " is " + std::to_string(px[i]) + ", outside [0,1]");
        d.pixels[i] = static_cast<uint8_t>(std::lround(px[i] * 255.f));
    }
    d.check();
    return d;
}


JobImages load_job_images(const DataConfig& data, const std::string& data_dir, std::ostream& out) {
    JobImages images;
    images.train = std::make_shared<data::Dataset>(data::load_dataset(data.dataset, "train", data_dir));
    images.test = std::make_shared<data::Dataset>(data::load_dataset(data.dataset, "test", data_dir));
    data::Dataset& train = *images.train;
    data::Dataset& test = *images.test;
    if (!data.train_file.empty()) {
        train = read_train_file(data.train_file, train);
        out << "training images: " << train.size() << " from " << data.train_file << " (--train-file)\n";
    }
    if (data.classes != "all") {
        const std::vector<int> kept = data::most_frequent_classes(
            train.labels, train.num_classes(), classes_kept("--classes", data.classes, train.num_classes()));
        train = data::select_classes(train, kept);
        test = data::select_classes(test, kept);
        out << "classes: the " << kept.size() << " with the most training images (" << data.classes << ")\n";
    }
    // Superclasses for the final evaluation (CIFAR-100); derived now, so inconsistent labels fail before training.
    images.coarse_of = data::coarse_of_fine(test);
    images.split = make_split(train, data.val_split);
    images.train_idx = proportional_subset(images.split.train, train, data.train_n);
    images.test_idx.resize(static_cast<size_t>(data.eval_n > 0 ? std::min(data.eval_n, test.size()) : test.size()));
    std::iota(images.test_idx.begin(), images.test_idx.end(), 0);
    out << "data: " << train.name << " from " << train.source << ": training on " << images.train_idx.size()
        << " images"
        << (images.split.val.empty() ? ""
                                     : ", validation " + std::to_string(images.split.val.size()) + " (" + data.val_split + ")")
        << "; test " << images.test_idx.size() << " of " << test.size() << "\n";
    return images;
}

}  // namespace cw::train
