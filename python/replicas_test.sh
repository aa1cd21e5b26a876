#!/usr/bin/env bash
# Runs replicas_test.py with Debian's /usr/bin/python3, the package `jobset`
# and the generated proto modules on PYTHONPATH (both under python/ in the
# runfiles tree).
# Usage: replicas_test.sh REPLICAS_TEST_PY
set -euo pipefail
root=$(cd "$(dirname "$(realpath "$1")")" && pwd)
export PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
cd "${TEST_TMPDIR:-/tmp}"
exec /usr/bin/python3 -B "$root/replicas_test.py" -v
