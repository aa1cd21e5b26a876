#!/usr/bin/env bash
# Runs progress_test.py with Debian's /usr/bin/python3 and the package
# `jobset` (python/ in the runfiles tree) on PYTHONPATH.
# Usage: progress_test.sh PROGRESS_TEST_PY
set -euo pipefail
root=$(cd "$(dirname "$(realpath "$1")")" && pwd)
export PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
cd "${TEST_TMPDIR:-/tmp}"
exec /usr/bin/python3 -B "$root/progress_test.py" -v
