#!/bin/bash
# Writes docs/baselines.md from the runs of scripts/baselines.sh: for every dataset and method, the command, the
# epochs the best checkpoints came from, and the per-class tables (build/tools/seeds) of the last and best_robust
# checkpoints.   scripts/baselines_report.sh [RUNS=runs/baselines] [OUT=docs/baselines.md]
set -euo pipefail
source "$(dirname "$0")/report_sections.sh"
runs=${1:-runs/baselines}
out=${2:-docs/baselines.md}
mkdir -p "$(dirname "$out")"
{
    echo "# Baselines: per-class clean and PGD-20 accuracy over 3 seeds"
    echo
    echo "Written by \`scripts/baselines_report.sh\` from the runs of \`scripts/baselines.sh\` (CPU, one thread per run)."
    echo "Each table is \`build/tools/seeds\` over the three seeds' \`eval_<checkpoint>/results.json\`: accuracies in %,"
    echo "mean ± sample std over seeds 0, 1, 2; worst class and spread (best − worst class) per seed, then averaged."
    echo "Robust accuracy counts as AutoAttack does (clean-correct and not broken). PGD-20: L∞, α = ε/4, one uniform"
    echo "random start, eval mode. best_robust = the epoch with the highest PGD-10 accuracy (α = ε/4) on the per-epoch"
    echo "test subset (the first \`--epoch-eval-n\` test images, which the final evaluation's \`--eval-n\` images include —"
    echo "Rice et al. select on the test set too); last = the model after the last epoch."
    for ds in fashion-mnist gtsrb32; do
        [ -d "$runs/$ds" ] || continue
        echo
        echo "## $ds"
        for m in natural pgd_at trades fat mart; do
            [ -f "$runs/$ds/$m/seed0/command.txt" ] || continue
            method_section "$m" "$runs/$ds/$m" "last best_robust"
        done
    done
} > "$out"
echo "wrote $out"
