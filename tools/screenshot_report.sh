#!/usr/bin/env bash
# Renders a run's report page and screenshots it in headless Chromium (Debian's `chromium`), for a person to look
# at: class names legible, no overlapping labels, clean and robust told apart by colour, the worst-class marker.
#
#   tools/screenshot_report.sh [RUN_DIR] [OUT_DIR]
#     RUN_DIR  default: tests/fixtures/report_run (a small real quickstart run kept as a fixture)
#     OUT_DIR  default: build/screenshots — gets report.html, figures/, page.png and page.png cut into part<N>.png
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-tests/fixtures/report_run}
out=${2:-build/screenshots}
command -v chromium > /dev/null || { echo "screenshot_report.sh: chromium not found (apt-get install chromium)" >&2; exit 1; }
/usr/bin/python3 -c "import PIL" 2> /dev/null || { echo "screenshot_report.sh: python3-pil not found (apt-get install python3-pil)" >&2; exit 1; }
[ -x build/tools/report ] || make build/tools/report
rm -rf "$out" && mkdir -p "$out"
build/tools/report "$run" --out "$out"
page="file://$(realpath "$out/report.html")"
# One screenshot of the whole page in a tall window (headless Chromium does not scroll to a #fragment before it
# captures), cut into screen-sized parts with Debian's python3-pil so that each can be looked at.
# --no-sandbox: root in a container has no user namespaces; the page is our own local file.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=3000 \
         --window-size=1300,14000 --screenshot="$out/page.png" "$page" > /dev/null 2>&1
/usr/bin/python3 - "$out" <<'PY'
import sys
from PIL import Image
out = sys.argv[1]
page = Image.open(f"{out}/page.png").convert("RGB")
# crop the blank space below the page's end
width, height = page.size
gray = page.convert("L")
bottom = height
while bottom > 1 and min(gray.crop((0, bottom - 40, width, bottom)).getdata()) > 250:
    bottom -= 40
page = page.crop((0, 0, width, bottom))
part = 1800
for i, top in enumerate(range(0, bottom, part)):
    page.crop((0, top, width, min(bottom, top + part))).save(f"{out}/part{i + 1}.png")
    print(f"wrote {out}/part{i + 1}.png")
PY
