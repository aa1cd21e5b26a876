#!/usr/bin/env bash
# Runs client_test.py with Debian's /usr/bin/python3, the package `jobset`
# and the generated proto modules on PYTHONPATH (both under python/ in the
# runfiles tree).
# Usage: client_test.sh JOBSETD CLIENT_TEST_PY LAUNCH_PY UPSTREAM_MANIFEST AGENT
#        KUEUE_MANIFEST...
set -euo pipefail
root=$(cd "$(dirname "$(realpath "$2")")" && pwd)
runfiles_python="$(pwd)/python"
export PYTHONPATH="$runfiles_python${PYTHONPATH:+:$PYTHONPATH}"
export JOBSETD=$(realpath "$1")
export LAUNCH_PY=$(realpath "$3")
export UPSTREAM_MANIFEST=$(realpath "$4")
export AGENT=$(realpath "$5")
export KUEUE_MANIFESTS=$(dirname "$(realpath "$6")")
# The agent's pod supervisor, in the runfiles beside it.
export SHIM="$(pwd)/agent/runtime/jobset-pod-shim"
cd "${TEST_TMPDIR:-/tmp}"
exec /usr/bin/python3 -B "$root/client_test.py" -v
