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

# The seeds' evaluation folders of a checkpoint that exist, one per line.
evals() {
    local dir=$1 ckpt=$2
    for s in 0 1 2; do [ -s "$dir/seed$s/eval_$ckpt/results.json" ] && echo "$dir/seed$s/eval_$ckpt"; done
    return 0
}

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
                mapfile -t mine < <(evals "$runs/$ds/$m" "$ckpt")
                [ ${#mine[@]} -gt 0 ] || continue
                # The per-class table of method_section, and the summary row (build/tools/seeds computes both).
                build/tools/seeds "${mine[@]}" --out "$runs/$ds/$m/$ckpt" > /dev/null
                if [ "$m" = pgd_at ]; then
                    row=$(build/tools/seeds "${mine[@]}" --row)
                else
                    mapfile -t ref < <(evals "$runs/$ds/pgd_at" "$([ "$ckpt" = ema_last ] && echo last || echo "$ckpt")")
                    row=$(build/tools/seeds "${mine[@]}" --row --reference "${ref[@]}")
                fi
                echo "| $m | $ckpt$([ ${#mine[@]} -lt 3 ] && echo " (${#mine[@]} seeds)") | $row |"
            done
        done
        for m in $methods; do
            [ -f "$runs/$ds/$m/seed0/command.txt" ] || continue
            method_section "$ds: $m" "$runs/$ds/$m" "${ckpts[$m]}"
        done
    done
} > "$out"
echo "wrote $out"
