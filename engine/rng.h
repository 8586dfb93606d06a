#pragma once
// The engine's one source of randomness. Every stochastic step (init, shuffles, augmentation, dropout masks,
// random starts) draws from an Rng seeded from --seed, so the same seed reproduces a run bit for bit.
// Draws happen on the host; device backends receive the drawn values, so CPU and GPU runs see the same noise.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cw {

class Rng {
public:
    explicit Rng(uint64_t seed = 0) { reseed(seed); }
    void reseed(uint64_t seed);

    uint64_t next_u64();                       // xoshiro256** step
    float uniform();                           // [0, 1)
    float uniform(float lo, float hi);         // [lo, hi)
    float normal();                            // N(0, 1), Box-Muller with a cached second draw
    float normal(float mean, float stddev) { return mean + stddev * normal(); }
    bool bernoulli(float p) { return uniform() < p; }
    uint64_t below(uint64_t n);                // uniform integer in [0, n), unbiased
    int categorical(const float* weights, int n);   // index drawn with probability weights[i] / sum

    void fill_uniform(float* out, size_t n, float lo, float hi);
    void fill_normal(float* out, size_t n, float mean, float stddev);
    template <class T> void shuffle(std::vector<T>& v) {
        for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
    }
    std::vector<int64_t> permutation(int64_t n);

    // A child stream derived from this one (e.g. one per data-loader worker) without disturbing reproducibility.
    Rng fork();

    // Checkpointable state (training state files store it).
    std::vector<uint64_t> state() const;
    void set_state(const std::vector<uint64_t>& s);

private:
    std::array<uint64_t, 4> s_{};
    bool has_cached_normal_ = false;
    float cached_normal_ = 0.f;
};

// The process-wide generator that --seed sets; modules and attacks take an Rng& explicitly where they can.
Rng& global_rng();
void manual_seed(uint64_t seed);

}  // namespace cw
