#!/usr/bin/env bash
# Reruns every ```sh block of docs/walkthrough.md (from the repository root, in order, through /bin/sh with stderr
# joined to stdout, as tests/test_walkthrough_doc.cpp runs them) and rewrites the ```output block after each with
# what it printed, keeping each block's fence (and the tolerance it states) as it was. Build first (make); review the
# result with git diff docs/walkthrough.md, and widen a block's tolerance only with a measurement behind it.
#
#   tools/refresh_walkthrough.sh [path/to/doc.md]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
doc=${1:-$root/docs/walkthrough.md}
new=$(mktemp)
out=$(mktemp)
trap 'rm -f "$new" "$out"' EXIT

state=text
command=""
while IFS= read -r line || [[ -n $line ]]; do
    case $state in
    text)
        printf '%s\n' "$line"
        if [[ $line == '```sh' ]]; then state=command; command=""
        elif [[ $line == '```'* ]]; then state=other; fi ;;
    other)
        printf '%s\n' "$line"
        [[ $line == '```' ]] && state=text ;;
    command)
        printf '%s\n' "$line"
        if [[ $line == '```' ]]; then state=await; else command+="$line"$'\n'; fi ;;
    await)
        printf '%s\n' "$line"
        if [[ $line == '```output' || $line == '```output '* ]]; then
            echo "running: $command" | head -n 1 >&2
            # Same shell and redirections as the test; a failing command stops the refresh (the doc is left as it was).
            if ! (cd "$root" && sh -c "( $command ) 2>&1 < /dev/null") > "$out"; then
                echo "refresh_walkthrough: this command failed, the doc is unchanged:" >&2
                cat "$out" >&2
                exit 1
            fi
            cat "$out"
            # The closing fence needs a line of its own even if the output ends without a newline.
            [[ -s $out && $(tail -c 1 "$out" | od -An -c | tr -d ' ') != '\n' ]] && echo
            state=output
        elif [[ -n ${line//[[:space:]]/} ]]; then
            echo "refresh_walkthrough: the command before this line must be followed by an \`\`\`output block: $line" >&2
            exit 1
        fi ;;
    output)
        if [[ $line == '```' ]]; then printf '%s\n' "$line"; state=text; fi ;;
    esac
done < "$doc" > "$new"
[[ $state == text ]] || { echo "refresh_walkthrough: $doc ends inside an example" >&2; exit 1; }
cp "$new" "$doc"
echo "rewrote $doc" >&2
