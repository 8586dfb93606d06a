#!/usr/bin/env bash
# Fails when a tracked file points outside the repository: a user who clones it has nothing beside the checkout,
# no development machine's folders and no spec files that are not in it. Run by tests/test_outside_paths.cpp.
#
#   tests/check_outside_paths.sh [REPO_DIR]       (default: the repository this script lives in)
#
# Prints one line per offending reference, "file:line: what — the line", and exits 1 if there is any; 0 otherwise.
# Every tracked text file is read except `.ci/run`, the one file allowed to know where CI's datasets come from, and
# this check and its test, which have to spell out what they look for.
#
# The rule, and why each allowed use is allowed:
#   1. No folder beside the checkout: "../shared" anywhere, and any run of "../" that climbs above the repository
#      root from the file's own folder (a Markdown link from docs/protocols/ to ../results_json.md stays inside).
#   2. No development machine's folders: absolute paths under /work, /home, /root, /mnt, /scratch or /tmp. Paths a
#      user's system has are fine (/usr/lib, /usr/local/cuda, /usr/share/datasets, /dev/null, /proc/self, /bin/sh,
#      /etc). The one /tmp use allowed is a mktemp/mkdtemp template (a name ending in XXXXXX): the test creates a
#      fresh folder there and removes it; a fixed /tmp name is one machine's folder that another run may hold.
#   3. No external spec files: a name of the former specs (fairness.md, training.md, results.md,
#      gaussian_theory.md, results_json.md, attacks.md, safetensors.md) must be a path to a tracked file, from the
#      repository root (docs/protocols/training.md) or from the referring file's folder (training.md inside
#      docs/protocols/). A bare "training.md §4" in a C++ comment resolves to nothing and fails.
#   4. No pointers into an issue tracker the repository does not contain: "issue 12", "the engine issue".
set -u
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root" || { echo "check_outside_paths: cannot enter $root" >&2; exit 2; }

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -d '' files < <(git ls-files -z)
else   # an unpacked archive without .git: every file but the build outputs and the data
    mapfile -d '' files < <(find . -type f ! -path './build/*' ! -path './data/*' ! -path './.git/*' -printf '%P\0')
fi

# The patterns are assembled from pieces so that this file does not match them itself.
up='\.\./'
machine="/(wo""rk|ho""me|ro""ot|mn""t|scra""tch|tm""p)/"
specs="(fair""ness|train""ing|res""ults|gaussian_""theory|results_""json|att""acks|safe""tensors)\\.md"
issue="(\\bis""sues? #?[0-9]+\\b|\\bengine is""sue\\b)"

declare -A tracked=()
for f in "${files[@]}"; do tracked["$f"]=1; done

status=0
report() {   # file line what text
    printf '%s:%s: %s — %s\n' "$1" "$2" "$3" "$(printf '%s' "$4" | cut -c1-160)"
    status=1
}

# Resolves a relative path against a folder ("" is the root), printing the normalised result; fails when it climbs
# above the root.
normalise() {
    local dir=$1 rel=$2 out=() part
    local IFS=/
    for part in $dir $rel; do
        case $part in
            ''|.) ;;
            ..) [ ${#out[@]} -eq 0 ] && return 1; unset 'out[${#out[@]}-1]' ;;
            *) out+=("$part") ;;
        esac
    done
    printf '%s' "${out[*]}"
}

candidates=()
for f in "${files[@]}"; do
    case $f in .ci/run|tests/check_outside_paths.sh|tests/test_outside_paths.cpp) continue ;; esac
    [ -f "$f" ] && candidates+=("$f")
done

# One grep over every file (binary files skipped) for the lines worth a closer look: "file\0line:text".
while IFS= read -r -d '' f && IFS= read -r hit; do
    dir=$(dirname "$f"); [ "$dir" = "." ] && dir=""
    n=${hit%%:*}; line=${hit#*:}
    if [[ $line =~ \.\./shared ]]; then report "$f" "$n" "a folder beside the checkout" "$line"; fi
    rest=$line
    while [[ $rest =~ ((\.\./)+)([^[:space:]\"\'\`\)]*) ]]; do
        if ! normalise "$dir" "${BASH_REMATCH[1]}" >/dev/null; then
            report "$f" "$n" "a path that leaves the repository (${BASH_REMATCH[0]})" "$line"; break
        fi
        rest=${rest#*"${BASH_REMATCH[0]}"}
    done
    rest=$line
    while [[ $rest =~ (^|[^A-Za-z0-9_.~$/-])($machine[^[:space:]\"\'\`\),]*) ]]; do
        p=${BASH_REMATCH[2]}
        if ! [[ $p =~ ^/tm""p/[A-Za-z0-9_.-]*XXXXXX ]]; then
            report "$f" "$n" "a machine's folder ($p)" "$line"; break
        fi
        rest=${rest#*"$p"}
    done
    rest=$line
    while [[ $rest =~ ([A-Za-z0-9_./-]*)$specs ]]; do
        ref=${BASH_REMATCH[0]}
        ok=0
        for base in "" "$dir"; do
            r=$(normalise "$base" "$ref") && [ -n "${tracked[$r]:-}" ] && ok=1
        done
        [ $ok = 1 ] || { report "$f" "$n" "a spec file that is not in the repository ($ref)" "$line"; break; }
        rest=${rest#*"$ref"}
    done
    if [[ ${line,,} =~ $issue ]]; then report "$f" "$n" "an issue-tracker reference (${BASH_REMATCH[0]})" "$line"; fi
done < <([ ${#candidates[@]} -eq 0 ] || printf '%s\0' "${candidates[@]}" |
         xargs -0 grep -nHIiE --null "$up|$machine|$specs|$issue" 2>/dev/null)
exit $status
