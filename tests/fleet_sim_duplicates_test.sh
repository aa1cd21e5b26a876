#!/usr/bin/env bash
# Reliability plan I1, short form (docs/reliability.md, "I1: duplicated and reordered agent
# reports"): fleet_sim --scenario=duplicates runs 100 JobSets (400 tasks) on 16 simulated agents
# against a fresh jobsetd with every pod report delivered once, then against another with each
# report sent 5 more times (copies up to 2 s later) and reordered in 50 ms windows. It exits
# non-zero on any difference in how a JobSet ended, an outcome that is not the workload's, a pod
# or task ordered to run twice, or a mixed run that mixed nothing; this checks its figures too.
# Everything listens on 127.0.0.1; fleet_sim stops its jobsetds (they die with it).
set -uo pipefail
fleet_sim=$1
jobsetd=$2
out=${TEST_TMPDIR:-/tmp}/fleet_sim_duplicates.out

start=$(date +%s)
timeout -k 10 270 "$fleet_sim" --agents=16 --scenario=duplicates --duplicates_jobsets=100 \
  --duplicate_reports=5 --reorder_reports --seed="${FLEET_SIM_SEED:-1}" \
  --duplicates_timeout=60s --jobsetd="$jobsetd" >"$out" 2>&1
rc=$?
cat "$out"
echo "fleet_sim exited $rc after $(($(date +%s) - start)) s"
[ "$rc" -eq 0 ] || { echo "FAIL: fleet_sim --scenario=duplicates exited $rc"; exit 1; }

line=$(grep '^fleet duplicates: ' "$out")
. "$(dirname "$0")/fleet_sim_figures.sh"
check differences == 0
check unexpected == 0
check double_launches == 0
check tasks == 400
check copies_sent '>' 0
check stale_copies '>' 0
check copies_after_restart '>' 0
check displaced '>' 0
[ "$failures" -eq 0 ] || exit 1
echo "PASS"
