#pragma once
namespace cw {
// When on, every freshly allocated float tensor is filled with NaN, so a kernel that leaves an element unwritten
// shows up as NaN in tests (the gradient checker turns it on).
bool poison_new_tensors();
void set_poison_new_tensors(bool on);
}  // namespace cw
