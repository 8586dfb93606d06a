// make_cifar_c.py's plasma_fractal: a diamond-square height map on a wrapping n x n grid. Each step sets the
// centre of every square to the mean of its corners plus noise, then the centre of every diamond the same way;
// the noise shrinks by `wibble_decay` per step. fog adds it to the image; our frost texture uses it for haze.
#include <algorithm>

#include "datasets/corrupt_filters.h"

namespace cw::data::corruption {

int plasma_size(int height, int width) {
    int n = 2;  // at least one diamond-square step, so that even a 1x1 image gets a map with a range
    while (n < std::max(height, width)) n *= 2;
    return n;
}

size_t plasma_draws(int n) {
    size_t total = 0;
    for (int step = n; step >= 2; step /= 2) total += 3 * size_t(n / step) * size_t(n / step);
    return total;
}

Plane plasma_fractal(int n, double wibble_decay, const std::vector<float>& uniforms) {
    Plane m(n, n);
    double wibble = 100.0;
    size_t used = 0;
    auto wrap = [n](int i) { return (i % n + n) % n; };
    // The script's wibbledmean: a quarter of the four-neighbour sum plus wibble * uniform(-wibble, wibble).
    auto wibbled = [&](double sum) {
        const double u = uniforms[used++];
        return sum / 4 + wibble * (-wibble + (2 * wibble) * u);
    };
    for (int step = n; step >= 2; step /= 2) {
        const int half = step / 2, cells = n / step;
        for (int i = 0; i < cells; ++i)
            for (int j = 0; j < cells; ++j) {
                const int y = i * step, x = j * step;
                const double sum = (m.at(y, x) + m.at(wrap(y + step), x)) +
                                   (m.at(y, wrap(x + step)) + m.at(wrap(y + step), wrap(x + step)));
                m.at(y + half, x + half) = wibbled(sum);
            }
        // Diamonds on the square rows (between left and right corners, above and below centres), then on the
        // square columns; all of the first grid is drawn before any of the second, as the script's arrays are.
        for (int i = 0; i < cells; ++i)
            for (int j = 0; j < cells; ++j) {
                const int y = i * step, x = j * step + half;
                const double sum = (m.at(y + half, x) + m.at(wrap(y - half), x)) +
                                   (m.at(y, x - half) + m.at(y, wrap(x + half)));
                m.at(y, x) = wibbled(sum);
            }
        for (int i = 0; i < cells; ++i)
            for (int j = 0; j < cells; ++j) {
                const int y = i * step + half, x = j * step;
                const double sum = (m.at(y, x + half) + m.at(y, wrap(x - half))) +
                                   (m.at(y - half, x) + m.at(wrap(y + half), x));
                m.at(y, x) = wibbled(sum);
            }
        wibble /= wibble_decay;
    }
    const auto [lo, hi] = std::minmax_element(m.v.begin(), m.v.end());
    const double low = *lo, range = *hi - *lo;
    for (double& v : m.v) v = range > 0 ? (v - low) / range : 0.0;
    return m;
}

}  // namespace cw::data::corruption
