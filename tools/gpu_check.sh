#!/bin/bash
# The CUDA backend's checks on a GPU machine, from a built tree (make): the whole test suite with GPU skips made
# failures, compute-sanitizer (memcheck on the GPU tests, racecheck on the reduction kernels), bench_cuda in fp32
# and TF32 beside tools/bench_pytorch_gpu.py in the same run, and deterministic mode's bit-identical training.
#   tools/gpu_check.sh [OUT=gpu_check] [DATA_DIR]   # DATA_DIR with CIFAR-10: also deterministic training
# Every step's log goes to OUT; one line per step says how it ended. Steps run on after a failure, and
# GPU_CHECK_SECONDS (default 3600) bounds the whole script (each step gets what is left of it), so one call on a
# borrowed machine reports everything it can; GPU_CHECK_ONLY="tests bench parity deterministic sanitizer" picks
# groups (default: all).
set -uo pipefail
out=${1:-gpu_check}
data=${2:-}
mkdir -p "$out"
export CLASSWISE_REQUIRE_GPU=1
export PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin   # compute-sanitizer
py=$(command -v python3)
budget=${GPU_CHECK_SECONDS:-3600}
status() { echo "== $1: $2" | tee -a "$out/summary.txt"; }
want() { [ -z "${GPU_CHECK_ONLY:-}" ] || [[ " $GPU_CHECK_ONLY " == *" $1 "* ]]; }
step() {  # step NAME SECONDS COMMAND... : runs with a time limit, log in OUT/NAME.log
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS left=$((budget - SECONDS - 5))
    if [ "$left" -lt 10 ]; then status "$name" "not run (GPU_CHECK_SECONDS spent)"; return 1; fi
    [ "$limit" -gt "$left" ] && limit=$left
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    status "$name" "exit $rc after $((SECONDS - t0)) s$([ $rc = 124 ] && echo ' (time limit)')"
    return $rc
}

nvidia-smi -L | tee -a "$out/summary.txt"
if want tests; then
    step tests 200 build/tests/classwise_tests --durations no
    tail -3 "$out/tests.log"
fi
if want bench; then
    for tf32 in 0 1; do
        CLASSWISE_TF32=$tf32 step "bench_cuda_tf32_$tf32" 120 build/bench/bench_cuda
        grep -E "step_ms|_ms:" "$out/bench_cuda_tf32_$tf32.log"
    done
    step bench_pytorch 200 "$py" tools/bench_pytorch_gpu.py fp32 tf32 bf16 compile
    grep -E "step_ms|failed" "$out/bench_pytorch.log"
fi
# The two PreAct ResNet-18 parity tests under each cuDNN algorithm policy, beside PyTorch's own GPU-vs-CPU
# distance on the same workloads (tools/gpu_cpu_noise.py): is a miss cuDNN's rounding or ours?
if want parity; then
    for policy in default deterministic heuristic; do
        case $policy in
            default) env=() ;; deterministic) env=(CLASSWISE_DETERMINISTIC=1) ;; heuristic) env=(CLASSWISE_CUDNN_BENCHMARK=0) ;;
        esac
        step "parity_$policy" 60 env "${env[@]}" build/tests/classwise_tests "GPU parity: a P*"
        grep -E "tol needed|passed" "$out/parity_$policy.log"
    done
    for flags in "" --deterministic --no-benchmark; do
        step "pytorch_noise${flags//-/_}" 60 "$py" tools/gpu_cpu_noise.py $flags
        cat "$out/pytorch_noise${flags//-/_}.log"
    done
fi
# Deterministic mode: two identical short trainings must write identical weights.
if want deterministic && [ -n "$data" ]; then
    for r in 1 2; do
        CLASSWISE_DETERMINISTIC=1 step "deterministic_$r" 120 build/tools/train --device cuda --dataset cifar10 \
            --data-dir "$data" --train-n 1024 --epochs 1 --eval-n 256 --final-attacks pgd20 \
            --final-checkpoints last --out "$out/det$r"
    done
    a=$(sha256sum < "$out/det1/last.safetensors" | cut -c1-16) && b=$(sha256sum < "$out/det2/last.safetensors" | cut -c1-16) &&
        status deterministic_weights "$([ "$a" = "$b" ] && echo "identical ($a)" || echo "DIFFER ($a vs $b)")" ||
        status deterministic_weights "no checkpoint to compare"
fi
if want sanitizer; then
    # The out-of-memory test provokes failing cudaMalloc calls on purpose; memcheck would count them as errors.
    step memcheck 240 compute-sanitizer --tool memcheck --error-exitcode 1 build/tests/classwise_tests "[cuda]~GPU out of memory*"
    tail -2 "$out/memcheck.log"
    step racecheck 120 compute-sanitizer --tool racecheck --error-exitcode 1 build/tests/classwise_tests \
        "GPU parity: sums*,GPU parity: max*,GPU parity: softmax*,GPU parity: batch norm*,GPU parity: lerp_*"
    grep -E "Race reported|RACECHECK SUMMARY|passed" "$out/racecheck.log" | sed 's/+0x[0-9a-f]*//g' | sort | uniq -c | head
fi
cat "$out/summary.txt"
