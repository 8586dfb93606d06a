#!/bin/sh
# The folders form layers: a file may include its own folder and folders of lower layers only. Two folders on one
# line are siblings and may not include each other. docs/layers.md says what each layer holds and why.
#
#   tests/check_layers.sh [ROOT]      ROOT: the repository (default: the folder above this script)
#
# Prints one line per include that runs against the order ("eval/x.cpp:12: includes train/y.h: eval (layer 4)
# may not include train (layer 5)") and exits 1; prints "layers: N includes in order" and exits 0 otherwise. A folder
# with C++ sources that the table does not name is an error too, so a new folder has to be given its place.
# tests/ sits above everything (a test may include any layer); "quoted" includes whose first part is not one of
# our folders (third-party headers) are not ours to order.
set -eu

LAYERS='
0  util
1  engine
2  nn datasets
3  attacks
4  eval
5  train
6  fairness
7  report
8  cli
9  jobs
10 study
11 protocols
12 experiments tools bench fuzz
13 tests
'

root=${1:-$(dirname "$0")/..}
cd "$root"

find . -path ./build -prune -o -path './.git' -prune -o -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) -print |
    sed 's#^\./##' | LC_ALL=C sort |
    awk -v layers="$LAYERS" '
    BEGIN {
        n = split(layers, lines, "\n")
        for (i = 1; i <= n; i++) {
            k = split(lines[i], w, " ")
            for (j = 2; j <= k; j++) rank[w[j]] = w[1] + 0
        }
        bad = 0; ok = 0
    }
    {
        file = $0
        if (index(file, "/") == 0) next                     # top-level files belong to no folder
        top = substr(file, 1, index(file, "/") - 1)
        if (!(top in rank)) {
            if (!(top in unplaced)) { unplaced[top] = 1; print top "/: no layer (add the folder to tests/check_layers.sh and docs/layers.md)"; bad++ }
            next
        }
        line_no = 0
        while ((getline text < file) > 0) {
            line_no++
            if (text !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
            inc = text
            sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
            if (index(inc, "/") == 0) continue                 # beside the including file
            to = substr(inc, 1, index(inc, "/") - 1)
            if (!(to in rank)) continue                        # a third-party header
            if (to == top) { ok++; continue }
            if (rank[to] < rank[top]) { ok++; continue }
            why = rank[to] == rank[top] ? "siblings on one layer" : "a higher layer"
            printf "%s:%d: includes %s: %s (layer %d) may not include %s (layer %d, %s)\n", file, line_no, inc, top, rank[top], to, rank[to], why
            bad++
        }
        close(file)
    }
    END {
        if (bad > 0) { printf "layers: %d include(s) against the layer order (tests/check_layers.sh, docs/layers.md)\n", bad; exit 1 }
        printf "layers: %d includes in order\n", ok
    }'
