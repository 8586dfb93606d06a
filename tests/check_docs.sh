#!/usr/bin/env bash
# Fails when the documentation stops being reference for a user. Run by tests/test_docs_check.cpp.
#
#   tests/check_docs.sh [REPO_DIR]       (default: the repository this script lives in)
#
# Prints one line per problem, "file:line: what — the line", and exits 1 if there is any; 0 otherwise.
# The rules:
#   1. No page narrates how it was made: the tracked Markdown pages (README.md, docs/, results/**/intro.md, ...)
#      never speak of working periods, sessions, leases, "this issue", the development machine or lost copies of
#      papers. A user has none of that context; the history is in git's commit messages. (The test fixtures under
#      tests/ are not pages.)
#   2. The README's verdict table is the one the committed results give: the lines between its two marker lines
#      equal `build/tools/reproduction_report --results results/reproduction --readme -` (the tool is taken from
#      this script's own build; $CW_REPRODUCTION_REPORT names another). Rewrite it with
#      `build/tools/reproduction_report --readme README.md`.
#   3. Every page is reachable: each docs/*.md is linked from docs/README.md, each docs/protocols/*.md from
#      docs/protocols/README.md, and every relative link in a page names a file or folder that exists.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${1:-$here}
tool=${CW_REPRODUCTION_REPORT:-$here/build/tools/reproduction_report}
cd "$root" || { echo "check_docs: cannot enter $root" >&2; exit 2; }

mapfile -d '' pages < <(git ls-files -z '*.md' | grep -zv '^tests/')

status=0
report() {   # file line what text
    printf '%s:%s: %s — %s\n' "$1" "$2" "$3" "$(printf '%s' "$4" | cut -c1-160)"
    status=1
}

# 1. Process words. Assembled from pieces so that this file's own comment above does not have to be excluded.
process="working peri""od|\\bsessi""ons?\\b|\\bleas""e[sd]?\\b|\\b(this|the) iss""ue\\b|\\biss""ue's\\b|developm""ent machine|lost cop""(y|ies)|tables? (were |was )?lo""st|our co""py"
if [ ${#pages[@]} -gt 0 ]; then
    while IFS= read -r -d '' f && IFS= read -r hit; do
        n=${hit%%:*}; line=${hit#*:}
        [[ ${line,,} =~ ($process) ]] && report "$f" "$n" "a page speaks of how it was made (${BASH_REMATCH[1]})" "$line"
    done < <(printf '%s\0' "${pages[@]}" | xargs -0 grep -nHIiE --null "$process" 2>/dev/null)
fi

# 2. The README's verdict table.
begin='<!-- verdict table:'
end='<!-- end of verdict table -->'
if [ -f README.md ]; then
    b=$(grep -nF -- "$begin" README.md | head -1 | cut -d: -f1)
    e=$(grep -nF -- "$end" README.md | head -1 | cut -d: -f1)
    if [ -z "$b" ] || [ -z "$e" ] || [ "$e" -le "$b" ]; then
        report README.md 1 "no verdict table (its marker lines are missing)" "$begin ... $end"
    elif [ ! -x "$tool" ]; then
        report README.md "$b" "cannot check the verdict table: no $tool (build it: make $tool)" ""
    else
        want=$("$tool" --results results/reproduction --readme - 2>&1) || {
            report README.md "$b" "reproduction_report failed" "$want"; want=""; }
        have=$(sed -n "$((b + 1)),$((e - 1))p" README.md)
        if [ -n "$want" ] && [ "$have" != "$want" ]; then
            first=$(diff <(printf '%s\n' "$have") <(printf '%s\n' "$want") | grep -m1 '^[<>]' )
            report README.md "$b" "the verdict table is out of step with results/reproduction (rewrite it: build/tools/reproduction_report --readme README.md)" "$first"
        fi
    fi
fi

# 3. Every page linked from its index, and every relative link resolving.
for f in "${pages[@]}"; do
    case $f in
        docs/protocols/README.md|docs/README.md) ;;
        docs/protocols/*.md) grep -qF "($(basename "$f"))" docs/protocols/README.md 2>/dev/null ||
                                 report "$f" 1 "not linked from docs/protocols/README.md" "" ;;
        docs/*/*) ;;
        docs/*.md) grep -qF "($(basename "$f"))" docs/README.md 2>/dev/null ||
                       report "$f" 1 "not linked from docs/README.md" "" ;;
    esac
    dir=$(dirname "$f")
    n=0
    while IFS= read -r line; do
        n=$((n + 1))
        rest=$line
        while [[ $rest =~ \]\(([^\)\ ]+)\) ]]; do
            target=${BASH_REMATCH[1]}
            rest=${rest#*"${BASH_REMATCH[0]}"}
            case $target in http:*|https:*|mailto:*|\#*) continue ;; esac
            target=${target%%#*}
            [ -e "$dir/$target" ] || report "$f" "$n" "a link to a page that does not exist ($target)" "$line"
        done
    done < "$f"
done
exit $status
