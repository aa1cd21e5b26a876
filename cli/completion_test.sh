#!/bin/bash
# jobsetctl completion bash|zsh: the scripts parse, and the bash function
# completes verbs, types, flags and -o's formats (no server involved: names
# come from `jobsetctl get TYPE -o name`, which fails quietly here).
set -euo pipefail
jobsetctl_bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
ln -s "$jobsetctl_bin" "$dir/bin/jobsetctl"
export PATH="$dir/bin:$PATH"
export JOBSET_SERVER=127.0.0.1:1  # Nothing listens: names complete empty.

fail() { echo "FAIL: $*" >&2; exit 1; }

jobsetctl completion bash > "$dir/bash.sh"
jobsetctl completion zsh > "$dir/zsh.sh"
bash -n "$dir/bash.sh" || fail "bash script does not parse"
bash -n "$dir/zsh.sh" || fail "zsh script does not parse as bash"
grep -q '^#compdef jobsetctl' "$dir/zsh.sh" || fail "zsh script lacks #compdef"
if jobsetctl completion fish > /dev/null 2> "$dir/err"; then
  fail "completion fish succeeded"
fi
grep -q 'unsupported shell type "fish"' "$dir/err" || fail "fish: $(cat "$dir/err")"

# Completes COMP_WORDS (the words given) and prints COMPREPLY, one a line.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ));
           _jobsetctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$dir/bash.sh" "$@"
}
expect() {  # expect WORD OUTPUT
  grep -qx -- "$1" <<< "$2" || fail "expected $1 in: $2"
}

out="$(complete_words jobsetctl ge)"
expect get "$out"
out="$(complete_words jobsetctl "")"
expect completion "$out"; expect version "$out"; expect delete "$out"
out="$(complete_words jobsetctl get p)"
expect pods "$out"
out="$(complete_words jobsetctl -n team get "")"
expect jobsets "$out"; expect nodes "$out"
out="$(complete_words jobsetctl get pods --field)"
expect --field-selector "$out"
out="$(complete_words jobsetctl delete jobsets --a)"
expect --all "$out"; expect --all-namespaces "$out"
out="$(complete_words jobsetctl get pods -o "")"
expect jsonpath= "$out"; expect name "$out"
out="$(complete_words jobsetctl completion "")"
expect bash "$out"; expect zsh "$out"
out="$(complete_words jobsetctl get pods --req)"
expect --request-timeout "$out"
echo PASS
