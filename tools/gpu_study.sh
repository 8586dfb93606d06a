#!/bin/bash
# Runs one dataset's reproduction study on a lent GPU machine from a bundle made by tools/gpu_bundle.sh: every arm and
# seed (scripts/reproduction.sh study, DEVICE=cuda: TF32 off, deterministic, six processes sharing the GPU), then
# AutoAttack on seed 0 of every arm, then packs the small result files into OUT (the machine and its run folders are
# given back after the call; only OUT comes home).
#   tools/gpu_study.sh BUNDLE [DATASET=fashion-mnist] [OUT=gpu_study]
# STUDY_SECONDS (default 420) bounds the training phase and AA_SECONDS (default 120) the AutoAttack phase, so one call
# ends inside the device's 10-minute limit with its results packed; both phases resume where they stopped when called
# again on the same (warm) machine. ARMS and WORKERS pass through to scripts/reproduction.sh.
set -uo pipefail
bundle=${1:?usage: tools/gpu_study.sh BUNDLE [DATASET] [OUT]}
dataset=${2:-fashion-mnist}
out=${3:-gpu_study}
[ -s "$bundle/bin.tar.xz" ] || { echo "tools/gpu_study.sh: $bundle/bin.tar.xz not found (make it with tools/gpu_bundle.sh)" >&2; exit 1; }
mkdir -p "$out"
bin=$(mktemp -d)
tar -C "$bin" -xJf "$bundle/bin.tar.xz"
# cuDNN comes from the CUDA toolkit where it is installed there, else from PyTorch's wheel (the lent machines have
# one); cuBLAS from the toolkit.
cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(nvidia.cudnn.__path__[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$bin/lib:${CUDA_HOME:-/usr/local/cuda}/lib64${cudnn:+:$cudnn}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CLASSWISE_CUDA_PLUGIN=$bin/libclasswise_cuda.so CLASSWISE_DATA=$bundle/data CLASSWISE_REQUIRE_GPU=1
export TRAIN=$bin/train AUDIT=$bin/audit DEVICE=cuda
nvidia-smi -L 2>&1 | tee "$out/summary.txt"
"$bin/train" --dataset "$dataset" --device cuda --print-config > /dev/null || { echo "train does not start here" | tee -a "$out/summary.txt"; }
# Runs a phase in a process group of its own and, when its time is up, sends SIGTERM to the whole group: every train
# and audit process saves its state and stops (timeout alone would signal only the script and leave them running).
bounded() {  # seconds log command...
    local limit=$1 log=$2 t0=$SECONDS pid rc=0
    shift 2
    setsid "$@" > "$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$limit" ]; do sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then kill -TERM -- "-$pid"; wait "$pid"; rc=124; else wait "$pid" || rc=$?; fi
    echo "$(basename "$log" .log): exit $rc after $((SECONDS - t0)) s" | tee -a "$out/summary.txt"
}
bounded "${STUDY_SECONDS:-420}" "$out/study.log" scripts/reproduction.sh study "$dataset"
bounded "${AA_SECONDS:-120}" "$out/autoattack.log" scripts/reproduction.sh autoattack "$dataset"
grep -c "^env " "$out/study.log" | sed 's/^/study commands started: /' | tee -a "$out/summary.txt"
tar -cJf "$out/results.tar.xz" results/reproduction-gpu 2>/dev/null || echo "no results yet" | tee -a "$out/summary.txt"
tar -cJf "$out/logs.tar.xz" "$out"/*.log runs/reproduction-gpu/*/*/*/log.txt 2>/dev/null || true
