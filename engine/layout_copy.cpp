#include "engine/layout_copy.h"

#include <utility>
#include <vector>

namespace cw::layout_copy {

namespace {
// One request at a time per thread: a nested one saves the outer one and restores it.
struct Requested {
    const float* at = nullptr;
    std::shared_ptr<const LayoutCopy> copy;
};
thread_local Requested t_request;

// Offers stack.
struct Offered {
    const float* at = nullptr;
    const Slot* slot = nullptr;
    std::shared_ptr<Slot> keep;  // with a keep offer: the slot, held
};
constexpr int kOffers = 4;
thread_local Offered t_offers[kOffers];
thread_local int t_offered = 0;

// The KeepScopes open on this thread and the slots a conversion was kept in.
thread_local int t_keep_scopes = 0;
thread_local std::vector<std::shared_ptr<Slot>> t_kept;

Offered* find_offer(const float* data) {
    if (!data) return nullptr;
    for (int i = t_offered - 1; i >= 0; --i)
        if (t_offers[i].at == data) return &t_offers[i];
    return nullptr;
}
}  // namespace

Request::Request(const float* out) : previous_out_(t_request.at), previous_copy_(std::move(t_request.copy)) {
    t_request = {out, nullptr};
}
Request::~Request() { t_request = {previous_out_, std::move(previous_copy_)}; }
std::shared_ptr<const LayoutCopy> Request::take() { return std::move(t_request.copy); }

bool requested(const float* out) { return out && t_request.at == out; }
void put(const float* out, std::shared_ptr<const LayoutCopy> copy) {
    if (requested(out)) t_request.copy = std::move(copy);
}

Offer::Offer(const float* data, const Slot* slot) : held_(t_offered < kOffers) {
    if (held_) t_offers[t_offered++] = {data, slot, nullptr};
}
Offer::Offer(const float* data, std::shared_ptr<Slot> keep) : held_(t_offered < kOffers) {
    if (held_) t_offers[t_offered++] = {data, keep.get(), std::move(keep)};
}
Offer::~Offer() {
    if (held_) t_offers[--t_offered] = {};
}

const LayoutCopy* offered(const float* data) {
    const Offered* o = find_offer(data);
    return o && o->slot ? o->slot->get() : nullptr;
}

bool keepable(const float* data) {
    const Offered* o = find_offer(data);
    return t_keep_scopes > 0 && o && o->keep;
}

void keep(const float* data, std::shared_ptr<const LayoutCopy> copy) {
    if (!keepable(data)) return;
    const std::shared_ptr<Slot>& slot = find_offer(data)->keep;
    *slot = std::move(copy);
    t_kept.push_back(slot);
}

KeepScope::KeepScope() { ++t_keep_scopes; }
KeepScope::~KeepScope() {
    if (--t_keep_scopes > 0) return;
    for (const std::shared_ptr<Slot>& slot : t_kept) slot->reset();
    t_kept.clear();
}

}  // namespace cw::layout_copy
