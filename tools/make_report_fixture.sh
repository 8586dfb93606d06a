#!/usr/bin/env bash
# Rebuilds tests/fixtures/report_run: a real, short training run (Fashion-MNIST, PGD-AT, the main job's quick settings
# with a per-class step audit), keeping only the files the report reads — eval_last/results.json, history.csv, steps.csv,
# train_log.csv, job.json — not the checkpoints or records. Rerun it when results.json or the CSV files change shape.
#   tools/make_report_fixture.sh        (needs a build: make)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/tools/train --dataset fashion-mnist --method pgd_at --train-n 4000 --epochs 2 --batch-size 64 --lr 0.05 \
    --eval-n 500 --final-attacks fgsm,pgd20 --final-checkpoints last --audit-steps 25 --out "$tmp/run" > "$tmp/log.txt"
dest=tests/fixtures/report_run
rm -rf "$dest" && mkdir -p "$dest/eval_last"
cp "$tmp/run/eval_last/results.json" "$dest/eval_last/"
cp "$tmp/run"/{history.csv,steps.csv,train_log.csv,job.json} "$dest/"
# The run's paths name this machine's temporary folder: record them as the folder a user would have used.
sed -i "s#$tmp/run#runs/report_run#g" "$dest/eval_last/results.json" "$dest"/*.json
du -sh "$dest"
