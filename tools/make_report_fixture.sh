#!/usr/bin/env bash
# Rebuilds tests/fixtures/report_run: a real, short quickstart run (Fashion-MNIST, PGD-AT, the --quick preset with
# a per-class step audit), keeping only the files the report reads — eval_last/results.json, history.csv, steps.csv,
# train_log.csv, job.json — not the checkpoints or records. Rerun it when results.json or the CSV files change shape.
#   tools/make_report_fixture.sh        (needs a build: make)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
./experiments/quickstart --quick --epochs 2 --audit-steps 25 --out "$tmp/run" > "$tmp/log.txt"
dest=tests/fixtures/report_run
rm -rf "$dest" && mkdir -p "$dest/eval_last"
cp "$tmp/run/eval_last/results.json" "$dest/eval_last/"
cp "$tmp/run"/{history.csv,steps.csv,train_log.csv,job.json} "$dest/"
du -sh "$dest"
