#!/bin/bash
# The CIFAR-10 pilot (docs/reproduction.md, "CIFAR-10: the CPU recipe"): PGD-AT alone under candidate recipes, to
# choose the one the CIFAR-10 study and `cifar10_fairtat --cpu-scale` use. A recipe must meet four criteria, on the
# whole 10,000-image test set, averaged over seeds: (a) the worst class keeps >= 15% PGD-20, (b) overall PGD-20 >= 35%
# at eps 8/255 (or the nearest radius that reaches it), (c) the last two epochs' PGD-20 within one point, (d) one run, final evaluation included, within 45
# minutes on two cores (or 90 minutes on one core, two runs side by side, as this script runs them).
#   scripts/cifar10_pilot.sh CANDIDATE ...          run each candidate's seeds (SEEDS, default "0 1")
#   scripts/cifar10_pilot.sh list CANDIDATE ...     print the jobs, run nothing
# Environment: SEEDS, WORKERS (2: one single-threaded process per core), OUT (runs/cifar10-pilot), RESULTS
# (results/reproduction/cifar10-pilot), TRAIN (build/tools/train). Each job is resumable (--resume): stop the script
# at any moment (its state is saved) and start it again. A finished job's small files (never checkpoints) go to
# RESULTS/<candidate>/pgd_at/seed<k>/, with wall.txt and cpu_seconds.txt (the run's wall-clock and CPU seconds, summed
# over its resumptions).
set -euo pipefail
source "$(dirname "$0")/lib/job_queue.sh"
list_only=0
if [ "${1:-}" = list ]; then list_only=1; shift; fi
[ $# -ge 1 ] || { echo "usage: scripts/cifar10_pilot.sh [list] CANDIDATE ... (candidates: $(sed -n 's/^    \([a-z0-9_.-]*\)) *flags=.*/\1/p' "$0" | tr '\n' ' '))" >&2; exit 2; }
seeds=${SEEDS:-0 1}
case $seeds in *[!0-9\ ]*|'') echo "scripts/cifar10_pilot.sh: SEEDS must be seed numbers separated by spaces, not '$seeds'" >&2; exit 2 ;; esac
workers=${WORKERS:-2}
out=${OUT:-runs/cifar10-pilot}
results=${RESULTS:-results/reproduction/cifar10-pilot}
train=${TRAIN:-build/tools/train}

# What every candidate shares: the papers' batch, the CFA/FAIR-TAT validation split (the first 100 images
# of each class, 2%), a peak learning rate of 0.2, evaluation
# by PGD-20 each epoch (validation split, and the first 500 test images) and on the whole test set at the end.
# One convolution setting for every run (oneDNN fp32), fixed here rather than taken from the environment.
common="--dataset cifar10 --batch-size 128 --val-split first:100 --optimizer sgd --lr 0.2 --momentum 0.9 --wd 5e-4 --method pgd_at --eval-n 0 --epoch-eval-n 500 --eval-steps 20 --final-attacks pgd20 --final-checkpoints last"
convolutions="env CLASSWISE_CONV=onednn CLASSWISE_PRECISION=fp32 CLASSWISE_THREADS=1"

candidate_flags() {  # candidate
    local flags
    case $1 in
    # WideResNet-16-1 (16/32/64 channels, 0.18 M parameters), PGD-2 training (step 1.25 eps), 9 epochs.
    wrn16_1-pgd2-e9) flags="--eps 8/255 --arch wrn16_1 --attack-steps 2 --epochs 9 --schedule cyclic" ;;
    # The same at eps 6/255: at 8/255 the worst class (cat) keeps 7% PGD-20, under criterion (a)'s 15%; the issue's
    # fallback is the nearest radius that meets the criteria, at a stated cost.
    wrn16_1-pgd2-e9-eps6) flags="--eps 6/255 --arch wrn16_1 --attack-steps 2 --epochs 9 --schedule cyclic" ;;
    # WideResNet-10-2 (32/64/128 channels, one block per stage), PGD-2 training, 6 epochs.
    wrn10_2-pgd2-e6) flags="--eps 8/255 --arch wrn10_2 --attack-steps 2 --epochs 6 --schedule cyclic" ;;
    # At 6/255 cat keeps 13.4% (two seeds), still under (a): the papers' other common radius, 4/255.
    wrn16_1-pgd2-e9-eps4) flags="--eps 4/255 --arch wrn16_1 --attack-steps 2 --epochs 9 --schedule cyclic" ;;
    # The one-cycle runs still gain about 2 points in their last epoch (c): the papers' step schedule instead
    # (0.2, divided by 10 at 50% and 75% of the run), whose last epochs run at 0.002.
    wrn16_1-pgd2-e9-eps6-step) flags="--eps 6/255 --arch wrn16_1 --attack-steps 2 --epochs 9 --schedule piecewise" ;;
    *) echo "scripts/cifar10_pilot.sh: unknown candidate '$1'" >&2; return 2 ;;
    esac
    echo "$flags"
}

for c in "$@"; do candidate_flags "$c" > /dev/null; done
jobs() { local c s; for s in $seeds; do for c in "$@"; do echo "$c $s"; done; done; }
if [ $list_only = 1 ]; then
    jobs "$@" | while read -r c s; do echo "$convolutions $train $common $(candidate_flags "$c") --seed $s --out $out/$c/pgd_at/seed$s"; done
    exit 0
fi

collect() {  # run folder, results folder
    local f
    mkdir -p "$2"
    for f in job.json selection.json history.csv train_log.csv command.txt cpu.txt wall.txt cpu_seconds.txt; do [ -f "$1/$f" ] && cp "$1/$f" "$2/"; done
    for f in "$1"/eval_*/results.json; do
        [ -f "$f" ] && mkdir -p "$2/$(basename "$(dirname "$f")")" && cp "$f" "$2/$(basename "$(dirname "$f")")/"
    done
    return 0
}

run_one() {  # candidate seed; 2 when a signal stopped it
    local c=$1 s=$2 dir="$out/$1/pgd_at/seed$2" cmd rc=0 t0 t1
    [ -s "$dir/eval_last/results.json" ] && { collect "$dir" "$results/$c/pgd_at/seed$s"; return 0; }
    mkdir -p "$dir"
    [ -s "$dir/cpu.txt" ] || { sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1
        echo "vector instructions: $(grep -o -w -E 'avx2|avx512f|avx512_bf16|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"; } > "$dir/cpu.txt"
    cmd="$convolutions $train $common $(candidate_flags "$c") --seed $s --out $dir"
    echo "$cmd" > "$dir/command.txt"
    echo "start $c seed $s"
    t0=$(date +%s)
    # The process's CPU seconds beside its wall time: a single-threaded run's CPU time is what it takes with a core to
    # itself, whatever else the machine runs meanwhile.
    local TIMEFORMAT='%U %S' used
    used=$( { time $cmd --resume >> "$dir/log.txt" 2>&1; } 2>&1 ) || rc=$?
    t1=$(date +%s)
    echo $(( $(cat "$dir/wall.txt" 2>/dev/null || echo 0) + t1 - t0 )) > "$dir/wall.txt"
    awk -v prev="$(cat "$dir/cpu_seconds.txt" 2>/dev/null || echo 0)" '{ printf "%d\n", prev + $1 + $2 }' <<< "$used" > "$dir/cpu_seconds.txt"
    if [ "$rc" = 130 ] || [ "$rc" = 143 ]; then echo "stopped (state saved): $c seed $s"; return 2; fi
    [ "$rc" = 0 ] || { echo "FAILED: $c seed $s (see $dir/log.txt)"; return 1; }
    collect "$dir" "$results/$c/pgd_at/seed$s"
    echo "done $c seed $s in $(cat "$dir/wall.txt") s"
}

mkdir -p "$out"
queue="$out/queue.txt"
jobs "$@" > "$queue"
worker() {
    local job rc
    while job=$(queue_pop "$queue") && [ -n "$job" ]; do
        rc=0; run_one $job || rc=$?
        [ "$rc" = 2 ] && return 2
    done
    return 0
}
trap 'kill 0 2>/dev/null' INT TERM
for _ in $(seq "$workers"); do worker & done
wait
