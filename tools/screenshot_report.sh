#!/usr/bin/env bash
# Renders a run's report page and screenshots it in headless Chromium (Debian's `chromium`), for a person to look
# at: class names legible, no overlapping labels, clean and robust told apart by colour, the worst-class marker.
#
#   tools/screenshot_report.sh [RUN_DIR] [OUT_DIR]
#     RUN_DIR  default: tests/fixtures/report_run (a small real quickstart run kept as a fixture)
#     OUT_DIR  default: build/screenshots — gets report.html, figures/ and top.png, figures.png, training.png
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-tests/fixtures/report_run}
out=${2:-build/screenshots}
command -v chromium > /dev/null || { echo "screenshot_report.sh: chromium not found (apt-get install chromium)" >&2; exit 1; }
[ -x build/tools/report ] || make build/tools/report
rm -rf "$out" && mkdir -p "$out"
build/tools/report "$run" --out "$out"
page="file://$(realpath "$out/report.html")"
shoot() {  # $1: png name, $2: fragment to scroll to ("" for the top), $3: window height
    # --no-sandbox: root in a container has no user namespaces; the page is our own local file.
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1300,"$3" \
             --screenshot="$out/$1" "$page$2" > /dev/null 2>&1
    echo "wrote $out/$1"
}
shoot top.png "" 1500
first_fig=$(grep -o 'id="fig-[^"]*class_accuracy"' "$out/report.html" | head -1 | sed 's/id="//; s/"$//')
shoot figures.png "#$first_fig" 2200
hist=$(grep -o 'id="fig-history_[^"]*"' "$out/report.html" | head -1 | sed 's/id="//; s/"$//')
[ -n "$hist" ] && shoot training.png "#$hist" 2200
