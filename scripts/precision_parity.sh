#!/bin/bash
# bf16 accuracy parity (docs/speed.md): Fashion-MNIST PGD-AT at the reproduction study's protocol
# (scripts/reproduction.sh: eps 0.05, 5 epochs, SGD lr 0.05 piecewise, whole test set, PGD-20) with
# `--precision bf16` (training steps in bf16, evaluations in fp32), seeds 0-2 (SEEDS). The fp32 side is the study's
# own PGD-AT runs of the same seeds, the same command without --precision. Prints both per-class tables (mean ± sd
# over seeds).
#   scripts/precision_parity.sh            (resumable; one thread per run, WORKERS of them, default 1)
# Environment: SEEDS ("0 1 2"), OUT (runs/precision-parity), RESULTS (results), TRAIN (build/tools/train),
# SEEDS_TOOL (build/tools/seeds)
set -euo pipefail
out=${OUT:-runs/precision-parity}
results=${RESULTS:-results}
train=${TRAIN:-build/tools/train}
seeds_tool=${SEEDS_TOOL:-build/tools/seeds}
workers=${WORKERS:-1}
seeds=${SEEDS:-0 1 2}

run_seed() {
    local s=$1 dir="$out/fashion-mnist/bf16/seed$1" dst="$results/precision-parity/fashion-mnist/bf16/seed$1"
    if [ ! -s "$dir/eval_last/results.json" ]; then
        mkdir -p "$dir"
        # The study's own PGD-AT command for this seed (scripts/reproduction.sh, its protocol and convolution
        # setting), with --precision bf16 and this folder instead of the study's.
        local study; study=$(ARMS=pgd_at TRAIN=$train bash scripts/reproduction.sh list study fashion-mnist | grep -- " --seed $s ")
        local cmd="${study% --out *} --precision bf16 --out $dir"
        echo "$cmd" | tee "$dir/command.txt"
        CLASSWISE_THREADS=1 $cmd --resume >> "$dir/log.txt" 2>&1 || { echo "FAILED: $cmd (see $dir/log.txt)"; return 1; }
    fi
    mkdir -p "$dst/eval_last"
    cp "$dir"/{job.json,history.csv,train_log.csv,command.txt} "$dst/" && cp "$dir/eval_last/results.json" "$dst/eval_last/"
}
export -f run_seed; export out results train
printf '%s\n' $seeds | xargs -P "$workers" -I{} bash -c 'run_seed {}'
echo "== bf16 (training steps), seeds $seeds"
bf16_runs=() fp32_runs=()
for s in $seeds; do
    bf16_runs+=("$results/precision-parity/fashion-mnist/bf16/seed$s/eval_last")
    fp32_runs+=("$results/reproduction/fashion-mnist/pgd_at/seed$s/eval_last")
done
"$seeds_tool" "${bf16_runs[@]}"
if ls "${fp32_runs[@]/%//results.json}" > /dev/null 2>&1; then
    echo "== fp32, the reproduction study's PGD-AT seeds $seeds"
    "$seeds_tool" "${fp32_runs[@]}"
else
    echo "(the fp32 side, $results/reproduction/fashion-mnist/pgd_at/seed{${seeds// /,}}, is not all there yet: run scripts/reproduction.sh study)"
fi
