#!/usr/bin/env bash
# A host killed under an exclusive-topology InPlaceRestart gang with a hot spare in its slice
# (issue 43, docs/resilience.md): jobsetd (--node_lost_timeout=2s) and five agents in slice-a,
# all real, on 127.0.0.1; node-5 is labelled jobsetd.io/spare=true. A gang of four runs on
# node-1..4 (the spare takes no first attempt); the host of rank 1 is killed: kill -9 of its agent
# and of its pod's processes (tools/demo_resilience.sh's kill_host). Checked: the gang runs again
# in slice-a with the spare in the lost host's place; the three other pods kept their uids and
# nodes and run in-place attempt 1 (their logs say so); status.restarts stays 0; the gang
# completes; the host, back, drops its old pod.
set -euo pipefail
BIN=$(pwd)
CLUSTER_DIR=${TEST_TMPDIR:-/tmp}/hot-spare-e2e/cluster
rm -rf "${TEST_TMPDIR:-/tmp}/hot-spare-e2e"
mkdir -p "$CLUSTER_DIR"
# shellcheck source=tools/local_cluster.sh
. "$BIN/tools/local_cluster.sh"
# shellcheck source=tools/demo_resilience.sh
. "$BIN/tools/demo_resilience.sh"
show() {
  echo "-- jobsetctl $*"
  ctl "$@" 2>&1 | sed 's/^/   /'
}
on_exit() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    echo "-- jobsetd.err"
    tail -30 "$CLUSTER_DIR/jobsetd.err"
  fi
  cluster_stop
}
trap on_exit EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

cluster_start 0 --node_lost_timeout=2s --heartbeat_interval=200ms
start_slice_agents 1 5 slice-a 5
spare_gang_manifest spare 4 | ctl apply -f -
wait_gang_running spare 4 0 "" 30
before=$(gang_pods spare)
echo "$before"
grep -q ' node-5 ' <<<"$before" && fail "the spare node-5 took a pod of the first attempt"
echo "ok: the gang runs on node-1..4; the spare took none of it"

victim=$(awk '$1 == 1 {print $3}' <<<"$before")
killed_at=$(now_s)
kill_host "$victim"
echo "ok: $victim's host killed, its pod's processes with it"
wait_gang_running spare 4 1 "$victim" 20
echo "ok: the gang runs again $(seconds_between "$killed_at" "$(now_s)") s after the kill" \
  "(node_lost_timeout 2s)"
after=$(gang_pods spare "$victim")
echo "$after"

for rank in 0 1 2 3; do
  old=$(awk -v r="$rank" '$1 == r' <<<"$before")
  new=$(awk -v r="$rank" '$1 == r' <<<"$after")
  read -r _ old_uid old_node _ <<<"$old"
  read -r _ new_uid new_node _ _ new_name <<<"$new"
  if [ "$rank" = 1 ]; then
    [ "$new_node" = node-5 ] || fail "rank 1 runs on $new_node, not on the spare node-5"
    [ "$new_uid" != "$old_uid" ] || fail "rank 1 kept its uid on a new node"
    echo "ok: rank 1 was made again on the spare node-5"
  else
    if [ "$new_uid" != "$old_uid" ] || [ "$new_node" != "$old_node" ]; then
      fail "rank $rank was not restarted in place: $old -> $new"
    fi
    ctl logs "$new_name" | grep -q "attempt 1: rank $rank starting" ||
      fail "rank $rank's log has no start of attempt 1: $(ctl logs "$new_name" 2>&1 | tail -3)"
    echo "ok: rank $rank restarted in place on $new_node (uid $new_uid, attempt 1)"
  fi
done
[ "$(jobset_field spare 'js["status"].get("restarts", 0)')" = 0 ] ||
  fail "the gang was recreated: $(jobset_field spare 'js["status"]')"
expect_completed_without_restart spare
revive_host "$victim"
echo "ok: $victim, back, removed its old pod"
