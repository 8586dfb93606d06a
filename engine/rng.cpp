#include "engine/rng.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace cw {

namespace {
uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

void Rng::reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
    has_cached_normal_ = false;
}

uint64_t Rng::next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

float Rng::uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }

float Rng::uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

float Rng::normal() {
    if (has_cached_normal_) {
        has_cached_normal_ = false;
        return cached_normal_;
    }
    // u1 in (0,1] so log(u1) is finite.
    const double u1 = (static_cast<double>(next_u64() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    const double u2 = static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
    const double r = std::sqrt(-2.0 * std::log(u1));
    cached_normal_ = static_cast<float>(r * std::sin(2.0 * M_PI * u2));
    has_cached_normal_ = true;
    return static_cast<float>(r * std::cos(2.0 * M_PI * u2));
}

uint64_t Rng::below(uint64_t n) {
    if (n == 0) throw std::invalid_argument("Rng::below: n must be positive");
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // rejection removes modulo bias
    uint64_t r;
    do r = next_u64(); while (r >= limit);
    return r % n;
}

int Rng::categorical(const float* weights, int n) {
    double total = 0;
    for (int i = 0; i < n; ++i) {
        if (!(weights[i] >= 0)) throw std::invalid_argument("Rng::categorical: weights must be non-negative and finite");
        total += weights[i];
    }
    if (!(total > 0)) throw std::invalid_argument("Rng::categorical: weights sum to zero");
    double u = (static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0)) * total;
    for (int i = 0; i < n; ++i) {
        if (u < weights[i]) return i;
        u -= weights[i];
    }
    for (int i = n - 1; i >= 0; --i) if (weights[i] > 0) return i;  // rounding at the top end
    return n - 1;
}

void Rng::fill_uniform(float* out, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; ++i) out[i] = uniform(lo, hi);
}

void Rng::fill_normal(float* out, size_t n, float mean, float stddev) {
    for (size_t i = 0; i < n; ++i) out[i] = normal(mean, stddev);
}

std::vector<int64_t> Rng::permutation(int64_t n) {
    std::vector<int64_t> p(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) p[i] = i;
    shuffle(p);
    return p;
}

Rng Rng::fork() {
    Rng child(0);
    uint64_t x = next_u64();
    for (auto& w : child.s_) w = splitmix64(x);
    return child;
}

std::vector<uint64_t> Rng::state() const {
    uint32_t cached_bits;
    static_assert(sizeof(cached_bits) == sizeof(cached_normal_));
    std::memcpy(&cached_bits, &cached_normal_, sizeof cached_bits);
    return {s_[0], s_[1], s_[2], s_[3], has_cached_normal_ ? 1ULL : 0ULL, cached_bits};
}

void Rng::set_state(const std::vector<uint64_t>& st) {
    if (st.size() != 6) throw std::invalid_argument("Rng::set_state: expected 6 words, got " + std::to_string(st.size()));
    for (int i = 0; i < 4; ++i) s_[i] = st[i];
    has_cached_normal_ = st[4] != 0;
    const auto cached_bits = static_cast<uint32_t>(st[5]);
    std::memcpy(&cached_normal_, &cached_bits, sizeof cached_bits);
}

Rng& global_rng() {
    static Rng rng(0);
    return rng;
}

void manual_seed(uint64_t seed) { global_rng().reseed(seed); }

}  // namespace cw
