#!/usr/bin/env bash
# A host that fails three JobSets in a row is quarantined (docs/resilience.md): jobsetd with
# --quarantine_after=3 and exit code 74 listed as a device error, one agent, all real, on
# 127.0.0.1. Three JobSets each fail their first attempt with exit code 74 on node-1: each is a
# NodeFault (restarted without counting against maxRestarts: 0), the third taints node-1
# jobsetd.io/quarantined:NoSchedule, so the third JobSet's next attempt waits; removing the
# taint lets it run and complete.
set -euo pipefail
BIN=$(pwd)
CLUSTER_DIR=${TEST_TMPDIR:-/tmp}/quarantine-e2e/cluster
rm -rf "${TEST_TMPDIR:-/tmp}/quarantine-e2e"
mkdir -p "$CLUSTER_DIR"
# shellcheck source=tools/local_cluster.sh
. "$BIN/tools/local_cluster.sh"
on_exit() {
  local rc=$?
  [ "$rc" = 0 ] || { echo "-- jobsetd.err"; tail -30 "$CLUSTER_DIR/jobsetd.err"; }
  cluster_stop
}
trap on_exit EXIT
fail() { echo "FAIL: $*"; exit 1; }

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.2 s until it succeeds.
wait_for() {
  local seconds=$1 what=$2 _
  shift 2
  for _ in $(seq 1 $((seconds * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  fail "$what (after ${seconds}s)"
}

cluster_start 1 --quarantine_after=3 --device_error_exit_codes=74

# JobSet NAME: one pod that exits 74 in its first attempt and 0 after.
jobset() {
  cat <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $1
spec:
  failurePolicy:
    maxRestarts: 0
  replicatedJobs:
  - name: w
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: local
              command: ["/bin/sh", "-c", "[ \"\$JOBSET_RESTART_ATTEMPT\" != 0 ] || exit 74"]
              resources:
                requests: {cpu: "1", memory: 64Mi}
YAML
}
completed() { ctl get jobset "$1" | grep -q Completed; }
tainted() { ctl get node node-1 -o yaml | grep -q 'jobsetd.io/quarantined'; }

for name in first second; do
  jobset "$name" | ctl apply -f -
  wait_for 30 "$name never completed" completed "$name"
  restarts=$(ctl get jobset "$name" -o jsonpath='{.status.restarts}')
  counted=$(ctl get jobset "$name" -o jsonpath='{.status.restartsCountTowardsMax}')
  [ "$restarts" = 1 ] && [ "${counted:-0}" = 0 ] ||
    fail "$name: restarts $restarts, counted towards max ${counted:-0} (want 1 and 0)"
  echo "ok: $name failed with a device error, restarted as a NodeFault (not counted), completed"
  tainted && fail "node-1 quarantined after $name"
done

jobset third | ctl apply -f -
wait_for 30 "node-1 was never quarantined" tainted
echo "ok: the third failure quarantined node-1"
ctl describe jobset third | grep -q "NodeQuarantined" || fail "no NodeQuarantined event"
ctl describe jobset third | grep "NodeQuarantined" | grep -q "3 failures in 24h" ||
  fail "the NodeQuarantined event does not list the evidence"
echo "ok: the NodeQuarantined event lists the evidence"
sleep 2
completed third && fail "third ran on the quarantined node"
ctl get pods | grep third | grep -q Pending || fail "third's next pod is not Pending"
echo "ok: third's next attempt waits while node-1 is quarantined"

ctl taint node node-1 jobsetd.io/quarantined-
wait_for 30 "third never completed once node-1 was released" completed third
echo "ok: removing the taint released node-1; third completed"
