#!/usr/bin/env bash
# Kueue's queues end to end: jobsetd and four jobset-agents (cpu=1 each), all real, on
# 127.0.0.1, driven with jobsetctl as a user would. Four cases, each in its own namespace:
#   1. examples/queues as they are: team B's sweep borrows, team A reclaims its quota (the
#      sweep is suspended, not failed, and says why in Kueue's words), the sweep is admitted
#      again and resumes from its checkpoints;
#   2. within one ClusterQueue a higher WorkloadPriorityClass preempts a lower one;
#   3. kill -9 of jobsetd with one Workload admitted and one pending: after a restart on the
#      same data dir both keep their identity and state, and run in order;
#   4. a JobSet naming a LocalQueue that does not exist waits, saying so, until it exists.
set -uo pipefail
runfiles=$(pwd)
BIN=$runfiles
CLUSTER_DIR=${TEST_TMPDIR:-/tmp}/queues-e2e
rm -rf "$CLUSTER_DIR"
# shellcheck source=tools/local_cluster.sh
. "$runfiles/tools/local_cluster.sh"

failures=0
case_name=""
fail() { echo "FAIL: [$case_name] $*"; failures=$((failures + 1)); }
pass() { echo "ok: [$case_name] $*"; }

# Every JobSet in every namespace goes first (cluster_stop deletes the default namespace's
# only), so that no pod outlives the test; then what cluster_start (and case 3) started.
cleanup() {
  [ -n "$SERVER" ] && ctl delete jobsets --all -A >/dev/null 2>&1
  cluster_stop
}
trap cleanup EXIT

jobsetd_err="$CLUSTER_DIR/jobsetd.err"

# wait_until SECONDS COMMAND...: succeeds once COMMAND does, polling every 0.2 s.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}

# What the queues looked like, for a failure: every Workload, those of NAMESPACE described,
# the JobSets, and the end of jobsetd's log.
dump() {
  echo "--- jobsetctl get workloads -A"
  ctl get workloads -A 2>&1
  local wl
  for wl in $(ctl get workloads -n "$1" -o name 2>/dev/null); do
    echo "--- jobsetctl describe -n $1 workload ${wl##*/} (status)"
    ctl describe -n "$1" workload "${wl##*/}" 2>&1 | sed -n '/^Status:/,$p'
  done
  echo "--- jobsetctl get jobsets -A"
  ctl get jobsets -A 2>&1
  echo "--- jobsetctl get pods -n $1"
  ctl get pods -n "$1" 2>&1
  echo "--- tail $jobsetd_err"
  tail -20 "$jobsetd_err"
}

# js NAMESPACE JOBSET PYTHON_EXPR_ON_js: the expression over the JobSet's JSON.
js() {
  ctl get jobset -n "$1" "$2" -o json 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; js=json.load(sys.stdin); print($3)" 2>/dev/null
}
suspended() { [ "$(js "$1" "$2" 'js["spec"].get("suspend", False)')" = True ]; }
restarts() { js "$1" "$2" 'js["status"].get("restarts", 0)'; }
# condition_of NAMESPACE JOBSET TYPE: the JobSet's condition TYPE as "STATUS|REASON".
condition_of() {
  js "$1" "$2" '"".join("%s|%s" % (c["status"], c.get("reason", "")) for c in js["status"].get("conditions", []) if c["type"] == "'"$3"'")'
}
running_pods() { ctl get pods -n "$1" --jobset "$2" 2>/dev/null | grep -c ' Running'; }
completed() { ctl wait jobset -n "$1" "$2" --for=condition=Completed --timeout="$3" >/dev/null 2>&1; }

# workloads_of NAMESPACE JOBSET: "NAME UID" of every Workload whose kueue.x-k8s.io/job-uid is
# the JobSet's uid, one a line.
workloads_of() {
  local uid
  uid=$(js "$1" "$2" 'js["metadata"]["uid"]')
  [ -n "$uid" ] || return 1
  ctl get workloads -n "$1" -o json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for w in json.load(sys.stdin)["items"]:
    m = w["metadata"]
    if m.get("labels", {}).get("kueue.x-k8s.io/job-uid") == sys.argv[1]:
        print(m["name"], m["uid"])' "$uid"
}
# workload_of NAMESPACE JOBSET: the name of its one Workload (nothing if none).
workload_of() { workloads_of "$1" "$2" | awk 'NR == 1 {print $1}'; }
# wl_condition NAMESPACE WORKLOAD TYPE: "STATUS|REASON|MESSAGE|LAST_TRANSITION_TIME".
wl_condition() {
  ctl get workload -n "$1" "$2" -o json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for c in json.load(sys.stdin).get("status", {}).get("conditions", []):
    if c["type"] == sys.argv[1]:
        print("|".join([c["status"], c.get("reason", ""), c.get("message", ""),
                        c.get("lastTransitionTime", "")]))' "$3"
}
# wl_is NAMESPACE JOBSET TYPE STATUS: its Workload's condition TYPE has STATUS.
wl_is() {
  local wl
  wl=$(workload_of "$1" "$2")
  [ -n "$wl" ] && [ "$(wl_condition "$1" "$wl" "$3" | cut -d'|' -f1)" = "$4" ]
}

# ---------------------------------------------------------------------------------------
case_name="setup"
# The sweep's checkpoints are a hostPath volume: a directory of this test's own (the examples
# name one under /tmp, which a parallel run or tools/demo would share).
ckpt="$CLUSTER_DIR/checkpoints"
mkdir -p "$ckpt"
# Written by the pods, which run as the agents' default (non-root) pod user.
chmod 0777 "$ckpt"
for f in setup team-a-deadline team-b-sweep; do
  sed "s|/tmp/jobsetd-example-checkpoints/queues|$ckpt|" "$runfiles/examples/queues/$f.yaml" \
    >"$CLUSTER_DIR/$f.yaml"
done
if ! grep -q "$ckpt" "$CLUSTER_DIR/team-b-sweep.yaml"; then
  echo "examples/queues/team-b-sweep.yaml no longer checkpoints under /tmp/jobsetd-example-checkpoints/queues"
  exit 1
fi
jobsetd_flags=(--allowed_host_paths="$ckpt")
cluster_start 4 "${jobsetd_flags[@]}" || exit 1

# ---------------------------------------------------------------------------------------
case_name="1 borrow, reclaim, resume"
ok=1
ctl apply -f "$CLUSTER_DIR/setup.yaml" >/dev/null || fail "apply examples/queues/setup.yaml"
ctl apply -f "$CLUSTER_DIR/team-b-sweep.yaml" >/dev/null || fail "apply team-b-sweep.yaml"
if wait_until 60 eval '[ "$(running_pods team-b sweep)" = 4 ]' &&
  wait_until 10 wl_is team-b sweep Admitted True; then
  sweep_wl=$(workload_of team-b sweep)
  pass "team B's sweep admitted on borrowed quota: 4 pods Running, Workload $sweep_wl Admitted True"
  [[ "$sweep_wl" == jobset-sweep-* ]] || fail "the sweep's Workload is named $sweep_wl, not jobset-sweep-<hash>"
  row=$(ctl get workloads -A 2>&1 | awk -v n="$sweep_wl" '$1 == "team-b" && $2 == n')
  [ "$(echo "$row" | awk '{print $5}')" = True ] && pass "get workloads -A: ADMITTED True" ||
    fail "get workloads -A row of $sweep_wl is '$row', not ADMITTED True"
else
  fail "team B's sweep was not admitted with 4 pods Running within 60 s"; ok=0; dump team-b
fi
borrowed() {
  ctl get clusterqueue team-b -o json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for f in json.load(sys.stdin).get("status", {}).get("flavorsUsage", []):
    for r in f["resources"]:
        if r["name"] == "cpu": print(r.get("borrowed", 0))'
}
if wait_until 10 eval '[ "$(borrowed)" = 2 ]'; then
  pass "ClusterQueue team-b: 2 cpus borrowed from the cohort"
else
  fail "ClusterQueue team-b borrows '$(borrowed)' cpus, not 2"
fi
# Every pod has checkpointed a step before team A reclaims its quota, so that a resume
# from step N > 0 is certain.
checkpointed() {
  local i
  for i in 0 1 2 3; do
    [ "$(cat "$ckpt/sweep-workers-0-$i" 2>/dev/null)" -ge 2 ] 2>/dev/null || return 1
  done
}
[ "$ok" = 1 ] && { wait_until 30 checkpointed || fail "the sweep's pods wrote no checkpoints: $(ls -l "$ckpt")"; }

ctl apply -f "$CLUSTER_DIR/team-a-deadline.yaml" >/dev/null || fail "apply team-a-deadline.yaml"
if wait_until 60 wl_is team-a deadline Admitted True; then
  pass "team A's deadline admitted within its nominal quota"
else
  fail "team A's deadline was not admitted within 60 s"; dump team-a
fi
if wait_until 30 suspended team-b sweep; then
  pass "the sweep is suspended (spec.suspend true)"
else
  fail "the sweep was not suspended within 30 s: spec.suspend is $(js team-b sweep 'js["spec"].get("suspend")')"
  dump team-b
fi
[ "$(restarts team-b sweep)" = 0 ] && pass "the preempted sweep: status.restarts 0" ||
  fail "the preempted sweep: status.restarts is $(restarts team-b sweep), not 0"
failed=$(condition_of team-b sweep Failed)
[ -z "$failed" ] || [[ "$failed" == False* ]] && pass "the preempted sweep has no Failed condition" ||
  fail "the preempted sweep has a Failed condition: $failed"
if wait_until 30 eval '[ "$(running_pods team-b sweep)" = 0 ]'; then
  pass "the sweep's pods stopped"
else
  fail "the sweep still has $(running_pods team-b sweep) Running pods while suspended"
fi
sweep_wl=$(workload_of team-b sweep)
# Once evicted and waiting, one look at its conditions (they change again on readmission).
evicted_and_waiting() {
  [ "$(wl_condition team-b "$sweep_wl" Evicted | cut -d'|' -f1)" = True ] &&
    [ "$(wl_condition team-b "$sweep_wl" QuotaReserved | cut -d'|' -f1)" = False ]
}
wait_until 20 evicted_and_waiting ||
  { fail "the sweep's Workload $sweep_wl did not show Evicted True and QuotaReserved False"; dump team-b; }
evicted=$(wl_condition team-b "$sweep_wl" Evicted)
preempted=$(wl_condition team-b "$sweep_wl" Preempted)
reserved=$(wl_condition team-b "$sweep_wl" QuotaReserved)
[[ "$evicted" == "True|Preempted|"* ]] && pass "the sweep's Workload: Evicted True, reason Preempted" ||
  fail "Workload $sweep_wl Evicted is '$evicted', not True with reason Preempted"
[[ "$preempted" == "True|InCohortReclamation|"* ]] &&
  pass "the sweep's Workload: Preempted True, reason InCohortReclamation" ||
  fail "Workload $sweep_wl Preempted is '$preempted', not True with reason InCohortReclamation"
[[ "$reserved" == False\|*\|*"insufficient unused quota"* ]] &&
  pass "the sweep waits: QuotaReserved $(echo "$reserved" | cut -d'|' -f1-3)" ||
  fail "Workload $sweep_wl QuotaReserved is '$reserved', not False with 'insufficient unused quota'"

if completed team-a deadline 60s; then
  pass "team A's deadline completed"
else
  fail "team A's deadline did not complete within 60 s"; dump team-a
fi
if wait_until 60 wl_is team-b sweep Admitted True && ! suspended team-b sweep; then
  pass "the sweep admitted again once team A's quota was free"
  evicted=$(wl_condition team-b "$(workload_of team-b sweep)" Evicted)
  [[ "$evicted" == "False|QuotaReserved|"* ]] && pass "readmitted, its Evicted is False (QuotaReserved)" ||
    fail "readmitted, the sweep's Evicted is '$evicted', not False with reason QuotaReserved"
else
  fail "the sweep was not admitted again within 60 s"; dump team-b
fi
if completed team-b sweep 60s; then
  pass "the sweep completed"
else
  fail "the sweep did not complete within 60 s"; dump team-b
fi
[ "$(restarts team-b sweep)" = 0 ] && pass "the sweep completed with status.restarts 0" ||
  fail "the sweep completed with status.restarts $(restarts team-b sweep), not 0"
resumed=0 logs=""
for pod in $(ctl get pods -n team-b --jobset sweep -o name 2>/dev/null); do
  line=$(ctl logs -n team-b "${pod##*/}" 2>&1 | grep -m1 '^resuming at step')
  logs+="${pod##*/}: ${line:-no resume line}; "
  [ "${line#resuming at step }" -gt 0 ] 2>/dev/null && resumed=$((resumed + 1))
done
[ "$resumed" = 4 ] && pass "every pod resumed from its checkpoint: $logs" ||
  fail "$resumed of 4 pods resumed at a step > 0: $logs"
ctl delete jobset -n team-a deadline >/dev/null
ctl delete jobset -n team-b sweep >/dev/null

# ---------------------------------------------------------------------------------------
case_name="2 priority within a ClusterQueue"
cat >"$CLUSTER_DIR/priority.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: e2e-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: prio}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: e2e-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: prio-queue, namespace: prio}
spec: {clusterQueue: prio}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
EOF
# jobset_yaml NAME NAMESPACE QUEUE PRIORITY_CLASS PODS STEPS: PODS one-cpu pods of STEPS
# half-second steps each.
jobset_yaml() {
  cat <<EOF
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $1
  namespace: $2
  labels:
    kueue.x-k8s.io/queue-name: $3
${4:+    kueue.x-k8s.io/priority-class: $4}
spec:
  replicatedJobs:
  - name: w
    replicas: $5
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: c
              image: busybox
              command: [sh, -c, "for s in \$(seq 1 $6); do echo step \$s; sleep 0.5; done"]
              resources: {requests: {cpu: "1"}}
EOF
}
ctl apply -f "$CLUSTER_DIR/priority.yaml" >/dev/null || fail "apply the ClusterQueue and priority classes"
jobset_yaml low prio prio-queue low 4 16 >"$CLUSTER_DIR/low.yaml"
jobset_yaml high prio prio-queue high 4 6 >"$CLUSTER_DIR/high.yaml"
ctl apply -f "$CLUSTER_DIR/low.yaml" >/dev/null || fail "apply low"
if wait_until 60 eval '[ "$(running_pods prio low)" = 4 ]'; then
  pass "low (priority 10) admitted: 4 pods Running"
else
  fail "low did not get 4 Running pods within 60 s"; dump prio
fi
ctl apply -f "$CLUSTER_DIR/high.yaml" >/dev/null || fail "apply high"
if wait_until 30 suspended prio low; then
  pass "high (priority 1000) preempted low: low is suspended"
else
  fail "low was not suspended within 30 s of high's arrival"; dump prio
fi
[ "$(restarts prio low)" = 0 ] && pass "the preempted low: status.restarts 0" ||
  fail "the preempted low: status.restarts is $(restarts prio low), not 0"
low_wl=$(workload_of prio low)
wait_until 10 eval '[[ "$(wl_condition prio "$low_wl" Preempted)" == True\|* ]]'
preempted=$(wl_condition prio "$low_wl" Preempted)
[[ "$preempted" == "True|InClusterQueue|"* ]] && pass "low's Workload: Preempted True, reason InClusterQueue" ||
  fail "low's Workload $low_wl Preempted is '$preempted', not True with reason InClusterQueue"
if wait_until 60 eval '[ "$(running_pods prio high)" = 4 ]'; then
  pass "high runs its 4 pods"
else
  fail "high did not get 4 Running pods within 60 s"; dump prio
fi
if completed prio high 60s; then
  pass "high completed"
else
  fail "high did not complete within 60 s"; dump prio
fi
if completed prio low 60s; then
  pass "low was admitted again and completed after high"
else
  fail "low did not complete within 60 s of high"; dump prio
fi
[ "$(restarts prio low)" = 0 ] && pass "low completed with status.restarts 0" ||
  fail "low completed with status.restarts $(restarts prio low), not 0"
ctl delete jobsets --all -n prio >/dev/null

# ---------------------------------------------------------------------------------------
case_name="3 kill -9 of jobsetd with queued work"
cat >"$CLUSTER_DIR/crash.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: e2e-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: crash}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: e2e-flavor
      resources: [{name: cpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: crash-queue, namespace: crash}
spec: {clusterQueue: crash}
EOF
ctl apply -f "$CLUSTER_DIR/crash.yaml" >/dev/null || fail "apply the ClusterQueue of 2 cpus"
jobset_yaml first crash crash-queue "" 2 24 >"$CLUSTER_DIR/first.yaml"
jobset_yaml second crash crash-queue "" 2 4 >"$CLUSTER_DIR/second.yaml"
ctl apply -f "$CLUSTER_DIR/first.yaml" >/dev/null || fail "apply first"
wait_until 60 eval '[ "$(running_pods crash first)" = 2 ]' ||
  { fail "first did not get 2 Running pods within 60 s"; dump crash; }
ctl apply -f "$CLUSTER_DIR/second.yaml" >/dev/null || fail "apply second"
second_waits() {
  local wl
  wl=$(workload_of crash second)
  [ -n "$wl" ] && [[ "$(wl_condition crash "$wl" QuotaReserved)" == False\|*\|*"insufficient unused quota"* ]]
}
if wait_until 30 second_waits; then
  pass "second waits for quota: $(wl_condition crash "$(workload_of crash second)" QuotaReserved | cut -d'|' -f1-3)"
else
  fail "second is not pending for quota"; dump crash
fi
first_before=$(workloads_of crash first)
second_before=$(workloads_of crash second)
first_uid=$(js crash first 'js["metadata"]["uid"]')
second_uid=$(js crash second 'js["metadata"]["uid"]')

jobsetd_pid=${CLUSTER_PIDS[0]}
kill -KILL "$jobsetd_pid"
wait "$jobsetd_pid" 2>/dev/null
# The same flags, data dir and address as cluster_start's; the agents reconnect by themselves.
jobsetd_err="$CLUSTER_DIR/jobsetd-restarted.err"
"$BIN/scheduler/jobsetd" --listen="$SERVER" --data_dir="$CLUSTER_DIR/jobsetd" \
  --node_lost_timeout=5s --restart_grace=5s "${jobsetd_flags[@]}" \
  >"$CLUSTER_DIR/jobsetd-restarted.out" 2>"$jobsetd_err" &
CLUSTER_PIDS[0]=$!
if await_line "$CLUSTER_DIR/jobsetd-restarted.out" "jobsetd serving on " >/dev/null &&
  wait_until 30 eval '[ "$(ctl get nodes 2>/dev/null | grep -c " Ready")" = 4 ]'; then
  pass "jobsetd killed (-9, pid $jobsetd_pid) and restarted on $SERVER; the 4 agents reconnected"
else
  fail "jobsetd did not come back with 4 Ready nodes within 30 s"; ctl get nodes; tail -20 "$jobsetd_err"
fi
first_after=$(workloads_of crash first)
second_after=$(workloads_of crash second)
[ "$(js crash first 'js["metadata"]["uid"]')" = "$first_uid" ] &&
  [ "$(js crash second 'js["metadata"]["uid"]')" = "$second_uid" ] &&
  pass "both JobSets kept their uids" || fail "a JobSet's uid changed across the restart"
if [ -n "$first_before" ] && [ "$first_after" = "$first_before" ]; then
  pass "first's Workload is the same one (name and uid): $first_after"
else
  fail "first's Workloads before the kill: '$first_before'; after: '$(echo "$first_after" | tr '\n' ';')'"
fi
if [ -n "$second_before" ] && [ "$second_after" = "$second_before" ]; then
  pass "second's Workload is the same one (name and uid), no copy: $second_after"
else
  fail "second's Workloads before the kill: '$second_before'; after: '$(echo "$second_after" | tr '\n' ';')'"
fi
[ "$(ctl get workloads -n crash -o name 2>/dev/null | wc -l)" = 2 ] &&
  pass "namespace crash holds exactly 2 Workloads" ||
  fail "namespace crash holds these Workloads: $(ctl get workloads -n crash -o name | tr '\n' ' ')"
first_wl=$(workload_of crash first)
second_wl=$(workload_of crash second)
[[ "$(wl_condition crash "$first_wl" Admitted)" == True\|* ]] &&
  pass "first is still admitted" ||
  fail "first's Admitted after the restart: '$(wl_condition crash "$first_wl" Admitted)'"
if second_waits && suspended crash second; then
  pass "second is still pending and suspended: $(wl_condition crash "$second_wl" QuotaReserved | cut -d'|' -f2-3)"
else
  fail "second after the restart: suspend $(js crash second 'js["spec"].get("suspend")'), QuotaReserved '$(wl_condition crash "$second_wl" QuotaReserved)'"
  dump crash
fi
# Until first completes, second runs no pod (it has no quota).
overlap=""
first_completed() {
  [[ "$(condition_of crash first Completed)" == True\|* ]] && return 0
  [ "$(running_pods crash second)" = 0 ] || overlap="$overlap $(running_pods crash second)"
  return 1
}
if wait_until 60 first_completed; then
  pass "first completed"
else
  fail "first did not complete within 60 s of the restart"; dump crash
fi
[ -z "$overlap" ] && pass "second ran no pod while first ran" ||
  fail "second had Running pods while first ran (counts seen:$overlap)"
if completed crash second 60s; then
  pass "second completed"
else
  fail "second did not complete within 60 s"; dump crash
fi
# Second was given quota only once first had finished (RFC 3339 times compare as strings).
first_done=$(js crash first '"".join(c["lastTransitionTime"] for c in js["status"]["conditions"] if c["type"] == "Completed")')
second_reserved=$(wl_condition crash "$second_wl" QuotaReserved | awk -F'|' '$1 == "True" {print $4}')
if [ -n "$first_done" ] && [ -n "$second_reserved" ] && ! [[ "$second_reserved" < "$first_done" ]]; then
  pass "second reserved quota ($second_reserved) after first completed ($first_done)"
else
  fail "second reserved quota at '$second_reserved', first completed at '$first_done'"
fi
[ "$(restarts crash first)" = 0 ] && [ "$(restarts crash second)" = 0 ] &&
  pass "both completed with status.restarts 0" ||
  fail "status.restarts: first $(restarts crash first), second $(restarts crash second)"
ctl delete jobsets --all -n crash >/dev/null

# ---------------------------------------------------------------------------------------
case_name="4 a missing LocalQueue"
jobset_yaml lonely orphan lonely-queue "" 1 2 >"$CLUSTER_DIR/lonely.yaml"
ctl apply -f "$CLUSTER_DIR/lonely.yaml" >/dev/null || fail "apply lonely"
lonely_reason() {
  local wl
  wl=$(workload_of orphan lonely)
  [ -n "$wl" ] && wl_condition orphan "$wl" QuotaReserved | cut -d'|' -f1,3
}
if wait_until 30 eval '[ "$(lonely_reason)" = "False|LocalQueue lonely-queue doesn'"'"'t exist" ]'; then
  pass "QuotaReserved False: $(lonely_reason | cut -d'|' -f2)"
else
  fail "QuotaReserved of lonely's Workload is '$(lonely_reason)', not False with \"LocalQueue lonely-queue doesn't exist\""
  dump orphan
fi
if suspended orphan lonely && [ "$(ctl get pods -n orphan --jobset lonely -o name 2>/dev/null | wc -l)" = 0 ]; then
  pass "lonely stays suspended, with no pods"
else
  fail "lonely without its LocalQueue: suspend $(js orphan lonely 'js["spec"].get("suspend")'), pods: $(ctl get pods -n orphan --jobset lonely -o name | tr '\n' ' ')"
fi
cat >"$CLUSTER_DIR/lonely-queue.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lonely-queue, namespace: orphan}
spec: {clusterQueue: crash}
EOF
ctl apply -f "$CLUSTER_DIR/lonely-queue.yaml" >/dev/null || fail "apply the LocalQueue lonely-queue"
if wait_until 30 wl_is orphan lonely Admitted True && completed orphan lonely 60s; then
  pass "once the LocalQueue exists lonely is admitted and completes"
else
  fail "lonely was not admitted and completed once its LocalQueue existed"; dump orphan
fi
ctl delete jobsets --all -n orphan >/dev/null

echo "$failures failure(s)"
[ "$failures" = 0 ]
