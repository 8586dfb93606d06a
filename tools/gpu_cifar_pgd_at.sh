#!/bin/bash
# PGD-AT of PreAct ResNet-18 on CIFAR-10 with classwise on the GPU beside its PyTorch twin (tools/train_pytorch_twin.py,
# same recipe, same epochs, same files), then the per-class audit of classwise's model (clean, PGD-20, AutoAttack)
# and the comparison of the two at clean and PGD-20 (overall within 2 points, per class within 6).
#   tools/gpu_cifar_pgd_at.sh DATA_DIR [OUT=gpu_pgd_at] [EPOCHS=5] [AUDIT_N=1000]
#   (env: SEED, AUDIT_SECONDS, AUDIT_BATCH, COMPARE_N: see below)
# DATA_DIR holds cifar-10-batches-bin/ (whole or with every file cut to its first records: every training record
# present is used). The two trainings share the GPU (their timings are in the logs, not a benchmark: see
# bench_cuda and tools/bench_pytorch_gpu.py for that). AUDIT_SECONDS (default 1800) bounds the audit; an
# interrupted audit resumes with the same command plus --resume; AUDIT_SECONDS=0 skips it. SEED (default 0) seeds
# both trainings.
set -uo pipefail
data=${1:?usage: tools/gpu_cifar_pgd_at.sh DATA_DIR [OUT] [EPOCHS] [AUDIT_N]}
out=${2:-gpu_pgd_at}
epochs=${3:-5}
audit_n=${4:-1000}
seed=${SEED:-0}
mkdir -p "$out"
py=$(command -v python3)

build/tools/train --device cuda --dataset cifar10 --data-dir "$data" --method pgd_at --epochs "$epochs" --seed "$seed" \
    --eval-n "$audit_n" --epoch-eval-n 500 --final-checkpoints last --final-attacks pgd20 --out "$out/classwise" \
    > "$out/classwise_train.log" 2>&1 &
ours=$!
"$py" tools/train_pytorch_twin.py --data "$data/cifar-10-batches-bin" --epochs "$epochs" --eval-n "$audit_n" \
    --seed "$seed" --out "$out/pytorch_twin.json" > "$out/pytorch_train.log" 2>&1 &
twin=$!
wait $ours; echo "classwise training: exit $?"; tail -4 "$out/classwise_train.log"
wait $twin; echo "pytorch twin: exit $?"; tail -2 "$out/pytorch_train.log"
"$py" tools/train_pytorch_twin.py --compare "$out/pytorch_twin.json" "$out/classwise/eval_last/results.json" \
    | tee "$out/compare.txt"
# AutoAttack (standard) on the same test images, timed, in batches of AUDIT_BATCH (default 250, AutoAttack's; a GPU
# runs far faster at 1,000-5,000).
[ "${AUDIT_SECONDS:-1800}" = 0 ] && exit 0
t0=$SECONDS
timeout "${AUDIT_SECONDS:-1800}" build/tools/audit --device cuda --weights "$out/classwise/last.safetensors" --dataset cifar10 --data-dir "$data" \
    --attacks clean,pgd20,autoattack --n "$audit_n" --batch-size "${AUDIT_BATCH:-250}" --out "$out/audit" > "$out/audit.log" 2>&1
echo "audit (clean, PGD-20, AutoAttack on $audit_n images): exit $? after $((SECONDS - t0)) s"
tail -25 "$out/audit.log"
# COMPARE_N > 0: AutoAttack on the first COMPARE_N test images on the GPU (TF32 off: the CPU computes in fp32) and on
# the CPU, one batch each, the same seed; prints every class whose robust count differs.
[ "${COMPARE_N:-0}" -gt 0 ] || exit 0
for dev in cuda cpu; do
    CLASSWISE_TF32=0 build/tools/audit --device $dev --weights "$out/classwise/last.safetensors" --dataset cifar10 \
        --data-dir "$data" --attacks clean,autoattack --n "$COMPARE_N" --batch-size "$COMPARE_N" \
        --out "$out/compare_$dev" > "$out/compare_$dev.log" 2>&1 || echo "AutoAttack on the $dev: failed"
done
"$py" - "$out/compare_cuda/results.json" "$out/compare_cpu/results.json" <<'PY'
import json, sys
gpu, cpu = (json.load(open(f)) for f in sys.argv[1:3])
def robust(r):
    e = r["evaluations"][-1]
    return [round(a * n) for a, n in zip(e["per_class_accuracy"], e["class_counts"])]
g, c = robust(gpu), robust(cpu)
diff = [(name, a, b) for name, a, b in zip(gpu["classes"], g, c) if a != b]
print("AutoAttack robust images per class, GPU vs CPU:", "equal in every class" if not diff else diff)
PY
