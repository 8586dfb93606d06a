// Every dataset loader on small fixtures written in the real on-disk layout, plus the data-folder rules and the
// errors for missing or corrupt files.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <stb/stb_image_write.h>

#include "datasets/class_names.h"
#include "datasets/dataset.h"
#include "datasets/error.h"
#include "datasets/loaders.h"
#include "datasets/paths.h"
#include "datasets/registry.h"
#include "tests/test_datasets_fixtures.h"

using namespace cw::data;
using namespace cw_fixtures;

namespace {

// n MNIST-style images of side `side` with pattern pixels, labels[i].
void write_idx_pair(const std::string& folder, const std::string& prefix, const std::vector<int>& labels, bool gz,
                    uint32_t side = 28) {
    const uint32_t n = static_cast<uint32_t>(labels.size());
    Bytes pixels;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t y = 0; y < side; ++y)
            for (uint32_t x = 0; x < side; ++x) pixels.push_back(pattern(i, 0, y, x));
    Bytes label_bytes(labels.begin(), labels.end());
    Bytes images = make_idx({n, side, side}, pixels);
    Bytes lab = make_idx({n}, label_bytes);
    const std::string suffix = gz ? ".gz" : "";
    write_file(folder + "/" + prefix + "-images-idx3-ubyte" + suffix, gz ? deflate_bytes(images, true) : images);
    write_file(folder + "/" + prefix + "-labels-idx1-ubyte" + suffix, gz ? deflate_bytes(lab, true) : lab);
}

std::vector<int> cyclic_labels(int n, int classes, int offset = 0) {
    std::vector<int> l(n);
    for (int i = 0; i < n; ++i) l[i] = (i + offset) % classes;
    return l;
}

}  // namespace

TEST_CASE("MNIST loader: gzipped IDX files", "[datasets]") {
    TempDir dir;
    write_idx_pair(dir / "mnist", "train", cyclic_labels(12, 10), true);
    write_idx_pair(dir / "mnist", "t10k", cyclic_labels(5, 10, 3), true);
    const Dataset train = load_mnist(dir.path(), "train");
    CHECK(train.name == "mnist/train");
    CHECK(train.size() == 12);
    CHECK(train.channels == 1);
    CHECK(train.height == 28);
    CHECK(train.width == 28);
    CHECK(train.num_classes() == 10);
    CHECK(train.labels[11] == 1);
    CHECK(train.image(7)[28 * 3 + 5] == pattern(7, 0, 3, 5));
    const Dataset test = load_mnist(dir.path(), "test");
    CHECK(test.size() == 5);
    CHECK(test.labels[0] == 3);
}

TEST_CASE("Fashion-MNIST loader: raw IDX files and class names", "[datasets]") {
    TempDir dir;
    write_idx_pair(dir / "fashion-mnist", "train", cyclic_labels(10, 10), false);
    const Dataset d = load_fashion_mnist(dir.path(), "train");
    CHECK(d.size() == 10);
    CHECK(d.class_names[9] == "Ankle boot");
    CHECK(d.source == dir / "fashion-mnist");
    CHECK(d.image(4)[28 * 27 + 27] == pattern(4, 0, 27, 27));
}

TEST_CASE("MNIST loader: corrupt files are clear errors", "[datasets]") {
    TempDir dir;
    write_idx_pair(dir / "mnist", "train", {1, 2, 10}, true);
    CHECK_THAT(data_error_of([&] { load_mnist(dir.path(), "train"); }),
               Catch::Contains("train-labels-idx1-ubyte.gz: label 10 of image 2 out of range [0, 10)"));
    write_idx_pair(dir / "mnist", "t10k", {1, 2}, false, 20);
    CHECK_THAT(data_error_of([&] { load_mnist(dir.path(), "test"); }),
               Catch::Contains("t10k-images-idx3-ubyte: expected images of shape [N, 28, 28]"));
    // Labels for a different number of images.
    TempDir dir2;
    write_idx_pair(dir2 / "mnist", "train", {1, 2, 3}, false);
    write_file(dir2 / "mnist/train-labels-idx1-ubyte", make_idx({2}, {1, 2}));
    CHECK_THAT(data_error_of([&] { load_mnist(dir2.path(), "train"); }), Catch::Contains("2 labels for 3 images"));
    // A truncated gzip file.
    TempDir dir3;
    write_idx_pair(dir3 / "mnist", "train", {1, 2, 3}, true);
    Bytes gz = deflate_bytes(make_idx({3, 28, 28}, Bytes(3 * 784, 1)), true);
    gz.resize(gz.size() / 2);
    write_file(dir3 / "mnist/train-images-idx3-ubyte.gz", gz);
    CHECK_THAT(data_error_of([&] { load_mnist(dir3.path(), "train"); }), Catch::Contains("truncated gzip"));
    CHECK_THAT(data_error_of([&] { load_mnist(dir.path(), "validation"); }), Catch::Contains("unknown split"));
}

TEST_CASE("Missing datasets list the paths tried and how to get them", "[datasets]") {
    TempDir dir;
    const std::string msg = data_error_of([&] { load_cifar10(dir.path(), "train"); });
    CHECK_THAT(msg, Catch::StartsWith("cifar10: data_batch_1.bin not found (tried: "));
    CHECK_THAT(msg, Catch::Contains(dir / "cifar-10-batches-bin/data_batch_1.bin"));
    CHECK_THAT(msg, Catch::Contains("make data DATASET=cifar10"));
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THAT(data_error_of([&] { load_svhn(dir.path(), "test"); }), Catch::Contains("make data DATASET=svhn"));
    CHECK_THAT(data_error_of([&] { load_gtsrb32(dir.path(), "test"); }), Catch::Contains("make data DATASET=gtsrb)"));
    CHECK_THAT(data_error_of([&] { load_dataset("cifar100-coarse", "train", dir.path()); }),
               Catch::Contains("make data DATASET=cifar100"));
    CHECK_THAT(data_error_of([&] { load_tiny_imagenet(dir.path(), "train"); }), Catch::Contains("wnids.txt"));
    CHECK_THAT(data_error_of([&] { load_cifar10c(dir.path(), "fog", 1); }), Catch::Contains("fog.npy not found"));
    CHECK_THAT(data_error_of([&] { load_gtsrb(dir.path(), "test"); }), Catch::Contains("GT-final_test.csv"));
    CHECK_THAT(data_error_of([&] { load_mnist(dir.path(), "train"); }), Catch::Contains("make data DATASET=mnist;"));
}

TEST_CASE("Data folder: --data-dir, then CLASSWISE_DATA, then ./data", "[datasets]") {
    const char* old = std::getenv("CLASSWISE_DATA");
    const std::string saved = old ? old : "";
    ::unsetenv("CLASSWISE_DATA");
    CHECK(resolve_data_dir("") == "./data");
    ::setenv("CLASSWISE_DATA", "/from/env", 1);
    CHECK(resolve_data_dir("") == "/from/env");
    CHECK(resolve_data_dir("/from/flag") == "/from/flag");
    if (old) ::setenv("CLASSWISE_DATA", saved.c_str(), 1);
    else ::unsetenv("CLASSWISE_DATA");
}

TEST_CASE("CIFAR-10 loader: five training batches in order, either test file name", "[datasets]") {
    TempDir dir;
    for (int b = 1; b <= 5; ++b)
        write_file(dir / ("cifar-10-batches-bin/data_batch_" + std::to_string(b) + ".bin"),
                   make_cifar_records({cyclic_labels(4, 10, b)}, (b - 1) * 4));
    write_file(dir / "cifar-10-batches-bin/test.bin", make_cifar_records({cyclic_labels(20, 10)}, 100));
    const Dataset train = load_cifar10(dir.path(), "train");
    REQUIRE(train.size() == 20);
    CHECK(train.labels[13] == (1 + 4) % 10);  // batch 4, record 1
    CHECK(train.image(13)[1024 * 2 + 32 * 31 + 30] == pattern(13, 2, 31, 30));
    CHECK(train.class_names[0] == "airplane");
    const Dataset test = load_cifar10(dir.path(), "test");
    CHECK(test.size() == 20);
    CHECK(test.image(19)[0] == pattern(119, 0, 0, 0));

    TempDir official;
    write_file(official / "cifar-10-batches-bin/test_batch.bin", make_cifar_records({{1, 2}}));
    CHECK(load_cifar10(official.path(), "test").size() == 2);

    std::filesystem::remove(dir / "cifar-10-batches-bin/data_batch_3.bin");
    CHECK_THAT(data_error_of([&] { load_cifar10(dir.path(), "train"); }), Catch::Contains("data_batch_3.bin"));
    write_file(dir / "cifar-10-batches-bin/test.bin", make_cifar_records({{1, 10}}));
    CHECK_THAT(data_error_of([&] { load_cifar10(dir.path(), "test"); }), Catch::Contains("label 10 out of range"));
}

TEST_CASE("CIFAR-100 loader: fine labels with coarse labels alongside", "[datasets]") {
    TempDir dir;
    write_file(dir / "cifar-100-binary/train.bin", make_cifar_records({{4, 1, 19}, {0, 99, 50}}));
    const Dataset d = load_cifar100(dir.path(), "train");
    CHECK(d.num_classes() == 100);
    CHECK(d.labels == std::vector<int32_t>{0, 99, 50});
    CHECK(d.coarse_labels == std::vector<int32_t>{4, 1, 19});
    CHECK(d.class_names[99] == "worm");
    CHECK(cifar100_fine_class_names().size() == 100);
    CHECK(cifar100_coarse_class_names().size() == 20);
    const Dataset coarse = load_dataset("cifar100-coarse", "train", dir.path());
    CHECK(coarse.num_classes() == 20);
    CHECK(coarse.labels == std::vector<int32_t>{4, 1, 19});
    CHECK(coarse.class_names[19] == "vehicles_2");
}

TEST_CASE("SVHN loader: MAT v5 files, compressed or not, column-major X, label 10 is digit 0", "[datasets]") {
    const int n = 3;
    Bytes x(size_t(n) * 3072);
    for (int i = 0; i < n; ++i)
        for (int ch = 0; ch < 3; ++ch)
            for (int c = 0; c < 32; ++c)
                for (int r = 0; r < 32; ++r) x[r + 32 * c + 1024 * ch + 3072 * i] = pattern(i, ch, r, c);
    const std::vector<MatVar> vars{{"X", 9, {32, 32, 3, n}, 2, x}, {"y", 6, {n, 1}, 9, doubles({10, 1, 7})}};
    TempDir dir;
    write_file(dir / "svhn/train_32x32.mat", make_mat(vars, true));
    write_file(dir / "svhn/test_32x32.mat", make_mat(vars, false));
    for (const char* split : {"train", "test"}) {
        const Dataset d = load_svhn(dir.path(), split);
        REQUIRE(d.size() == n);
        CHECK(d.labels == std::vector<int32_t>{0, 1, 7});
        for (int i = 0; i < n; ++i) {
            CHECK(d.image(i)[0 * 1024 + 2 * 32 + 9] == pattern(i, 0, 2, 9));   // row 2, column 9
            CHECK(d.image(i)[2 * 1024 + 31 * 32 + 0] == pattern(i, 2, 31, 0));
        }
    }
    write_file(dir / "svhn/test_32x32.mat",
               make_mat({vars[0], {"y", 6, {n, 1}, 9, doubles({10, 11, 7})}}, false));
    CHECK_THAT(data_error_of([&] { load_svhn(dir.path(), "test"); }),
               Catch::Contains("label 11 of image 1 out of range [1, 10]"));
    write_file(dir / "svhn/test_32x32.mat", make_mat({{"X", 9, {28, 28, 3, 1}, 2, Bytes(28 * 28 * 3)}, vars[1]}, false));
    CHECK_THAT(data_error_of([&] { load_svhn(dir.path(), "test"); }), Catch::Contains("expected [32, 32, 3, N]"));
    write_file(dir / "svhn/test_32x32.mat", Bytes(200, 'x'));
    CHECK_THAT(data_error_of([&] { load_svhn(dir.path(), "test"); }), Catch::Contains("not a MAT v5 file"));
}

namespace {
// A w x h PPM whose ROI [x1..x2] x [y1..y2] is a horizontal ramp 100 + 10 * (x - x1) in channel `ch`, zero elsewhere.
Bytes roi_ppm(int w, int h, int x1, int y1, int x2, int y2, int ch) {
    Bytes rgb(size_t(w) * h * 3, 0);
    for (int y = y1; y <= y2; ++y)
        for (int x = x1; x <= x2; ++x) rgb[(size_t(y) * w + x) * 3 + ch] = static_cast<uint8_t>(100 + 10 * (x - x1));
    return make_ppm(w, h, rgb);
}
const char* kGtHeader = "Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId\n";
}  // namespace

TEST_CASE("GTSRB official loader: ROI crop (inclusive) and resize to 32x32", "[datasets]") {
    TempDir dir;
    const std::string train = dir / "GTSRB/Final_Training/Images";
    for (int c = 0; c < 43; ++c) {
        char folder[16];
        std::snprintf(folder, sizeof folder, "%05d", c);
        std::string csv = kGtHeader;
        if (c < 3) {
            const std::string file = "00000_0000" + std::to_string(c) + ".ppm";
            write_file(train + "/" + folder + "/" + file, roi_ppm(12, 10, 2, 1, 9, 8, c));
            csv += file + ";12;10;2;1;9;8;" + std::to_string(c) + "\n";
        }
        write_text(train + "/" + folder + "/GT-" + folder + ".csv", csv);
    }
    const Dataset d = load_gtsrb(dir.path(), "train");
    REQUIRE(d.size() == 3);
    CHECK(d.labels == std::vector<int32_t>{0, 1, 2});
    CHECK(d.height == 32);
    CHECK(d.class_names[14] == "Stop");
    for (int i = 0; i < 3; ++i) {
        const uint8_t* img = d.image(i);
        for (int y : {0, 16, 31}) {
            // Left edge = ROI column x1 (100), right edge = column x2 (170): the ROI is inclusive and no border leaks.
            CHECK(std::abs(int(img[i * 1024 + y * 32 + 0]) - 100) <= 3);
            CHECK(std::abs(int(img[i * 1024 + y * 32 + 31]) - 170) <= 3);
            CHECK(int(img[((i + 1) % 3) * 1024 + y * 32 + 16]) == 0);
        }
    }
    const Dataset whole = load_gtsrb(dir.path(), "train", GtsrbOptions{16, false});
    CHECK(whole.height == 16);
    CHECK(int(whole.image(0)[0]) <= 3);  // the black border is kept without the crop

    // Test split: images in Final_Test/Images, ground truth next to them.
    const std::string test = dir / "GTSRB/Final_Test/Images";
    write_file(test + "/00000.ppm", roi_ppm(12, 10, 2, 1, 9, 8, 0));
    write_file(test + "/00001.ppm", roi_ppm(12, 10, 2, 1, 9, 8, 1));
    write_text(test + "/GT-final_test.csv",
               std::string(kGtHeader) + "00000.ppm;12;10;2;1;9;8;38\r\n00001.ppm;12;10;2;1;9;8;14\r\n");
    const Dataset t = load_gtsrb(dir.path(), "test");
    CHECK(t.labels == std::vector<int32_t>{38, 14});

    write_text(test + "/GT-final_test.csv", std::string(kGtHeader) + "00000.ppm;13;10;2;1;9;8;38\n");
    CHECK_THAT(data_error_of([&] { load_gtsrb(dir.path(), "test"); }),
               Catch::Contains("00000.ppm: image is 12x10, its ground truth says 13x10"));
    write_text(test + "/GT-final_test.csv", std::string(kGtHeader) + "00000.ppm;12;10;2;1;12;8;38\n");
    CHECK_THAT(data_error_of([&] { load_gtsrb(dir.path(), "test"); }), Catch::Contains("not inside"));
    write_text(test + "/GT-final_test.csv", std::string(kGtHeader) + "00000.ppm;12;10;2;1;9;8;43\n");
    CHECK_THAT(data_error_of([&] { load_gtsrb(dir.path(), "test"); }), Catch::Contains("ClassId 43 out of range"));
    write_text(test + "/GT-final_test.csv", "Filename;Width\n00000.ppm;12\n");
    CHECK_THAT(data_error_of([&] { load_gtsrb(dir.path(), "test"); }), Catch::Contains("no column 'Height'"));
    write_text(test + "/GT-final_test.csv", std::string(kGtHeader) + "00009.ppm;12;10;2;1;9;8;1\n");
    CHECK_THAT(data_error_of([&] { load_gtsrb(dir.path(), "test"); }), Catch::Contains("00009.ppm: file not found"));
}

TEST_CASE("GTSRB-32 record files: train falls back to train_half", "[datasets]") {
    TempDir dir;
    write_file(dir / "gtsrb32/train_half.bin", make_cifar_records({{0, 42, 7}}));
    write_file(dir / "gtsrb32/test.bin", make_cifar_records({{42}}));
    const Dataset d = load_gtsrb32(dir.path(), "train");
    CHECK(d.name == "gtsrb32/train_half");
    CHECK(d.labels == std::vector<int32_t>{0, 42, 7});
    CHECK(d.num_classes() == 43);
    CHECK(load_dataset("gtsrb32", "test", dir.path()).size() == 1);
    write_file(dir / "gtsrb32/train.bin", make_cifar_records({{3}}));
    CHECK(load_gtsrb32(dir.path(), "train").name == "gtsrb32/train");
    CHECK(load_gtsrb32(dir.path(), "train_half").size() == 3);
    write_file(dir / "gtsrb32/test.bin", make_cifar_records({{43}}));
    CHECK_THAT(data_error_of([&] { load_gtsrb32(dir.path(), "test"); }), Catch::Contains("label 43 out of range [0, 43)"));
}

namespace {
Bytes solid_jpeg(int w, int h, int comp, uint8_t r, uint8_t g, uint8_t b) {
    std::vector<uint8_t> px(size_t(w) * h * comp);
    for (size_t p = 0; p < size_t(w) * h; ++p) {
        px[p * comp] = r;
        if (comp == 3) {
            px[p * 3 + 1] = g;
            px[p * 3 + 2] = b;
        }
    }
    Bytes out;
    stbi_write_jpg_to_func(
        [](void* ctx, void* data, int size) {
            auto* o = static_cast<Bytes*>(ctx);
            o->insert(o->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
        },
        &out, w, h, comp, px.data(), 95);
    return out;
}
}  // namespace

TEST_CASE("TinyImageNet loader: sorted wnids, words.txt names, train and val JPEGs", "[datasets]") {
    TempDir dir;
    const std::string root = dir / "tiny-imagenet-200";
    write_text(root + "/wnids.txt", "n02000002\nn01000001\n");
    write_text(root + "/words.txt", "n01000001\tgoldfish, Carassius auratus\nn02000002\tbullfrog\nn09\tother\n");
    for (int k = 0; k < 2; ++k) {
        write_file(root + "/train/n01000001/images/n01000001_" + std::to_string(k) + ".JPEG",
                   solid_jpeg(64, 64, 3, 200, 20, 20));
        write_file(root + "/train/n02000002/images/n02000002_" + std::to_string(k) + ".JPEG",
                   solid_jpeg(64, 64, 1, 90, 0, 0));  // grayscale, expanded to RGB
    }
    write_text(root + "/train/n01000001/n01000001_boxes.txt", "ignored\n");
    write_file(root + "/val/images/val_0.JPEG", solid_jpeg(64, 64, 3, 20, 20, 200));
    write_file(root + "/val/images/val_1.JPEG", solid_jpeg(64, 64, 3, 20, 200, 20));
    write_text(root + "/val/val_annotations.txt", "val_0.JPEG\tn02000002\t0\t0\t63\t63\nval_1.JPEG\tn01000001\t1\t2\t3\t4\n");

    const Dataset train = load_tiny_imagenet(dir.path(), "train");
    REQUIRE(train.size() == 4);
    CHECK(train.class_names == std::vector<std::string>{"goldfish", "bullfrog"});
    CHECK(train.labels == std::vector<int32_t>{0, 0, 1, 1});
    CHECK(train.height == 64);
    CHECK(std::abs(int(train.image(0)[0]) - 200) <= 4);            // red plane of a red image
    CHECK(std::abs(int(train.image(3)[2 * 4096 + 100]) - 90) <= 4);  // gray image: all planes equal
    const Dataset val = load_tiny_imagenet(dir.path(), "val");
    CHECK(val.labels == std::vector<int32_t>{1, 0});
    CHECK(std::abs(int(val.image(0)[2 * 4096]) - 200) <= 4);
    CHECK(dataset_class_names("tinyimagenet", dir.path())[0] == "goldfish");

    write_file(root + "/val/images/val_1.JPEG", solid_jpeg(32, 32, 3, 1, 2, 3));
    CHECK_THAT(data_error_of([&] { load_tiny_imagenet(dir.path(), "val"); }),
               Catch::Contains("val_1.JPEG: image is 32x32, expected 64x64"));
    write_text(root + "/val/val_annotations.txt", "val_0.JPEG\tn07777777\t0\t0\t63\t63\n");
    CHECK_THAT(data_error_of([&] { load_tiny_imagenet(dir.path(), "val"); }), Catch::Contains("not a wnid"));
}

TEST_CASE("CIFAR-10-C loader: one severity block of an NHWC .npy", "[datasets]") {
    TempDir dir;
    const int per = 2, total = 5 * per;
    Bytes nhwc(size_t(total) * 3072);
    for (int i = 0; i < total; ++i)
        for (int p = 0; p < 1024; ++p)
            for (int c = 0; c < 3; ++c) nhwc[size_t(i) * 3072 + p * 3 + c] = pattern(i, c, p / 32, p % 32);
    Bytes labels(total * 8, 0);
    for (int i = 0; i < total; ++i) labels[i * 8] = static_cast<uint8_t>(i % 10);
    write_file(dir / "CIFAR-10-C/fog.npy", make_npy("|u1", {total, 32, 32, 3}, nhwc));
    write_file(dir / "CIFAR-10-C/labels.npy", make_npy("<i8", {total}, labels));
    const Dataset d = load_cifar10c(dir.path(), "fog", 3);
    CHECK(d.name == "cifar10c/fog/3");
    REQUIRE(d.size() == per);
    CHECK(d.labels == std::vector<int32_t>{4, 5});
    CHECK(d.image(1)[1 * 1024 + 5 * 32 + 6] == pattern(5, 1, 5, 6));
    CHECK(load_dataset("cifar10c", "fog:5", dir.path()).labels == std::vector<int32_t>{8, 9});
    CHECK_THAT(data_error_of([&] { load_dataset("cifar10c", "fog", dir.path()); }), Catch::Contains("<corruption>:<severity>"));
    CHECK_THAT(data_error_of([&] { load_cifar10c(dir.path(), "fog", 6); }), Catch::Contains("severity 6"));
    CHECK_THAT(data_error_of([&] { load_cifar10c(dir.path(), "rain", 1); }), Catch::Contains("unknown corruption"));
    write_file(dir / "CIFAR-10-C/snow.npy", make_npy("|u1", {total, 32, 32, 3}, Bytes(nhwc.begin(), nhwc.end() - 1)));
    CHECK_THAT(data_error_of([&] { load_cifar10c(dir.path(), "snow", 1); }), Catch::Contains("snow.npy: truncated"));
    write_file(dir / "CIFAR-10-C/frost.npy", make_npy("<f4", {total, 32, 32, 3}, Bytes(size_t(total) * 3072 * 4)));
    CHECK_THAT(data_error_of([&] { load_cifar10c(dir.path(), "frost", 1); }), Catch::Contains("expected uint8 images"));
    write_file(dir / "CIFAR-10-C/labels.npy", make_npy("<i8", {total - 1}, Bytes((total - 1) * 8)));
    CHECK_THAT(data_error_of([&] { load_cifar10c(dir.path(), "fog", 1); }), Catch::Contains("labels.npy: expected 10 labels"));
}

TEST_CASE("Registry: names, info and class names", "[datasets]") {
    CHECK(dataset_info("cifar10").num_classes == 10);
    CHECK(dataset_info("tinyimagenet").height == 64);
    CHECK_THAT(data_error_of([] { dataset_info("imagenet"); }), Catch::Contains("known: mnist, fashion-mnist"));
    CHECK(dataset_class_names("gtsrb32").size() == 43);
    CHECK(dataset_class_names("svhn")[0] == "0");
    CHECK(dataset_class_names("cifar100-coarse").size() == 20);
    for (const auto& info : dataset_catalog())
        if (info.name != "tinyimagenet") CHECK(int(dataset_class_names(info.name).size()) == info.num_classes);
}

TEST_CASE("Dataset helpers: check, select_classes, take", "[datasets]") {
    Dataset d;
    d.name = "toy";
    d.channels = 1;
    d.height = d.width = 2;
    d.class_names = {"a", "b", "c"};
    d.labels = {0, 2, 1, 2};
    for (int i = 0; i < 4; ++i)
        for (int p = 0; p < 4; ++p) d.pixels.push_back(static_cast<uint8_t>(10 * i + p));
    d.check();
    CHECK(d.class_counts() == std::vector<int64_t>{1, 1, 2});
    std::vector<int64_t> original;
    const Dataset s = select_classes(d, {2, 0}, &original);
    CHECK(s.class_names == std::vector<std::string>{"c", "a"});
    CHECK(s.labels == std::vector<int32_t>{1, 0, 0});
    CHECK(original == std::vector<int64_t>{0, 1, 3});
    CHECK(s.image(2)[0] == 30);
    const Dataset t = take(d, {3, 0});
    CHECK(t.labels == std::vector<int32_t>{2, 0});
    CHECK(t.image(0)[1] == 31);
    d.labels[1] = 3;
    CHECK_THAT(data_error_of([&] { d.check(); }), Catch::Contains("label 3 out of range"));
    d.labels[1] = 2;
    d.pixels.pop_back();
    CHECK_THAT(data_error_of([&] { d.check(); }), Catch::Contains("pixel bytes"));
}
