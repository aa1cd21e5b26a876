#!/usr/bin/env bash
# A real Prometheus (Debian's) scrapes jobsetd and an agent on 127.0.0.1 while a JobSet runs
# with one restart; its HTTP API must then show jobset_completed_total and the restart
# counter, and promtool must accept both endpoints' /metrics.
set -uo pipefail
runfiles=$(pwd)
if [ ! -x /usr/bin/prometheus ] || [ ! -x /usr/bin/promtool ]; then
  echo "SKIP: Debian's prometheus package is not installed (tools/setup installs it)"
  exit 0
fi
BIN=$runfiles
CLUSTER_DIR=${TEST_TMPDIR:-/tmp}/prometheus-e2e
rm -rf "$CLUSTER_DIR"
# shellcheck source=tools/local_cluster.sh
. "$runfiles/tools/local_cluster.sh"
prom_pid=""
cleanup() {
  if [ -n "$prom_pid" ]; then
    kill "$prom_pid" 2>/dev/null
    wait "$prom_pid" 2>/dev/null
  fi
  cluster_stop
  rm -rf "$CLUSTER_DIR/checkpoints"
}
trap cleanup EXIT
rm -rf "$CLUSTER_DIR/checkpoints"
slices_restart=$(own_checkpoints "$runfiles/examples/slices-restart.yaml")

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
fetch() { /usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"; }

AGENT_FLAGS="--metrics_listen=127.0.0.1:0"
cluster_start 4 --metrics_listen=127.0.0.1:0 --allowed_host_paths="$CLUSTER_DIR/checkpoints" || exit 1
jobsetd_metrics=$(sed -n 's|^jobsetd metrics on http://\(.*\)/metrics|\1|p' "$CLUSTER_DIR/jobsetd.out")
agent_metrics=$(sed -n 's|^jobset-agent metrics on http://\(.*\)/metrics|\1|p' "$CLUSTER_DIR/node-1.out")
[ -n "$jobsetd_metrics" ] && [ -n "$agent_metrics" ] || { echo "no metrics addresses"; exit 1; }

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$CLUSTER_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
- job_name: jobsetd
  static_configs: [{targets: ["$jobsetd_metrics"]}]
- job_name: jobset-agent
  static_configs: [{targets: ["$agent_metrics"]}]
EOF
/usr/bin/prometheus --config.file="$CLUSTER_DIR/prometheus.yml" \
  --storage.tsdb.path="$CLUSTER_DIR/prom" --web.listen-address="127.0.0.1:$port" \
  >"$CLUSTER_DIR/prometheus.log" 2>&1 &
prom_pid=$!

ctl apply -f "$slices_restart" >/dev/null
ctl wait jobset demo --for=condition=Completed --timeout=60s >/dev/null ||
  fail "the JobSet did not complete"

query() {  # query PROMQL -> the first sample's value, or nothing
  fetch "http://127.0.0.1:$port/api/v1/query?query=$1" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null
}
completed="" restarts="" launches="" stages=""
for _ in $(seq 1 60); do
  completed=$(query 'jobset_completed_total%7Bjobset_name%3D%22demo%22%7D')
  restarts=$(query 'sum(jobsetd_restarts_total)')
  launches=$(query 'jobset_agent_launches_total')
  # The pod startup stages observed at least once (of 6).
  stages=$(query 'count(jobsetd_pod_startup_stage_seconds_count%20%3E%200)')
  [ "$completed" = 1 ] && [ "$restarts" = 1 ] && [ -n "$launches" ] &&
    [ "$stages" = 6 ] && break
  sleep 0.5
done
[ "$completed" = 1 ] && pass "Prometheus: jobset_completed_total{jobset_name=\"demo\"} = 1" ||
  fail "jobset_completed_total = '$completed'"
[ "$restarts" = 1 ] && pass "Prometheus: sum(jobsetd_restarts_total) = 1" ||
  fail "jobsetd_restarts_total = '$restarts'"
[ -n "$launches" ] && [ "$launches" != 0 ] &&
  pass "Prometheus: the agent's jobset_agent_launches_total = $launches" ||
  fail "jobset_agent_launches_total = '$launches'"
[ "$stages" = 6 ] &&
  pass "Prometheus: all 6 stages of jobsetd_pod_startup_stage_seconds observed" ||
  fail "pod startup stages observed: '$stages' of 6"

for target in "$jobsetd_metrics" "$agent_metrics"; do
  if fetch "http://$target/metrics" | promtool check metrics >"$CLUSTER_DIR/promtool.out" 2>&1; then
    pass "promtool check metrics: $target"
  else
    fail "promtool check metrics $target:"; cat "$CLUSTER_DIR/promtool.out"
  fi
done

echo "$failures failure(s)"
[ "$failures" = 0 ]
