# Sourced by the *_report.sh scripts: one method's section of a seeds report (build/tools/seeds reads the JSON).
#   method_section HEADING RUN_DIR "CHECKPOINTS" : the command of seed 0, the method's description, the best_robust
#   epochs of the seeds, and build/tools/seeds' per-class table of each checkpoint summarised under RUN_DIR/<ckpt>.
method_section() {
    local heading=$1 dir=$2 ckpts=$3
    echo
    echo "### $heading"
    echo
    echo "    $(cat "$dir/seed0/command.txt")   # and --seed 1, --seed 2"
    echo
    echo "Method: $(build/tools/seeds --method-of "$dir/seed0")"
    echo
    echo "best_robust epochs (seeds 0, 1, 2): $(build/tools/seeds --best-epochs "$dir"/seed{0,1,2})"
    for ckpt in $ckpts; do
        [ -f "$dir/$ckpt/seeds.md" ] || continue
        echo
        echo "**$ckpt**"
        echo
        sed '/^$/,$d' "$dir/$ckpt/seeds.md"
    done
}
