#!/usr/bin/env bash
# tools/demo --resilience's scenes as a test (tools/demo_resilience.sh), with
# examples/resilience-hang.yaml and examples/resilience-straggler.yaml checkpointing under the
# test's directory: jobsetd, four agents and jobsetctl, all real, on 127.0.0.1. A hung rank's
# gang is restarted with ProgressStalled and completes from its checkpoint, its goodput adding
# up to its wall time; a rank on a slow
# node is flagged a Straggler (Flag), and replaced (Replace: the gang completes off that
# node). Each scene exits 1 unless it ends so; the lines below check what it printed.
set -euo pipefail
runfiles=$(pwd)
BIN=$runfiles
CLUSTER_DIR=${TEST_TMPDIR:-/tmp}/resilience-e2e/cluster
# Apart from the agents' work dirs: a hostPath above them would hide the pods' progress files.
RESILIENCE_CKPT=${TEST_TMPDIR:-/tmp}/resilience-e2e/checkpoints
rm -rf "${TEST_TMPDIR:-/tmp}/resilience-e2e"
mkdir -p "$CLUSTER_DIR" "$RESILIENCE_CKPT"
chmod 0777 "$RESILIENCE_CKPT"
# shellcheck source=tools/local_cluster.sh
. "$runfiles/tools/local_cluster.sh"
# shellcheck source=tools/demo_resilience.sh
. "$runfiles/tools/demo_resilience.sh"
show() {
  echo "-- jobsetctl $*"
  ctl "$@" 2>&1 | sed 's/^/   /'
}
out="$CLUSTER_DIR/demo.out"
on_exit() {
  local rc=$?
  cluster_stop
  [ "$rc" = 0 ] || cat "$out"
}
trap on_exit EXIT

resilience_demo >"$out" 2>&1
failures=0
expect() {  # expect WHAT: what the demo printed contains WHAT
  if grep -qF -- "$1" "$out"; then
    echo "ok: $1"
  else
    echo "FAIL: the demo never printed: $1"
    failures=$((failures + 1))
  fi
}
expect "rank 1: hanging after step 5 (simulated)"
expect "jobsetd restarted the gang (status.restarts 1)"
expect "ProgressStalled"
expect "no pod's step advanced for"
expect "attempt 1: rank 0 resuming at step 3"
expect "resilience-hang completed after 1 restart"
expect "ProgressStalled"
expect "the phases add up to"
expect "Running,Straggler"
expect "Straggler=True step rate"
expect "jobsetd_stragglers_total 1"
expect "Stopped,Straggler"
expect "; replacing node node-"
expect "jobsetd_stragglers_total 2"
expect "resilience-straggler completed after 1 restart"
echo "$failures failure(s)"
[ "$failures" = 0 ]
