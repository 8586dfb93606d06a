#!/bin/bash
# The baseline runs of docs/baselines.md (written by scripts/baselines_report.sh; what they show:
# docs/small_runs.md): natural, PGD-AT, TRADES, FAT and MART, 3 seeds each, on Fashion-MNIST and GTSRB-32 (FRL's 17 most frequent classes), small CNNs, CPU. Each run is one `build/tools/train` command (printed
# before it runs); the per-dataset tables come from `build/tools/seeds` over the seeds' eval_*/results.json.
#   scripts/baselines.sh [fashion-mnist|gtsrb32|both] [OUT=runs/baselines]
#   RUNS="trades:1 mart:0" scripts/baselines.sh gtsrb32     # only these method:seed runs (a second worker)
# Two runs go side by side with one CPU thread each (CLASSWISE_THREADS=1): on a 2-core machine that finishes sooner
# than one run on both cores.
set -euo pipefail
which=${1:-both}
out=${2:-runs/baselines}
methods="natural pgd_at trades fat mart"
seeds="0 1 2"

declare -A flags
flags[fashion-mnist]="--dataset fashion-mnist --train-n 4000 --epochs 3 --batch-size 64 --lr 0.05 --eval-n 1000 --epoch-eval-n 500"
flags[gtsrb32]="--dataset gtsrb32 --classes top:17 --train-n 4000 --epochs 3 --batch-size 64 --optimizer adam --lr 0.001 --wd 0 --schedule constant --attack-steps 5 --eval-n 500 --epoch-eval-n 200"

run_dataset() {
    local ds=$1 runs=${RUNS:-}
    [ -n "$runs" ] || runs=$(for m in $methods; do for s in $seeds; do echo "$m:$s"; done; done)
    for run in $runs; do
        local m=${run%%:*} s=${run##*:}
        {
            local dir="$out/$ds/$m/seed$s"
            local cmd="build/tools/train ${flags[$ds]} --method $m --seed $s --final-checkpoints last,best_robust --final-attacks pgd20 --out $dir"
            if [ -s "$dir/eval_last/results.json" ]; then echo "done already: $cmd"; continue; fi
            echo "$cmd"
            mkdir -p "$dir"
            echo "$cmd" > "$dir/command.txt"
            CLASSWISE_THREADS=1 $cmd --resume >> "$dir/log.txt" 2>&1 || { echo "FAILED: $cmd (see $dir/log.txt)"; return 1; }
        }
    done
}

summarise() {
    local ds=$1
    for m in $methods; do
        for ckpt in last best_robust; do
            build/tools/seeds $(for s in $seeds; do echo "$out/$ds/$m/seed$s/eval_$ckpt"; done) --out "$out/$ds/$m/$ckpt"
        done
    done
}

case $which in
    both) run_dataset fashion-mnist & a=$!; run_dataset gtsrb32 & b=$!; wait $a; wait $b
          summarise fashion-mnist; summarise gtsrb32 ;;
    fashion-mnist|gtsrb32) run_dataset "$which"; [ -n "${RUNS:-}" ] || summarise "$which" ;;
    *) echo "baselines.sh: expected fashion-mnist, gtsrb32 or both, got '$which'" >&2; exit 1 ;;
esac
