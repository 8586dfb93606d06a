#include "datasets/synthetic.h"

#include <algorithm>
#include <cmath>

#include "datasets/error.h"
#include "engine/rng.h"

namespace cw::data {

namespace {

enum class Shape { Disc, VerticalBars, Triangle, Square, Ring, HorizontalBars, Frame, Cross, Checker };

struct ClassLook {
    const char* name;
    Shape shape;
    float r, g, b;      // object colour in [0, 1]
    float noise;        // per-pixel Gaussian noise
    float size_lo, size_hi;   // half-size of the shape in pixels
    int partner;        // class whose shape a share of the images borrows (-1: none)
    float borrow;       // that share
};

// The class table of the header comment: the easy classes first lie far apart in colour; 4/7, 2 and 3/5 are
// made hard on purpose.
const ClassLook kLooks[10] = {
    {"red disc", Shape::Disc, 0.85f, 0.15f, 0.15f, 0.06f, 6, 10, -1, 0},
    {"green bars", Shape::VerticalBars, 0.15f, 0.75f, 0.2f, 0.06f, 6, 10, -1, 0},
    {"grey triangle", Shape::Triangle, 0.5f, 0.48f, 0.46f, 0.16f, 6, 10, -1, 0},
    {"brown square", Shape::Square, 0.55f, 0.38f, 0.22f, 0.14f, 4, 7, 5, 0.2f},
    {"orange ring", Shape::Ring, 0.95f, 0.6f, 0.1f, 0.1f, 6, 10, -1, 0},
    {"brown disc", Shape::Disc, 0.55f, 0.38f, 0.22f, 0.14f, 4, 7, 3, 0.2f},
    {"blue stripes", Shape::HorizontalBars, 0.15f, 0.25f, 0.9f, 0.06f, 6, 10, -1, 0},
    {"orange frame", Shape::Frame, 0.95f, 0.62f, 0.12f, 0.1f, 6, 10, -1, 0},
    {"yellow cross", Shape::Cross, 0.9f, 0.9f, 0.15f, 0.06f, 6, 10, -1, 0},
    {"magenta checker", Shape::Checker, 0.8f, 0.2f, 0.8f, 0.06f, 6, 10, -1, 0},
};

// Whether the point (dx, dy) from the shape's centre lies on a shape of half-size r.
bool inside(Shape s, float dx, float dy, float r) {
    const float ax = std::fabs(dx), ay = std::fabs(dy);
    const bool in_box = ax <= r && ay <= r;
    switch (s) {
        case Shape::Disc: return dx * dx + dy * dy <= r * r;
        case Shape::Ring: {
            const float d2 = dx * dx + dy * dy;
            return d2 <= r * r && d2 >= 0.36f * r * r;
        }
        case Shape::Square: return ax <= 0.85f * r && ay <= 0.85f * r;
        case Shape::Frame: {
            const float m = std::max(ax, ay);
            return m <= 0.9f * r && m >= 0.55f * r;
        }
        case Shape::Triangle: return ay <= r && ax <= 0.5f * (dy + r);
        case Shape::Cross: return in_box && (ax <= r / 3 || ay <= r / 3);
        case Shape::VerticalBars: return in_box && static_cast<int>(std::floor((dx + r) / 2.5f)) % 2 == 0;
        case Shape::HorizontalBars: return in_box && static_cast<int>(std::floor((dy + r) / 2.5f)) % 2 == 0;
        case Shape::Checker:
            return in_box && (static_cast<int>(std::floor((dx + r) / 3)) + static_cast<int>(std::floor((dy + r) / 3))) % 2 == 0;
    }
    return false;
}

uint8_t to_byte(float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.f, 1.f) * 255.f)); }

void draw(int label, Rng& rng, uint8_t* image) {
    const ClassLook& look = kLooks[label];
    Shape shape = look.shape;
    if (look.partner >= 0 && rng.bernoulli(look.borrow)) shape = kLooks[look.partner].shape;
    const float background = rng.uniform(0.3f, 0.55f);
    const float colour[3] = {look.r + rng.normal(0, 0.04f), look.g + rng.normal(0, 0.04f), look.b + rng.normal(0, 0.04f)};
    const float r = rng.uniform(look.size_lo, look.size_hi);
    const float cx = 15.5f + rng.uniform(-5, 5), cy = 15.5f + rng.uniform(-5, 5);
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) {
            const bool on = inside(shape, x - cx, y - cy, r);
            for (int c = 0; c < 3; ++c) {
                const float v = (on ? colour[c] : background) + rng.normal(0, look.noise);
                image[(c * 32 + y) * 32 + x] = to_byte(v);
            }
        }
}

}  // namespace

std::vector<std::string> synthetic_class_names() {
    std::vector<std::string> names;
    for (const ClassLook& l : kLooks) names.push_back(l.name);
    return names;
}

Dataset load_synthetic(const std::string& split) {
    if (split != "train" && split != "test")
        throw DataError("synthetic: no split '" + split + "' (expected train or test)");
    const int64_t n = split == "train" ? kSyntheticTrainSize : kSyntheticTestSize;
    // Different seeds per split: the test images are new draws, not copies of training images.
    const uint64_t split_seed = split == "train" ? 0x5e17e71c0001ull : 0x5e17e71c0002ull;
    Dataset d;
    d.name = "synthetic/" + split;
    d.source = "synthetic (generated in memory, no files)";
    d.channels = 3;
    d.height = d.width = 32;
    d.class_names = synthetic_class_names();
    d.labels.resize(static_cast<size_t>(n));
    d.pixels.resize(static_cast<size_t>(n * d.image_bytes()));
    for (int64_t i = 0; i < n; ++i) {
        const int label = static_cast<int>(i % 10);
        Rng rng(split_seed * 1000003ull + static_cast<uint64_t>(i));
        d.labels[static_cast<size_t>(i)] = label;
        draw(label, rng, d.image(i));
    }
    d.check();
    return d;
}

}  // namespace cw::data
