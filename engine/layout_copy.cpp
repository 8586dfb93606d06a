#include "engine/layout_copy.h"

#include <utility>

namespace cw::layout_copy {

namespace {
// One request and one offer at a time per thread; a nested scope saves the outer one and restores it.
struct Slot {
    const float* at = nullptr;
    std::shared_ptr<const LayoutCopy> copy;
};
thread_local Slot t_request, t_offer;
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

Offer::Offer(const float* data, std::shared_ptr<const LayoutCopy> copy)
    : previous_data_(t_offer.at), previous_copy_(std::move(t_offer.copy)) {
    t_offer = {data, std::move(copy)};
}
Offer::~Offer() { t_offer = {previous_data_, std::move(previous_copy_)}; }

const LayoutCopy* offered(const float* data) { return data && t_offer.at == data ? t_offer.copy.get() : nullptr; }

}  // namespace cw::layout_copy
