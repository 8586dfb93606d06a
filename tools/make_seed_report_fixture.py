#!/usr/bin/env python3
"""Writes tests/fixtures/seed_report/: a small tree of seed runs shaped like scripts/fair_methods.sh's output
(command.txt, job.json, selection.json, eval_<checkpoint>/results.json as the contract requires it) and
the page scripts/fair_methods_report.sh made from it when it computed its tables with jq and awk
(expected_fair_methods.md, written by hand-running that earlier script: tests/test_seed_report.cpp checks that the
tools give the same page).

The accuracies are whole counts over 20 test images per class, drawn from a fixed generator, with the cases the
page distinguishes built in: a lift every seed supports ("real"), lifts within the seeds, a zero lift, a
checkpoint only two seeds have, a seed without selection.json.
    python3 tools/make_seed_report_fixture.py
"""
import json
import os
import random

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "seed_report", "fair")
N = 20  # test images per class


def accuracies(rng, base, classes, floor=None):
    out = []
    for k in range(classes):
        p = min(1.0, max(0.0, base[k] + rng.uniform(-0.1, 0.1)))
        out.append(round(p * N) / N)
    if floor is not None:
        out[floor] = 0.0
    return out


def evaluation(name, acc, clean=None):
    """One evaluation with every field the results.json contract requires (docs/results_json.md): the confusion
    matrix puts each class's errors on the next class; worst and best class as the evaluator picks them (the first
    on ties)."""
    C = len(acc)
    confusion = [[0] * C for _ in range(C)]
    for k, a in enumerate(acc):
        confusion[k][k] = round(a * N)
        confusion[k][(k + 1) % C] += N - round(a * N)
    e = {"name": name, "accuracy": sum(acc) / C, "per_class_accuracy": acc,
         "worst_class": acc.index(min(acc)), "best_class": acc.index(max(acc)), "confusion": confusion, "cfp": [0.0] * C}
    if clean is not None:
        e["attack"] = name
        e["per_class_boundary_error"] = [max(0.0, c - a) for c, a in zip(clean, acc)]
    return e


def results(ds, method, seed, classes, clean, pgd):
    return {"schema": "classwise.results/1", "experiment": "fair_methods", "dataset": ds, "split": "test",
            "num_examples": N * len(classes), "classes": classes, "model": "small_cnn", "method": method,
            "seed": seed, "device": "cpu", "evaluations": [evaluation("clean", clean), evaluation("pgd20", pgd, clean)]}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(ds, classes, method, seed, ckpts, clean_base, pgd_base, floor, selection=True):
    d = os.path.join(ROOT, ds, method, "seed%d" % seed)
    write(os.path.join(d, "command.txt"),
          "build/tools/train --dataset %s --method %s --seed %d --out runs/fair/%s/%s/seed%d\n"
          % (ds, method, seed, ds, method, seed))
    write(os.path.join(d, "job.json"), json.dumps({"method": method + ": the fixture's description"}, indent=2) + "\n")
    if selection:
        write(os.path.join(d, "selection.json"),
              json.dumps({"best": {"robust": {"epoch": 1 + (seed + len(method)) % 3}}}, indent=2) + "\n")
    rng = random.Random("%s/%s/%d" % (ds, method, seed))
    for ckpt in ckpts:
        r = results(ds, method, seed, classes, accuracies(rng, clean_base, len(classes)),
                    accuracies(rng, pgd_base, len(classes), floor))
        write(os.path.join(d, "eval_" + ckpt, "results.json"), json.dumps(r, indent=1) + "\n")


def main():
    fm = ["T-shirt", "Trouser", "Shirt", "Bag"]
    for s in range(3):
        run("fashion-mnist", fm, "pgd_at", s, ["last", "best_robust"], [0.8, 0.95, 0.15, 0.9], [0.5, 0.8, 0.0, 0.7], 2)
        # FRL: clean worst class far above PGD-AT's on every seed (a real lift); PGD-20 worst at the same 0 floor.
        run("fashion-mnist", fm, "frl", s, ["last", "best_robust"], [0.8, 0.9, 0.6, 0.85], [0.45, 0.75, 0.2, 0.7], 2,
            selection=(s != 1))
        # CFA's FAWA model exists for two seeds only.
        run("fashion-mnist", fm, "cfa", s, ["last", "best_robust"] + (["ema_last"] if s < 2 else []),
            [0.8, 0.95, 0.2, 0.9], [0.5, 0.8, 0.05, 0.7], None)
    gt = ["stop", "yield", "30 km/h"]
    for s in range(3):
        run("gtsrb32", gt, "pgd_at", s, ["last", "best_robust"], [0.9, 0.8, 0.3], [0.6, 0.5, 0.1], None)
        run("gtsrb32", gt, "fair_tat", s, ["last", "best_robust"], [0.85, 0.8, 0.4], [0.55, 0.5, 0.1], None)


if __name__ == "__main__":
    main()
