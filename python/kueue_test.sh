#!/usr/bin/env bash
# Runs kueue_test.py with Debian's /usr/bin/python3, the package `jobset`
# and the generated proto modules on PYTHONPATH (both under python/ in the
# runfiles tree), and kueue-semantics.md §8's manifests.
# Usage: kueue_test.sh KUEUE_TEST_PY KUEUE_MANIFEST...
set -euo pipefail
root=$(cd "$(dirname "$(realpath "$1")")" && pwd)
export KUEUE_MANIFESTS=$(dirname "$(realpath "$2")")
export PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
cd "${TEST_TMPDIR:-/tmp}"
exec /usr/bin/python3 -B "$root/kueue_test.py" -v
