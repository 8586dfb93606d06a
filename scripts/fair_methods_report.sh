#!/bin/bash
# Writes docs/fair_methods.md from the runs of scripts/fair_methods.sh: per dataset, a summary (overall, worst
# class and spread, clean and PGD-20, mean ± std over 3 seeds, for the last and best checkpoints of every method)
# with the worst-class verdict against PGD-AT, then each method's per-class table (build/tools/seeds).
#   scripts/fair_methods_report.sh [RUNS=runs/fair] [OUT=docs/fair_methods.md]
# A worst-class lift (mean over seeds of the method's worst-class PGD-20 accuracy minus PGD-AT's, same checkpoint)
# counts as real only when it exceeds the seeds' spread: every seed of the method above every seed of PGD-AT.
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
# Per seed, in %: the worst class's and the bottom three classes' mean PGD-20 accuracy, the worst class's clean
# accuracy ("worst bottom3 clean_worst" lines).
per_seed() {
    for r in $(jq -r '.runs[]' "$1"); do
        jq -r '[.evaluations[] | {(.name): (.per_class_accuracy | sort)}] | add
               | "\(.pgd20[0] * 100) \((.pgd20[0] + .pgd20[1] + .pgd20[2]) / 3 * 100) \(.clean[0] * 100)"' "$r/results.json"
    done
}
# mean ± std of column $2 of per_seed's lines
col_pm() { awk -v c="$2" '{ x[NR] = $c; s += $c } END { m = s / NR; for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2;
                                                    printf "%.1f ± %.1f", m, (NR > 1 ? sqrt(v / (NR - 1)) : 0) }' <<< "$1"; }
# The lift of column $3 over the reference's, real only when every seed of the method beats every seed of the
# reference (the seeds' ranges do not overlap).
lift() { awk -v c="$3" 'FNR == 1 { f++ } f == 1 { m[++n] = $c } f == 2 { r[++k] = $c }
        END { lo = 1e9; for (i = 1; i <= n; i++) { s += m[i]; if (m[i] < lo) lo = m[i] }
              hi = -1e9; for (i = 1; i <= k; i++) { t += r[i]; if (r[i] > hi) hi = r[i] }
              d = s / n - t / k
              printf "%+.1f%s", d, (lo > hi ? " (real)" : d == 0 ? "" : " (within the seeds)") }' <(echo "$1") <(echo "$2"); }

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
    echo "*Bottom 3* is the mean PGD-20 accuracy of the three weakest classes (a finer view where the worst class sits at"
    echo "0%). *Lift* is the method's mean minus PGD-AT's at the same checkpoint (CFA's FAWA model against PGD-AT's last);"
    echo "it is called real only when it exceeds the seeds' spread: every seed of the method above every seed of PGD-AT."
    for ds in fashion-mnist gtsrb32; do
        [ -d "$runs/$ds/pgd_at" ] || continue
        echo
        echo "## $ds"
        echo
        echo "| method | checkpoint | clean | clean worst | PGD-20 | PGD-20 worst | PGD-20 bottom 3 | PGD-20 spread | lift: PGD-20 worst | lift: PGD-20 bottom 3 | lift: clean worst |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|"
        for m in $methods; do
            for ckpt in ${ckpts[$m]}; do
                sdir=$(summarise "$runs/$ds/$m" "$ckpt")
                [ -n "$sdir" ] || continue
                j="$sdir/seeds.json"
                n=$(jq '.runs | length' "$j")
                mine=$(per_seed "$j")
                ref=$(per_seed "$runs/$ds/pgd_at/$([ "$ckpt" = ema_last ] && echo last || echo "$ckpt")/seeds.json")
                if [ "$m" = pgd_at ]; then lw="—"; l3="—"; lc="—"
                else lw=$(lift "$mine" "$ref" 1); l3=$(lift "$mine" "$ref" 2); lc=$(lift "$mine" "$ref" 3); fi
                echo "| $m | $ckpt$([ "$n" -lt 3 ] && echo " ($n seeds)") | $(pm .clean.overall "$j") | $(pm .clean.worst_class "$j") | $(pm .pgd20.overall "$j") | $(pm .pgd20.worst_class "$j") | $(col_pm "$mine" 2) | $(pm .pgd20.spread "$j") | $lw | $l3 | $lc |"
            done
        done
        for m in $methods; do
            [ -f "$runs/$ds/$m/seed0/command.txt" ] || continue
            method_section "$ds: $m" "$runs/$ds/$m" "${ckpts[$m]}"
        done
    done
} > "$out"
echo "wrote $out"
