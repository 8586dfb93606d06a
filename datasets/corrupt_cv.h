#pragma once
// The OpenCV 4 calls of make_cifar_c.py's spatter, re-implemented to OpenCV's definitions (integer and float32
// arithmetic included): tools/make_corruption_fixtures.py --check-originals finds no difference from cv2 on the
// layers spatter makes. Images are row-major h x w planes.
#include <cstdint>
#include <vector>

namespace cw::data::corruption {

// cv2.Canny(img, low, high) with a 3x3 Sobel (border replicate) and the L1 gradient: 255 on edges, else 0.
std::vector<uint8_t> cv_canny(const std::vector<uint8_t>& img, int h, int w, int low, int high);
// cv2.distanceTransform(img, DIST_L2, 5): the 5x5 chamfer distance (1, 1.4, 2.1969) to the nearest 0 pixel.
std::vector<float> cv_distance_l2_5(const std::vector<uint8_t>& img, int h, int w);
// cv2.blur(img, (3, 3)), border reflect-101: on float32, and on uint8 (OpenCV's rounding fixed-point divide).
std::vector<float> cv_blur3(const std::vector<float>& img, int h, int w);
std::vector<uint8_t> cv_blur3(const std::vector<uint8_t>& img, int h, int w);
// cv2.equalizeHist.
std::vector<uint8_t> cv_equalize_hist(const std::vector<uint8_t>& img);
// cv2.filter2D(img, CV_8U, kernel) for an integer 3x3 kernel: the correlation, saturated to 0..255.
std::vector<uint8_t> cv_filter3_u8(const std::vector<uint8_t>& img, int h, int w, const int (&kernel)[3][3]);

}  // namespace cw::data::corruption
