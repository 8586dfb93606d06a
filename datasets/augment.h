#pragma once
// Training-time augmentation on uint8 CHW images: random crop after padding and horizontal flip. Randomness comes
// only from the Rng passed in, drawn in a fixed order per image (crop offsets, then flip), so a seed reproduces
// every augmented batch.
#include <cstdint>
#include <string>

#include "engine/rng.h"

namespace cw::data {

enum class PadMode {
    Reflect,  // mirror without repeating the edge pixel (PyTorch 'reflect'); Rice / CFA / FAIR-TAT
    Zeros     // black border (torchvision RandomCrop default); TRADES / FRL / FAT
};

struct Augmentation {
    bool random_crop = false;
    int padding = 4;
    PadMode pad_mode = PadMode::Reflect;
    bool horizontal_flip = false;
    float flip_probability = 0.5f;

    bool enabled() const { return random_crop || horizontal_flip; }
    std::string describe() const;  // "crop(pad 4, reflect)+flip(0.5)" or "none"
};

// Per-dataset defaults (docs/protocols/training.md §1.2): crop + flip for natural images (CIFAR-10/100, TinyImageNet);
// crop only for SVHN (a mirrored digit is another digit); none for MNIST, Fashion-MNIST and GTSRB (signs are
// not mirror-symmetric, and the reference recipes use none).
Augmentation default_augmentation(const std::string& dataset);

// From flag values: `spec` is "default" (the dataset's default), "none", "crop", "flip" or "crop+flip";
// `pad_mode` is "reflect" or "zeros" ("" keeps reflect). Throws cw::data::DataError naming the bad value.
Augmentation parse_augmentation(const std::string& spec, const std::string& pad_mode, const std::string& dataset);
PadMode parse_pad_mode(const std::string& value);

// Writes into dst the crop of the padded image at offset (oy, ox), each in [0, 2 * padding].
// (oy, ox) = (padding, padding) reproduces the input.
void crop_padded(const uint8_t* src, uint8_t* dst, int channels, int height, int width, int padding, PadMode mode,
                 int oy, int ox);
void flip_horizontal(const uint8_t* src, uint8_t* dst, int channels, int height, int width);

// One training view of a CHW image; src and dst must not overlap. With no augmentation enabled it copies.
void augment_image(const uint8_t* src, uint8_t* dst, int channels, int height, int width, const Augmentation& aug,
                   cw::Rng& rng);

}  // namespace cw::data
