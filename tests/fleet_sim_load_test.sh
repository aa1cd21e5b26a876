#!/usr/bin/env bash
# Reliability plan L1, short form (docs/reliability.md, "L1 and L2"): fleet_sim --scenario=load
# on 100 simulated agents: 5 JobSets of 8 tasks a second for 30 s (pods run 1-5 s, deleted 5 s
# after they finish), 5 watchers, a List a second, ten Gets a second, an agent's stream cut every
# 10 s, 3 % of tasks failing once. fleet_sim exits non-zero on anything lost (an acknowledged
# create never seen to finish, a JobSet that Failed, a task run twice, a create refused); this
# checks that the run did what it says, and A6 (no node lost, no report fenced). Its latency
# targets are printed, not checked here (figures belong to benchmarks: docs/benchmarks.md).
# Everything listens on 127.0.0.1; fleet_sim stops its jobsetd (it dies with it).
set -uo pipefail
fleet_sim=$1
jobsetd=$2
out=${TEST_TMPDIR:-/tmp}/fleet_sim_load.out

start=$(date +%s)
timeout -k 10 270 "$fleet_sim" --agents=100 --scenario=load --load_rate=5 --load_duration=30s \
  --load_min_run=1s --load_max_run=5s --load_ttl=5s --load_agent_restart_every=10s \
  --load_watchers=5 --load_fail_percent=3 --heartbeat_interval=2s \
  --seed="${FLEET_SIM_SEED:-1}" --jobsetd="$jobsetd" >"$out" 2>&1
rc=$?
cat "$out"
echo "fleet_sim exited $rc after $(($(date +%s) - start)) s"
[ "$rc" -eq 0 ] || { echo "FAIL: fleet_sim --scenario=load exited $rc"; exit 1; }

line=$(grep '^fleet load: ' "$out")
. "$(dirname "$0")/fleet_sim_figures.sh"
check creates == 150
check unfinished == 0
check failed == 0
check double_task_launches == 0
check restarted_once '>' 0
check restarts_not_by_the_workload == 0
check restarts_missed == 0
check agent_restarts '>=' 2
check list_count '>' 10
check get_count '>' 100
check heartbeats '>' 0
check nodes_lost == 0
check fenced_reports == 0
[ "$failures" -eq 0 ] || exit 1
echo "PASS"
