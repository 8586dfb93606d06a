// Host-to-device copies staged through pinned buffers (engine/cuda/backend_cuda.h, HostStaging). The caller's
// buffer is copied into a pinned one at once, so the caller may free it on return; the device copy from the pinned
// buffer is queued on the stream like a kernel, and the buffer's event marks when it may be written again. Which
// buffer: plan_staging (engine/cuda/index_math.h), tested on the host.
#include <cstring>

#include "engine/cuda/backend_cuda.h"
#include "engine/cuda/common.cuh"
#include "engine/cuda/index_math.h"

namespace cw::cuda {

namespace {
// Whether the copy that last read from a buffer is still queued or running.
bool still_copying(cudaEvent_t done) {
    const cudaError_t e = cudaEventQuery(done);
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();   // "not ready" is an answer, not an error; do not leave it for the next check
        return true;
    }
    check_cuda(e, "cudaEventQuery", __FILE__, __LINE__);
    return false;
}
}  // namespace

bool HostStaging::upload(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
    if (!staged_uploads_enabled()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < buffers_.size(); ++i) slots_[i].busy = still_copying(buffers_[i].done);
    const StagingPlan plan = plan_staging(slots_, bytes, pinned_);

    size_t k = plan.slot;
    switch (plan.kind) {
        case StagingPlan::Direct: return false;
        case StagingPlan::Allocate: {
            void* host = nullptr;
            if (cudaHostAlloc(&host, plan.capacity, cudaHostAllocDefault) != cudaSuccess) {
                (void)cudaGetLastError();   // pinned memory refused (a locked-memory limit): copy directly instead
                return false;
            }
            cudaEvent_t done = nullptr;
            const cudaError_t e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
            if (e != cudaSuccess) {
                cudaFreeHost(host);
                check_cuda(e, "cudaEventCreateWithFlags", __FILE__, __LINE__);
            }
            buffers_.push_back({host, done});
            slots_.push_back({plan.capacity, false, 0});
            pinned_ += plan.capacity;
            k = buffers_.size() - 1;
            break;
        }
        case StagingPlan::WaitThenReuse: CW_CUDA_CHECK(cudaEventSynchronize(buffers_[k].done)); break;
        case StagingPlan::Reuse: break;
    }
    const Buffer& b = buffers_[k];
    std::memcpy(b.host, src, bytes);
    CW_CUDA_CHECK(cudaMemcpyAsync(dst, b.host, bytes, cudaMemcpyHostToDevice, stream));
    CW_CUDA_CHECK(cudaEventRecord(b.done, stream));
    slots_[k].last_use = ++clock_;
    return true;
}

}  // namespace cw::cuda
