#!/bin/bash
# Writes docs/fair_methods.md from the runs of scripts/fair_methods.sh: per dataset, a summary (overall, worst
# class and spread, clean and PGD-20, mean ± std over 3 seeds, for the last and best checkpoints of every method)
# with the worst-class verdict against PGD-AT, then each method's per-class table (build/tools/seeds).
#   scripts/fair_methods_report.sh [RUNS=runs/fair] [OUT=docs/fair_methods.md]
# A worst-class lift counts as real only when it exceeds the seeds' spread: mean(method) − mean(PGD-AT) > std(method)
# + std(PGD-AT) of the per-seed worst-class PGD-20 accuracy.
set -euo pipefail
source "$(dirname "$0")/report_sections.sh"
runs=${1:-runs/fair}
out=${2:-docs/fair_methods.md}
methods="pgd_at trades frl cfa fair_tat"
declare -A ckpts=([pgd_at]="last best_robust" [trades]="last best_robust" [frl]="last best_robust"
                  [cfa]="last best_robust ema_last" [fair_tat]="last best_robust")

# build/tools/seeds over the seeds that have this checkpoint's evaluation; prints the seeds folder or nothing.
summarise() {
    local dir=$1 ckpt=$2
    local found=()
    for s in 0 1 2; do [ -s "$dir/seed$s/eval_$ckpt/results.json" ] && found+=("$dir/seed$s/eval_$ckpt"); done
    [ ${#found[@]} -gt 0 ] || return 0
    build/tools/seeds "${found[@]}" --out "$dir/$ckpt" > /dev/null
    echo "$dir/$ckpt"
}
pm() { printf "%.1f ± %.1f" $(jq -r "$1 | \"\(.[0] * 100) \(.[1] * 100)\"" "$2"); }

mkdir -p "$(dirname "$out")"
{
    echo "# Fair training methods against PGD-AT and TRADES: per class, 3 seeds"
    echo
    echo "Written by \`scripts/fair_methods_report.sh\` from the runs of \`scripts/fair_methods.sh\` (CPU, one thread per"
    echo "run, small CNNs, 4,000 training images, 3 epochs). Accuracies in %, mean ± sample std over seeds 0, 1, 2;"
    echo "worst class and spread (best − worst class) per seed, then averaged. PGD-20: L∞, α = ε/4, one uniform start,"
    echo "eval mode, on the first \`--eval-n\` test images. Every run holds out the same validation split (the first 2%"
    echo "of each class in dataset order: Fashion-MNIST 120 per class, 1,200; GTSRB-17 11–22 per class, 282), which chooses best_robust"
    echo "(the epoch with the highest validation PGD-10 accuracy) and feeds FRL's constraints and CFA's FAWA."
    echo "*Lift* is the worst-class PGD-20 accuracy minus PGD-AT's at the same checkpoint; it is called real only when it"
    echo "exceeds the two methods' seed standard deviations added."
    for ds in fashion-mnist gtsrb32; do
        [ -d "$runs/$ds/pgd_at" ] || continue
        echo
        echo "## $ds"
        echo
        echo "| method | checkpoint | clean | clean worst | PGD-20 | PGD-20 worst | PGD-20 spread | worst-class lift vs PGD-AT |"
        echo "|---|---|---|---|---|---|---|---|"
        for m in $methods; do
            for ckpt in ${ckpts[$m]}; do
                sdir=$(summarise "$runs/$ds/$m" "$ckpt")
                [ -n "$sdir" ] || continue
                j="$sdir/seeds.json"
                n=$(jq '.runs | length' "$j")
                ref="$runs/$ds/pgd_at/$([ "$ckpt" = ema_last ] && echo last || echo "$ckpt")/seeds.json"
                read -r d band < <(jq -r --slurpfile r "$ref" '"\((.pgd20.worst_class[0] - $r[0].pgd20.worst_class[0]) * 100) \((.pgd20.worst_class[1] + $r[0].pgd20.worst_class[1]) * 100)"' "$j")
                lift=$(awk -v d="$d" -v b="$band" 'BEGIN { printf "%+.1f (%s %.1f)", d, (d > b ? "real: beyond the seeds'"'"'" : "within the seeds'"'"'"), b }')
                [ "$m" = pgd_at ] && lift="—"
                echo "| $m | $ckpt$([ "$n" -lt 3 ] && echo " ($n seeds)") | $(pm .clean.overall "$j") | $(pm .clean.worst_class "$j") | $(pm .pgd20.overall "$j") | $(pm .pgd20.worst_class "$j") | $(pm .pgd20.spread "$j") | $lift |"
            done
        done
        for m in $methods; do
            [ -f "$runs/$ds/$m/seed0/command.txt" ] || continue
            method_section "$ds: $m" "$runs/$ds/$m" "${ckpts[$m]}"
        done
    done
} > "$out"
echo "wrote $out"
