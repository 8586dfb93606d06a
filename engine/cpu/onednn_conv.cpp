// The oneDNN convolution on our plain fp32 buffers. oneDNN picks its own layouts (format any: blocked activations
// and weights, bf16 where asked), so each direction is a plan of up to three reorders around one convolution
// primitive: our two inputs into its layouts, its output back into ours (an activation going to nChw16c bf16 is
// converted by engine/cpu/bf16_blocked.h instead, the same bits faster). Building a plan JIT-compiles kernels and
// costs milliseconds, so plans are cached, keyed by geometry, direction, precision and the OpenMP thread count
// (oneDNN sizes its work split at build time; Debian's libdnnl runs on the OpenMP runtime, so it uses the calling
// thread's omp_get_max_threads(), the team CLASSWISE_THREADS sizes, like OpenBLAS and our own loops).
// Threads: the cache is shared under a mutex; a primitive is immutable once built and runs with a scratchpad and
// layout buffers owned by the calling thread (scratchpad_mode::user), on that thread's stream.
#include "engine/cpu/onednn_conv.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl.hpp"
#include "engine/cpu/bf16_blocked.h"
#include "engine/cpu/blocked_bias_relu.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/onednn_plans.h"
#include "engine/error.h"
#include "engine/layout_copy.h"

namespace cw::onednn_conv {

namespace {

using dnnl::memory;
using dt = memory::data_type;

using onednn::cpu_engine;
using onednn::thread_stream;
using onednn::user_scratchpad;

// A primitive and the scratchpad it needs.
struct Step {
    dnnl::primitive prim;
    memory::desc scratchpad;
};

// One direction: conv(a, b) -> out. Forward: a = src, b = weights, out = dst; backward-data: a = diff_dst,
// b = weights, out = diff_src; backward-weights: a = src, b = diff_dst, out = diff_weights.
struct Plan {
    Step conv;
    int arg_a = 0, arg_b = 0, arg_out = 0;
    memory::desc user_a, user_b, user_out;  // ours: plain fp32 NCHW / OIHW
    memory::desc conv_a, conv_b, conv_out;  // the primitive's layouts and data types
    std::optional<Step> to_a, to_b, from_out;  // absent where the primitive takes our layout as it is
    // An activation input that goes from our NCHW fp32 to nChw16c bf16 runs through bf16_blocked instead of
    // oneDNN's reorder (the same bits, about twice as fast): its dims [n, c, h, w], or empty.
    memory::dims a_to_bf16_blocked, b_to_bf16_blocked;
    size_t scratchpad_bytes = 0;  // the largest of the steps' (they run one after another)
    std::string implementation;
};

std::optional<Step> reorder_step(const memory::desc& from, const memory::desc& to) {
    if (from == to) return std::nullopt;
    dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratchpad());
    return Step{dnnl::reorder(pd), pd.scratchpad_desc()};
}

std::string describe(const ConvGeometry& g, Direction d, Precision p) {
    static const char* names[] = {"forward", "backward-data", "backward-weights"};
    return "oneDNN " + std::string(p == Precision::Bf16 ? "bf16" : "fp32") + " convolution " + names[int(d)] + " (" +
           std::to_string(g.n) + "x" + std::to_string(g.c) + "x" + std::to_string(g.h) + "x" + std::to_string(g.w) +
           ", " + std::to_string(g.k) + " filters " + std::to_string(g.r) + "x" + std::to_string(g.s) + ", stride " +
           std::to_string(g.stride) + ", padding " + std::to_string(g.pad) + ")";
}

Plan build_plan(const ConvGeometry& g, Direction d, Precision p) {
    const dt in = p == Precision::Bf16 ? dt::bf16 : dt::f32;
    const memory::dims src{g.n, g.c, g.h, g.w}, wei{g.k, g.c, g.r, g.s}, dst{g.n, g.k, g.out_h(), g.out_w()},
        strides{g.stride, g.stride}, pad{g.pad, g.pad};
    auto any = [](const memory::dims& dims, dt type) { return memory::desc(dims, type, memory::format_tag::any); };
    auto plain = [](const memory::dims& dims) { return memory::desc(dims, dt::f32, memory::format_tag::abcd); };
    const auto direct = dnnl::algorithm::convolution_direct;
    const dnnl::primitive_attr attr = user_scratchpad();
    // The forward descriptor: the forward plan itself, and the layout hint the backward primitives require.
    const dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct, any(src, in), any(wei, in),
                                        any(dst, dt::f32), strides, pad, pad),
        attr, cpu_engine());
    Plan plan;
    if (d == Direction::Forward) {
        plan.conv = {dnnl::convolution_forward(fwd), fwd.scratchpad_desc()};
        plan.arg_a = DNNL_ARG_SRC, plan.arg_b = DNNL_ARG_WEIGHTS, plan.arg_out = DNNL_ARG_DST;
        plan.user_a = plain(src), plan.user_b = plain(wei), plan.user_out = plain(dst);
        plan.conv_a = fwd.src_desc(), plan.conv_b = fwd.weights_desc(), plan.conv_out = fwd.dst_desc();
        plan.implementation = fwd.impl_info_str();
    } else if (d == Direction::BackwardData) {
        const dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(direct, any(src, dt::f32), any(wei, in), any(dst, in), strides, pad,
                                                  pad),
            attr, cpu_engine(), fwd);
        plan.conv = {dnnl::convolution_backward_data(pd), pd.scratchpad_desc()};
        plan.arg_a = DNNL_ARG_DIFF_DST, plan.arg_b = DNNL_ARG_WEIGHTS, plan.arg_out = DNNL_ARG_DIFF_SRC;
        plan.user_a = plain(dst), plan.user_b = plain(wei), plan.user_out = plain(src);
        plan.conv_a = pd.diff_dst_desc(), plan.conv_b = pd.weights_desc(), plan.conv_out = pd.diff_src_desc();
        plan.implementation = pd.impl_info_str();
    } else {
        const dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(direct, any(src, in), any(wei, dt::f32), any(dst, in), strides,
                                                     pad, pad),
            attr, cpu_engine(), fwd);
        plan.conv = {dnnl::convolution_backward_weights(pd), pd.scratchpad_desc()};
        plan.arg_a = DNNL_ARG_SRC, plan.arg_b = DNNL_ARG_DIFF_DST, plan.arg_out = DNNL_ARG_DIFF_WEIGHTS;
        plan.user_a = plain(src), plan.user_b = plain(dst), plan.user_out = plain(wei);
        plan.conv_a = pd.src_desc(), plan.conv_b = pd.diff_dst_desc(), plan.conv_out = pd.diff_weights_desc();
        plan.implementation = pd.impl_info_str();
    }
    auto ours = [](const memory::desc& user, const memory::desc& conv) {
        const memory::dims dims = user.dims();
        const bool fits = conv == memory::desc(dims, dt::bf16, memory::format_tag::nChw16c) &&
                          user == memory::desc(dims, dt::f32, memory::format_tag::abcd) &&
                          bf16_blocked::supported(dims[1]);
        return fits ? dims : memory::dims{};
    };
    plan.a_to_bf16_blocked = ours(plan.user_a, plan.conv_a);
    plan.b_to_bf16_blocked = ours(plan.user_b, plan.conv_b);
    // oneDNN's reorder only where bf16_blocked does not convert (a primitive never run is never built).
    if (plan.a_to_bf16_blocked.empty()) plan.to_a = reorder_step(plan.user_a, plan.conv_a);
    if (plan.b_to_bf16_blocked.empty()) plan.to_b = reorder_step(plan.user_b, plan.conv_b);
    plan.from_out = reorder_step(plan.conv_out, plan.user_out);
    for (const Step* s : {&plan.conv, plan.to_a ? &*plan.to_a : nullptr, plan.to_b ? &*plan.to_b : nullptr,
                          plan.from_out ? &*plan.from_out : nullptr})
        if (s) plan.scratchpad_bytes = std::max(plan.scratchpad_bytes, s->scratchpad.get_size());
    return plan;
}

struct Key {
    ConvGeometry g;
    Direction d;
    Precision p;
    int threads;
    bool operator==(const Key& o) const {
        return g.n == o.g.n && g.c == o.g.c && g.h == o.g.h && g.w == o.g.w && g.k == o.g.k && g.r == o.g.r &&
               g.s == o.g.s && g.stride == o.g.stride && g.pad == o.g.pad && d == o.d && p == o.p &&
               threads == o.threads;
    }
};

struct KeyHash {
    size_t operator()(const Key& k) const {
        size_t h = 0;
        for (int64_t v : {k.g.n, k.g.c, k.g.h, k.g.w, k.g.k, k.g.r, k.g.s, k.g.stride, k.g.pad, int64_t(k.d),
                          int64_t(k.p), int64_t(k.threads)})
            h = h * 1000003u ^ std::hash<int64_t>()(v);
        return h;
    }
};

onednn::PlanCache<Key, Plan, KeyHash> cache;

std::shared_ptr<const Plan> plan_for(const ConvGeometry& g, Direction d, Precision p) {
    return cache.get(
        Key{g, d, p, omp_get_max_threads()}, [](const Key& k) { return build_plan(k.g, k.d, k.p); },
        [](const Key& k) { return describe(k.g, k.d, k.p); });
}

// The time split's counters: nanoseconds and executions, convolutions and reorders.
struct Counter {
    std::atomic<int64_t> ns{0}, calls{0};
    void add(std::chrono::steady_clock::duration d) {
        ns += std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
        ++calls;
    }
};
Counter convolution_time, reorder_time, output_reorder_time;
std::atomic<int64_t> bf16_blocked_calls{0};

// Per-thread 64-byte-aligned buffers, grown on demand and kept between calls (a hot loop never allocates).
enum Slot { kSlotA, kSlotB, kSlotOut, kSlotScratchpad, kSlotAccumulate, kSlotGated, kSlots };

void* thread_buffer(Slot slot, size_t bytes) {
    constexpr size_t kAlign = 64;
    thread_local std::vector<unsigned char> buffers[kSlots];
    std::vector<unsigned char>& b = buffers[slot];
    if (b.size() < bytes + kAlign) b.resize(bytes + kAlign);
    const uintptr_t at = reinterpret_cast<uintptr_t>(b.data());
    return reinterpret_cast<void*>((at + kAlign - 1) & ~uintptr_t(kAlign - 1));
}

// An activation's nChw16c bf16 copy (engine/layout_copy.h), written beside the fp32 activation by the kernel that
// wrote it (blocked_bias_relu for a bf16 conv2d_relu, batch norm under bf16), read by the next bf16 convolution in
// place of bf16_blocked's conversion of the same values. [n, c, h, w] and [n, c, h * w, 1] lie the same in memory,
// so the planes are kept by their size alone.
struct Bf16BlockedCopy : LayoutCopy {
    int64_t n, c, hw;
    size_t bytes;
    uint16_t* data;
    Bf16BlockedCopy(int64_t n_, int64_t c_, int64_t hw_)
        : n(n_), c(c_), hw(hw_), bytes(sizeof(uint16_t) * size_t(n_ * c_ * hw_)),
          data(static_cast<uint16_t*>(cpu_backend().allocate(bytes))) {}
    ~Bf16BlockedCopy() override { cpu_backend().deallocate(data, bytes); }
    bool fits(int64_t n_, int64_t c_, int64_t hw_) const { return n == n_ && c == c_ && hw == hw_; }
};

// The copy of `a` offered on this thread, where it is one of the layout and dims the plan converts `a` into.
const uint16_t* offered_copy(const float* a, const memory::dims& dims) {
    const auto* copy = dynamic_cast<const Bf16BlockedCopy*>(layout_copy::offered(a));
    return copy && copy->fits(dims[0], dims[1], dims[2] * dims[3]) ? copy->data : nullptr;
}

std::atomic<int64_t> copies_read{0}, weights_kept_read{0};

// A weight tensor's conversions into the primitives' layouts (a forward's, a data gradient's), kept on its storage
// (engine/layout_copy.h) inside a layout_copy::KeepScope, from the first call that converts them until the weights
// are next written (the optimiser's step drops them) or the scope ends: an attack's steps and the training step then
// convert each weight once per layout instead of at every call, as PyTorch's autocast keeps its bf16 weights.
struct ConvertedWeights : LayoutCopy {
    struct Entry {
        memory::desc layout;
        std::shared_ptr<void> data;
    };
    std::vector<Entry> entries;
    const void* find(const memory::desc& layout) const {
        for (const Entry& e : entries)
            if (e.layout == layout) return e.data.get();
        return nullptr;
    }
};

std::shared_ptr<void> allocate_shared(size_t bytes) {
    return std::shared_ptr<void>(cpu_backend().allocate(bytes), [bytes](void* p) { cpu_backend().deallocate(p, bytes); });
}

// What a caller of run() may have done already, or wants done differently.
struct Options {
    const uint16_t* a_blocked = nullptr;  // a, already converted into the primitive's nChw16c bf16 layout
    const void* b_blocked = nullptr;      // b, likewise (or in the primitive's weights layout, kept)
    bool bias_relu = false;               // the output brought back by blocked_bias_relu, adding `bias` (or none)
    const float* bias = nullptr;
    int32_t* pool_argmax = nullptr;       // with bias_relu: max-pooled 2x2 on the way, `out` and this pooled
    Precision precision = Precision::Fp32;  // with bias_relu: bf16 writes a layout copy of `out` where asked
};

// Whether the plan's output comes back through blocked_bias_relu: an fp32 nChw16c output the kernel takes.
bool output_takes_bias_relu(const Plan& plan) {
    const memory::dims dims = plan.user_out.dims();
    return plan.from_out && plan.conv_out == memory::desc(dims, dt::f32, memory::format_tag::nChw16c) &&
           blocked_bias_relu::supported(dims[1]);
}

void run(const std::shared_ptr<const Plan>& plan, const float* a, const float* b, float* out,
         Options options = {}) {
    dnnl::engine& eng = cpu_engine();
    dnnl::stream& stream = thread_stream();
    if (!options.a_blocked && !plan->a_to_bf16_blocked.empty()) {
        options.a_blocked = offered_copy(a, plan->a_to_bf16_blocked);
        if (options.a_blocked) ++copies_read;
    }
    // Weights (b of a forward or data gradient) converted by an earlier call, or to keep once converted.
    const auto* kept = plan->to_b && !options.b_blocked
                           ? dynamic_cast<const ConvertedWeights*>(layout_copy::offered(b))
                           : nullptr;
    if (kept && (options.b_blocked = kept->find(plan->conv_b))) ++weights_kept_read;
    const bool keep_b = plan->to_b && !options.b_blocked && layout_copy::keepable(b);
    std::shared_ptr<void> kept_b = keep_b ? allocate_shared(plan->conv_b.get_size()) : nullptr;
    // Every buffer first: a later grow would move one a memory object already points at.
    const bool convert_a = !options.a_blocked && (plan->to_a || !plan->a_to_bf16_blocked.empty()),
               convert_b = !options.b_blocked && (plan->to_b || !plan->b_to_bf16_blocked.empty());
    void* buf_a = convert_a ? thread_buffer(kSlotA, plan->conv_a.get_size()) : nullptr;
    void* buf_b = kept_b ? kept_b.get() : convert_b ? thread_buffer(kSlotB, plan->conv_b.get_size()) : nullptr;
    void* buf_out = plan->from_out ? thread_buffer(kSlotOut, plan->conv_out.get_size()) : nullptr;
    void* buf_scratchpad = thread_buffer(kSlotScratchpad, plan->scratchpad_bytes);

    auto execute = [&](const Step& step, std::unordered_map<int, memory> args) {
        if (step.scratchpad.get_size() > 0)
            args.emplace(DNNL_ARG_SCRATCHPAD, memory(step.scratchpad, eng, buf_scratchpad));
        const auto start = std::chrono::steady_clock::now();
        step.prim.execute(stream, args);
        stream.wait();
        const auto took = std::chrono::steady_clock::now() - start;
        (&step == &plan->conv ? convolution_time : reorder_time).add(took);
        if (plan->from_out && &step == &*plan->from_out) output_reorder_time.add(took);
    };
    const memory user_a(plan->user_a, eng, const_cast<float*>(a)), user_b(plan->user_b, eng, const_cast<float*>(b)),
        user_out(plan->user_out, eng, out);
    const memory conv_a = options.a_blocked ? memory(plan->conv_a, eng, const_cast<uint16_t*>(options.a_blocked))
                          : convert_a       ? memory(plan->conv_a, eng, buf_a)
                                            : user_a;
    const memory conv_b = options.b_blocked ? memory(plan->conv_b, eng, const_cast<void*>(options.b_blocked))
                          : convert_b       ? memory(plan->conv_b, eng, buf_b)
                                            : user_b;
    const memory conv_out = plan->from_out ? memory(plan->conv_out, eng, buf_out) : user_out;
    auto convert = [&](const memory::dims& d, const float* from, void* to) {
        const auto start = std::chrono::steady_clock::now();
        bf16_blocked::from_nchw(from, static_cast<uint16_t*>(to), d[0], d[1], d[2] * d[3]);
        reorder_time.add(std::chrono::steady_clock::now() - start);
        ++bf16_blocked_calls;
    };
    if (convert_a && !plan->a_to_bf16_blocked.empty()) convert(plan->a_to_bf16_blocked, a, buf_a);
    else if (convert_a) execute(*plan->to_a, {{DNNL_ARG_FROM, user_a}, {DNNL_ARG_TO, conv_a}});
    if (convert_b && !plan->b_to_bf16_blocked.empty()) convert(plan->b_to_bf16_blocked, b, buf_b);
    else if (convert_b) execute(*plan->to_b, {{DNNL_ARG_FROM, user_b}, {DNNL_ARG_TO, conv_b}});
    if (kept_b) {
        auto converted = std::make_shared<ConvertedWeights>();
        if (kept) converted->entries = kept->entries;
        converted->entries.push_back({plan->conv_b, std::move(kept_b)});
        layout_copy::keep(b, std::move(converted));
    }
    execute(plan->conv, {{plan->arg_a, conv_a}, {plan->arg_b, conv_b}, {plan->arg_out, conv_out}});
    // Our kernel bringing the primitive's fp32 nChw16c output back into `out`, timed as the reorder it replaces.
    auto bring_back = [&](auto kernel) {
        const auto start = std::chrono::steady_clock::now();
        kernel(static_cast<const float*>(buf_out));
        const auto took = std::chrono::steady_clock::now() - start;
        reorder_time.add(took), output_reorder_time.add(took);
    };
    if (options.bias_relu) {
        const memory::dims dims = plan->user_out.dims();
        const memory::dims out_dims =
            options.pool_argmax ? memory::dims{dims[0], dims[1], dims[2] / 2, dims[3] / 2} : dims;
        uint16_t* copy_data = nullptr;
        const std::shared_ptr<const LayoutCopy> copy =
            options.precision == Precision::Bf16
                ? requested_bf16_blocked_copy(out, out_dims[0], out_dims[1], out_dims[2] * out_dims[3], &copy_data)
                : nullptr;
        bring_back([&](const float* blocked) {
            if (options.pool_argmax)
                blocked_bias_relu::to_nchw_maxpool(blocked, options.bias, out, options.pool_argmax, dims[0], dims[1],
                                                   dims[2], dims[3], copy_data);
            else
                blocked_bias_relu::to_nchw(blocked, options.bias, out, dims[0], dims[1], dims[2] * dims[3], copy_data);
        });
        if (copy) layout_copy::put(out, copy);
    } else if (plan->from_out && output_takes_bias_relu(*plan)) {
        const memory::dims dims = plan->user_out.dims();
        bring_back([&](const float* blocked) {
            blocked_bias_relu::to_nchw_plain(blocked, out, dims[0], dims[1], dims[2] * dims[3]);
        });
    } else if (plan->from_out) {
        execute(*plan->from_out, {{DNNL_ARG_FROM, conv_out}, {DNNL_ARG_TO, user_out}});
    }
}

}  // namespace

void forward(const float* x, const float* w, float* y, const ConvGeometry& g, Precision p) {
    run(plan_for(g, Direction::Forward, p), x, w, y);
}

bool forward_bias_relu(const float* x, const float* w, const float* bias, float* y, const ConvGeometry& g,
                       Precision p, int32_t* pool_argmax) {
    const std::shared_ptr<const Plan> plan = plan_for(g, Direction::Forward, p);
    if (!output_takes_bias_relu(*plan)) return false;
    Options fused;
    fused.bias_relu = true, fused.bias = bias, fused.pool_argmax = pool_argmax, fused.precision = p;
    run(plan, x, w, y, fused);
    return true;
}

namespace {

// The bf16 backward of g from an incoming gradient that `convert` writes straight into the primitives' nChw16c bf16
// layout (with the bias gradient, where asked, in the same pass): once for both directions. False, having done
// nothing, where a primitive wants another layout or nothing is asked for. `gy` is what the primitives' plain input
// would have been (null where there is none: it is never read, the converted buffer replaces it).
template <class Convert>
bool backward_bf16_converted(const float* x, const float* w, const float* gy, float* gx, float* gw, bool bias,
                             const ConvGeometry& g, Convert convert) {
    const std::shared_ptr<const Plan> data = plan_for(g, Direction::BackwardData, Precision::Bf16),
                                      weights = plan_for(g, Direction::BackwardWeights, Precision::Bf16);
    if ((gx && data->a_to_bf16_blocked.empty()) || ((gw || bias) && weights->b_to_bf16_blocked.empty()) ||
        !(gx || gw || bias))
        return false;
    const memory::desc& layout = gx ? data->conv_a : weights->conv_b;
    uint16_t* converted_gy = static_cast<uint16_t*>(thread_buffer(kSlotGated, layout.get_size()));
    const auto start = std::chrono::steady_clock::now();
    convert(converted_gy);
    reorder_time.add(std::chrono::steady_clock::now() - start);
    ++bf16_blocked_calls;
    if (gx) {
        Options converted;
        converted.a_blocked = converted_gy;
        run(data, gy, w, gx, converted);
    }
    if (gw) {
        Options converted;
        converted.b_blocked = converted_gy;
        run(weights, x, gy, gw, converted);
    }
    return true;
}

}  // namespace

bool relu_backward_bf16(const float* x, const float* w, const float* y, const float* gy, float* gx, float* gw,
                        float* gbias, const ConvGeometry& g) {
    return backward_bf16_converted(x, w, gy, gx, gw, gbias != nullptr, g, [&](uint16_t* out) {
        bf16_blocked::relu_gated_from_nchw(gy, y, out, g.n, g.k, g.out_h() * g.out_w(), gbias);
    });
}

bool relu_maxpool_backward_bf16(const float* x, const float* w, const float* y, const int32_t* argmax,
                                const float* gy, float* gx, float* gw, float* gbias, const ConvGeometry& g) {
    return backward_bf16_converted(x, w, nullptr, gx, gw, gbias != nullptr, g, [&](uint16_t* out) {
        bf16_blocked::pooled_relu_gated_scatter(gy, y, argmax, out, g.n, g.k, g.out_h(), g.out_w(), gbias);
    });
}

void backward_data(const float* gy, const float* w, float* gx, const ConvGeometry& g, Precision p) {
    run(plan_for(g, Direction::BackwardData, p), gy, w, gx);
}

void backward_weights(const float* x, const float* gy, float* gw, const ConvGeometry& g, bool accumulate,
                      Precision p) {
    if (!accumulate) return run(plan_for(g, Direction::BackwardWeights, p), x, gy, gw);
    const int64_t n = g.k * g.c * g.r * g.s;
    float* fresh = static_cast<float*>(thread_buffer(kSlotAccumulate, sizeof(float) * size_t(n)));
    run(plan_for(g, Direction::BackwardWeights, p), x, gy, fresh);
    for (int64_t i = 0; i < n; ++i) gw[i] += fresh[i];
}

bool cpu_has_bf16() {
    // Asked once: oneDNN fixes its ISA at first use, and the trainer's precision scope asks at every step.
    static const bool has = [] {
        const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
        const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);  // a bit mask: AMX includes it
        return (isa & bf16) == bf16;
    }();
    return has;
}

TimeSplit time_split() {
    TimeSplit s;
    s.convolution_ms = 1e-6 * double(convolution_time.ns);
    s.reorder_ms = 1e-6 * double(reorder_time.ns);
    s.output_reorder_ms = 1e-6 * double(output_reorder_time.ns);
    s.convolutions = convolution_time.calls;
    s.reorders = reorder_time.calls;
    s.reorders_by_bf16_blocked = bf16_blocked_calls;
    s.layout_copies_read = copies_read;
    s.kept_weights_read = weights_kept_read;
    return s;
}

void reset_time_split() {
    for (Counter* c : {&convolution_time, &reorder_time, &output_reorder_time}) c->ns = 0, c->calls = 0;
    bf16_blocked_calls = 0;
    copies_read = 0;
    weights_kept_read = 0;
}

const uint16_t* bf16_blocked_copy(const LayoutCopy* copy, int64_t n, int64_t c, int64_t h, int64_t w) {
    const auto* blocked = dynamic_cast<const Bf16BlockedCopy*>(copy);
    return blocked && blocked->fits(n, c, h * w) ? blocked->data : nullptr;
}

std::shared_ptr<const LayoutCopy> requested_bf16_blocked_copy(const float* out, int64_t n, int64_t c, int64_t hw,
                                                              uint16_t** data) {
    *data = nullptr;
    if (!layout_copy::requested(out) || !bf16_blocked::supported(c)) return nullptr;
    auto copy = std::make_shared<Bf16BlockedCopy>(n, c, hw);
    *data = copy->data;
    return copy;
}

size_t cached_plans() { return cache.size(); }

std::string implementation(const ConvGeometry& g, Direction d, Precision p) { return plan_for(g, d, p)->implementation; }

}  // namespace cw::onednn_conv
