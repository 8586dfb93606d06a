#!/bin/bash
# The fair-method runs of docs/fair_methods.md (written by scripts/fair_methods_report.sh): PGD-AT, TRADES, FRL
# (Reweight+Remargin, fine-tuned from the PGD-AT model of the same seed), CFA (CCM + FAWA) and FAIR-TAT, 3 seeds each, on Fashion-MNIST (eps 0.1) and GTSRB-32 (FRL's
# 17 most frequent classes, FRL's eps 12/255), small CNNs, CPU. Every run holds out the same validation split
# (the first 2% of each class in dataset order), so all methods train on the same images and every best checkpoint
# is chosen on validation, never on test images. Each run is one `build/tools/train` command, printed and kept
# in its folder; the tables come from scripts/fair_methods_report.sh.
#   scripts/fair_methods.sh [OUT=runs/fair] [WORKERS=2]
# Runs go to a queue that WORKERS processes drain with one CPU thread each; a finished run is never redone, an
# interrupted one resumes (--resume), and an FRL run waits for its PGD-AT hot start.
set -euo pipefail
source "$(dirname "$0")/lib/job_queue.sh"
out=${1:-runs/fair}
workers=${2:-2}
seeds="0 1 2"

declare -A data optim
data[fashion-mnist]="--dataset fashion-mnist --train-n 4000 --epochs 3 --batch-size 64 --eval-n 1000 --epoch-eval-n 500 --val-split fraction:0.02"
optim[fashion-mnist]="--lr 0.05"
data[gtsrb32]="--dataset gtsrb32 --classes top:17 --eps 12/255 --train-n 4000 --epochs 3 --batch-size 64 --attack-steps 5 --eval-n 500 --epoch-eval-n 200 --val-split fraction:0.02"
optim[gtsrb32]="--optimizer adam --lr 0.001 --wd 0 --schedule constant"

# method -> its flags (the dataset's optimiser unless the method brings its own); FRL's fine-tuning keeps the
# reference code's SGD (momentum 0.9, wd 5e-4, constant lr) at 10x its 0.001, since it runs 3 epochs instead of 40.
method_flags() {
    local m=$1 ds=$2 s=$3
    case $m in
        pgd_at)   echo "--method pgd_at ${optim[$ds]}" ;;
        trades)   echo "--method trades ${optim[$ds]}" ;;
        cfa)      echo "--method cfa_at --cfa-begin 1 --ema fawa --ema-start 1 ${optim[$ds]} --final-checkpoints last,best_robust,ema_last" ;;
        fair_tat) echo "--method fair_tat ${optim[$ds]}" ;;
        frl)      echo "--method frl_rwrm --init $out/$ds/pgd_at/seed$s/last.safetensors --optimizer sgd --lr 0.01 --wd 5e-4 --schedule constant" ;;
    esac
}

run_one() {
    local ds=$1 m=$2 s=$3
    local dir="$out/$ds/$m/seed$s"
    local flags; flags=$(method_flags "$m" "$ds" "$s")
    local cmd="build/tools/train ${data[$ds]} $flags --seed $s --final-attacks pgd20 --out $dir"
    [[ "$flags" == *--final-checkpoints* ]] || cmd="$cmd --final-checkpoints last,best_robust"
    if [ -s "$dir/eval_last/results.json" ]; then echo "done already: $dir"; return 0; fi
    if [ "$m" = frl ]; then
        while [ ! -s "$out/$ds/pgd_at/seed$s/eval_last/results.json" ]; do sleep 20; done
    fi
    mkdir -p "$dir"
    echo "$cmd" | tee "$dir/command.txt"
    CLASSWISE_THREADS=1 $cmd --resume >> "$dir/log.txt" 2>&1 || { echo "FAILED: $cmd (see $dir/log.txt)"; return 1; }
}

# The queue: hot starts first, FRL last, so an FRL run seldom waits.
mkdir -p "$out"
queue="$out/queue.txt"
: > "$queue"
for m in pgd_at trades cfa fair_tat frl; do
    for ds in gtsrb32 fashion-mnist; do
        for s in $seeds; do echo "$ds $m $s" >> "$queue"; done
    done
done
worker() {
    while true; do
        local job
        job=$(queue_pop "$queue")
        [ -n "$job" ] || return 0
        run_one $job || true
    done
}
for w in $(seq "$workers"); do worker & done
wait
