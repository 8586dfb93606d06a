#pragma once
// Internal to the corruptions: each corruption's field drawer and its deterministic application, listed by the
// file that implements it. corruptions.cpp checks names, severities and shapes before calling them, so they may
// assume a severity in 1..5 and a valid image.
#include "datasets/corruptions.h"

namespace cw::data::corruption {

using DrawField = CorruptionField (*)(int severity, int channels, int height, int width, cw::Rng& rng);
using Apply = ChwImage (*)(const ChwImage& image, int severity, const CorruptionField& field);

struct Kind {
    const char* name;
    DrawField draw;  // nullptr: the corruption is deterministic
    Apply apply;
};

std::vector<Kind> noise_kinds();    // corrupt_noise.cpp: gaussian_noise, shot_noise, impulse_noise, speckle_noise
std::vector<Kind> blur_kinds();     // corrupt_blur.cpp: defocus_blur, glass_blur, motion_blur, zoom_blur,
                                    // gaussian_blur
std::vector<Kind> weather_kinds();  // corrupt_weather.cpp: snow, fog
std::vector<Kind> frost_kinds();    // corrupt_frost.cpp: frost
std::vector<Kind> spatter_kinds();  // corrupt_spatter.cpp: spatter
std::vector<Kind> digital_kinds();  // corrupt_digital.cpp: brightness, contrast, pixelate, jpeg_compression, saturate
std::vector<Kind> elastic_kinds();  // corrupt_elastic.cpp: elastic_transform

}  // namespace cw::data::corruption
