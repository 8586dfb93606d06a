#pragma once
// A JPEG round trip through libjpeg (Debian's libjpeg62-turbo, the library PIL links): encoded with PIL's
// save(quality=q) defaults — baseline, libjpeg's islow DCT, YCbCr with 4:2:0 chroma subsampling for colour, one
// component for gray — and decoded with PIL's defaults (islow IDCT, fancy upsampling).
#include <cstdint>
#include <vector>

namespace cw::data {

// `pixels`: height x width x channels interleaved, channels 1 (gray) or 3 (RGB). Returns the decoded pixels in
// the same layout. Throws DataError with libjpeg's message if the library fails.
std::vector<uint8_t> jpeg_roundtrip(const std::vector<uint8_t>& pixels, int width, int height, int channels,
                                    int quality);

}  // namespace cw::data
