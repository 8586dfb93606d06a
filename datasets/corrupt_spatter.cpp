// spatter: a blurred, thresholded noise layer, drawn as water (severities 1-3: the layer shaded by the distance
// to its own edges, pale turquoise) or as mud (4-5: a soft brown mask). make_cifar_c.py's constants; its OpenCV
// calls are corrupt_cv.h's.
#include <algorithm>
#include <cmath>

#include "datasets/corrupt_cv.h"
#include "datasets/corrupt_filters.h"
#include "datasets/corrupt_kinds.h"

namespace cw::data::corruption {

namespace {

struct Spatter {
    double loc, scale, sigma, threshold, amount;
    bool mud;
};
constexpr Spatter kSpatter[5] = {{0.62, 0.1, 0.7, 0.7, 0.5, false},
                                 {0.65, 0.1, 0.8, 0.7, 0.5, false},
                                 {0.65, 0.3, 1, 0.69, 0.5, false},
                                 {0.65, 0.1, 0.7, 0.69, 0.6, true},
                                 {0.65, 0.1, 0.5, 0.68, 0.6, true}};
// Colours in the channel order of the script's arrays, which is the image's (RGB) order.
constexpr double kWater[3] = {175 / 255.0, 238 / 255.0, 238 / 255.0};
constexpr double kMud[3] = {63 / 255.0, 42 / 255.0, 20 / 255.0};

CorruptionField spatter_field(int, int, int h, int w, cw::Rng& rng) {
    CorruptionField f;
    auto& z = f.arrays["normal"];
    z.resize(size_t(h) * w);
    rng.fill_normal(z.data(), z.size(), 0.f, 1.f);
    return f;
}

// The water's strength per pixel: the layer (as uint8) times an embossed, equalised distance to its edges,
// scaled so the strongest pixel gets `amount`.
Plane water_mask(const Plane& liquid, double amount) {
    const int h = liquid.h, w = liquid.w;
    std::vector<uint8_t> layer(liquid.v.size());
    for (size_t i = 0; i < layer.size(); ++i) layer[i] = static_cast<uint8_t>(std::floor(liquid.v[i] * 255));
    std::vector<uint8_t> not_edge = cv_canny(layer, h, w, 50, 150);
    for (uint8_t& v : not_edge) v = 255 - v;
    std::vector<float> dist = cv_distance_l2_5(not_edge, h, w);
    for (float& v : dist) v = std::min(v, 20.f);  // cv2.threshold(..., 20, 20, THRESH_TRUNC)
    dist = cv_blur3(dist, h, w);
    std::vector<uint8_t> d8(dist.size());
    for (size_t i = 0; i < d8.size(); ++i) d8[i] = static_cast<uint8_t>(dist[i]);  // astype(np.uint8)
    d8 = cv_equalize_hist(d8);
    const int emboss[3][3] = {{-2, -1, 0}, {-1, 1, 1}, {0, 1, 2}};
    d8 = cv_blur3(cv_filter3_u8(d8, h, w, emboss), h, w);
    std::vector<float> m(d8.size());
    for (size_t i = 0; i < m.size(); ++i) m[i] = float(layer[i]) * float(d8[i]);
    const float top = *std::max_element(m.begin(), m.end());
    Plane mask(h, w);
    // The script divides by the maximum unguarded (0/0 when no water survives); we leave the image as it is then.
    if (top > 0)
        for (size_t i = 0; i < m.size(); ++i) mask.v[i] = m[i] / top * static_cast<float>(amount);
    return mask;
}

// The mud's opacity: the layer's footprint blurred (float32, as skimage keeps a float32 input), kept where >= 0.8.
Plane mud_mask(const Plane& liquid, double threshold, double sigma) {
    Plane m(liquid.h, liquid.w);
    for (size_t i = 0; i < m.v.size(); ++i) m.v[i] = liquid.v[i] > threshold ? 1.0 : 0.0;
    m = gaussian_filter(m, sigma, Border::Nearest, 4.0, true);
    for (double& v : m.v)
        if (float(v) < 0.8f) v = 0;
    return m;
}

ChwImage spatter(const ChwImage& x, int s, const CorruptionField& f) {
    const Spatter& c = kSpatter[s - 1];
    const int h = x.height, w = x.width;
    const auto& z = f.get("spatter", "normal", size_t(h) * w);
    Plane liquid(h, w);
    for (size_t i = 0; i < liquid.v.size(); ++i) liquid.v[i] = c.loc + c.scale * double(z[i]);
    liquid = gaussian_filter(liquid, c.sigma, Border::Nearest);
    for (double& v : liquid.v)
        if (v < c.threshold) v = 0;
    const double* rgb = c.mud ? kMud : kWater;
    std::vector<double> colour(x.channels);
    for (int ch = 0; ch < x.channels; ++ch)  // an image that is not RGB gets the colour's gray in every channel
        colour[ch] = x.channels == 3 ? rgb[ch] : rgb[0] * kLuma[0] + rgb[1] * kLuma[1] + rgb[2] * kLuma[2];
    const Plane m = c.mud ? mud_mask(liquid, c.threshold, c.amount) : water_mask(liquid, c.amount);
    std::vector<Plane> planes = planes_of(x);
    for (int ch = 0; ch < x.channels; ++ch)
        for (size_t i = 0; i < m.v.size(); ++i) {
            double& v = planes[ch].v[i];
            v = c.mud ? v * (1 - m.v[i]) + colour[ch] * m.v[i] : v + m.v[i] * colour[ch];
        }
    return image_of(planes);
}

}  // namespace

std::vector<Kind> spatter_kinds() { return {{"spatter", spatter_field, spatter}}; }

}  // namespace cw::data::corruption
