#!/bin/bash
# `make test`'s runner: the suite as two processes side by side, split by test file (Catch2's -# file tags), their
# outputs printed one after the other and their "N passed, N failed, N skipped" lines summed into one. About a third
# of the suite's time is in tests whose subprocesses run on one thread (the study, signal and Slurm tests), where a
# single process leaves the second core idle. The Slurm tests start a one-node cluster each, so their files stay in
# one process. TEST_SHARDS=1 runs the suite as one process.
#   tests/run_shards.sh build/tests/classwise_tests
set -uo pipefail
bin=${1:?usage: tests/run_shards.sh TEST_BINARY}
shards=${TEST_SHARDS:-2}
case $shards in 1|2) ;; *) echo "tests/run_shards.sh: TEST_SHARDS must be 1 or 2, not '$shards'" >&2; exit 2 ;; esac
[ "$shards" = 1 ] && exec "$bin"

# Seconds each of the slowest files took in one process (two Zen 3 cores, 2026-11-27, `--durations yes` summed by
# file): the split balances them (predicted 172 s against 168 s; the earlier guesses gave 187 against 153, and CI
# measured 204 against 168); every other file counts as one second. A file missing here only makes the split less even.
declare -A weight=(
    [test_study_slurm]=39 [test_study_cluster]=28 [test_study_signals]=26 [test_benz_grid_runs]=20
    [test_walkthrough_doc]=19 [test_golden_models]=18 [test_benz_features_slurm]=14 [test_nn_models]=14
    [test_reproduction_script]=12 [test_train_job]=12 [test_experiments_frl]=11 [test_evaluator_audit]=9
    [test_experiments_cfp]=9 [test_benz_features_binary]=8 [test_benz_features_jobs]=8 [test_experiment_fairtat]=8
    [test_study]=8 [test_experiments_xu]=6 [test_attacks_strength]=5 [test_benz_longtail]=4 [test_audit_signals]=18
)
files=$("$bin" -# --list-tags | sed -n 's/.*\[#\([A-Za-z0-9_]*\)\].*/\1/p')
[ -n "$files" ] || { echo "tests/run_shards.sh: $bin lists no file tags" >&2; exit 1; }
# The Slurm files first, both to shard 0; then the rest, heaviest first, each to the lighter shard.
load=(0 0)
spec=("" "")
# Each file's tests but the hidden ones ([.]), which a tag names explicitly would otherwise run.
add() { spec[$1]+="${spec[$1]:+,}[#$2]~[.]"; load[$1]=$(( load[$1] + ${weight[$2]:-1} )); }
for f in $files; do case $f in *slurm*) add 0 "$f" ;; esac; done
for f in $(for f in $files; do case $f in *slurm*) ;; *) echo "${weight[$f]:-1} $f" ;; esac; done | sort -k1,1nr -k2 | cut -d' ' -f2); do
    if [ "${load[0]}" -le "${load[1]}" ]; then add 0 "$f"; else add 1 "$f"; fi
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The two lists together must be the whole suite, each test once: checked on the names before anything runs.
names() { "$bin" "$@" --list-test-names-only | grep -v -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$'; }
names > "$dir/all.txt"
names -# "${spec[0]}" > "$dir/0.txt"
names -# "${spec[1]}" > "$dir/1.txt"
if ! cmp -s <(sort "$dir/all.txt") <(sort "$dir/0.txt" "$dir/1.txt"); then
    echo "tests/run_shards.sh: the split by file does not cover the suite exactly once; running one process" >&2
    exec "$bin"
fi

# Passive OpenMP waiting: four threads share two cores, and spinning ones would take turns from working ones.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# Each process's wall time goes to time<k>.txt, so that the split's balance can be read from any run's log.
shard() { local t0=$SECONDS; "$bin" -# "${spec[$1]}" > "$dir/out$1.txt" 2>&1; local rc=$?; echo $((SECONDS - t0)) > "$dir/time$1.txt"; return $rc; }
shard 0 &
first=$!
shard 1 &
second=$!
rc0=0 rc1=0
wait "$first" || rc0=$?
wait "$second" || rc1=$?
passed=0 failed=0 skipped=0
for k in 0 1; do
    echo "== tests, process $((k + 1)) of 2 ($(cat "$dir/time$k.txt" 2>/dev/null || echo "?") s)"
    cat "$dir/out$k.txt"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$dir/out$k.txt" | tail -1)
    [ -n "$line" ] || { echo "tests/run_shards.sh: process $((k + 1)) printed no summary line (it crashed?)"; failed=$((failed + 1)); continue; }
    read -r p _ f _ s _ <<< "${line//,/}"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "== both processes"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] && [ "$failed" = 0 ]
