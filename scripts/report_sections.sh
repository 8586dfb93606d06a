# Sourced by the *_report.sh scripts: one method's section of a seeds report.
#   method_section HEADING RUN_DIR "CHECKPOINTS" : the command of seed 0, the method's description, the best_robust
#   epochs of the seeds, and build/tools/seeds' per-class table of each checkpoint summarised under RUN_DIR/<ckpt>.
method_section() {
    local heading=$1 dir=$2 ckpts=$3
    echo
    echo "### $heading"
    echo
    echo "    $(cat "$dir/seed0/command.txt")   # and --seed 1, --seed 2"
    echo
    echo "Method: $(jq -r .method "$dir/seed0/job.json")"
    echo
    echo "best_robust epochs (seeds 0, 1, 2): $(for s in 0 1 2; do jq -r .best.robust.epoch "$dir/seed$s/selection.json" 2>/dev/null || echo "?"; done | paste -sd, -)"
    for ckpt in $ckpts; do
        [ -f "$dir/$ckpt/seeds.md" ] || continue
        echo
        echo "**$ckpt**"
        echo
        sed '/^$/,$d' "$dir/$ckpt/seeds.md"
    done
}
