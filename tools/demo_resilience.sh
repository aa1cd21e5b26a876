# shellcheck shell=bash
# tools/demo --resilience: jobsetd's hang and straggler detection and hot spares
# (docs/resilience.md) on a local jobsetd (metrics on) and four agents, four more for the spare.
# Sourced by tools/demo, which builds, sets BIN and CLUSTER_DIR and stops everything it started.
# resilience_demo starts the cluster once and runs one function per scene; each fails the demo
# (exit 1) unless it ends as described:
#
#   resilience_hang_scene     examples/resilience-hang.yaml: three ranks in lockstep report
#                             their steps; rank 1 hangs, no step advances for the progress
#                             timeout (5s), jobsetd fails the attempt (ProgressStalled), the
#                             gang restarts once and completes from its checkpoint
#   resilience_flag_scene     examples/resilience-straggler.yaml with action Flag: rank 1's
#                             node is made slow, jobsetd flags its pod (Running,Straggler,
#                             the event, jobsetd_stragglers_total) after the window (10s)
#   resilience_replace_scene  the example as it is, action Replace: the same, and the gang
#                             restarts once without that node (on the spare) and completes
#
#   resilience_goodput_scene  the hang's goodput (describe's Goodput and Attempts), checked to
#                             add up to its wall time
#   resilience_spare_scene    a gang of three in slice-c (node-5..7, node-8 labelled
#                             jobsetd.io/spare=true), restartStrategy InPlaceRestart: rank 1's
#                             host is killed (kill -9 of its agent and its pod); after the
#                             node-lost timeout the spare takes its pod, the two others restart in
#                             place, `get pods -o wide` before and after; completes; its goodput
#
# kill_host and revive_host (a host dies with its pods; it comes back) serve
# tests/hot_spare_e2e_test.sh too.

# Where the examples checkpoint (their hostPath volumes); a test moves it (example_file).
RESILIENCE_CKPT=${RESILIENCE_CKPT:-/tmp/jobsetd-example-checkpoints}

# Prints the manifest to apply for example $1: the example itself or, with RESILIENCE_CKPT
# moved, a copy in CLUSTER_DIR that checkpoints there.
example_file() {
  if [ "$RESILIENCE_CKPT" = /tmp/jobsetd-example-checkpoints ]; then
    echo "$1"
    return
  fi
  sed "s|/tmp/jobsetd-example-checkpoints/|$RESILIENCE_CKPT/|" "$1" >"$CLUSTER_DIR/${1##*/}"
  echo "$CLUSTER_DIR/${1##*/}"
}

# Prints seconds since the epoch, with a fraction.
now_s() { date +%s.%N; }

# Prints $2 - $1 (seconds since the epoch), to a tenth of a second.
seconds_between() { /usr/bin/python3 -c "print(f'{$2 - $1:.1f}')"; }

# Prints field $2 (a Python expression over js, the JobSet's JSON) of JobSet $1.
jobset_field() {
  ctl get jobset "$1" -o json 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; js=json.load(sys.stdin); print($2)" 2>/dev/null || true
}

# Prints the Events section of `jobsetctl describe jobset $1`, indented.
show_events() {
  echo "-- jobsetctl describe jobset $1 (its events)"
  ctl describe jobset "$1" | sed -n '/^Events:/,$p' | sed 's/^/   /'
}

# Prints "<hostname> <node> <phase>" for each pod of JobSet $1's restart attempt $2.
attempt_pods() {
  ctl get pods --jobset "$1" -l "jobset.sigs.k8s.io/restart-attempt=$2" -o json 2>/dev/null |
    /usr/bin/python3 -c '
import json, sys
for p in sorted(json.load(sys.stdin)["items"], key=lambda p: p["spec"]["hostname"]):
    print(p["spec"]["hostname"], p["spec"].get("nodeName", ""), p["status"].get("phase", ""))' ||
    true
}

# Waits up to 30 s until the 3 pods of JobSet $1's attempt $2 run.
wait_attempt_running() {
  local _
  for _ in $(seq 1 150); do
    [ "$(attempt_pods "$1" "$2" | grep -c ' Running$')" = 3 ] && return 0
    sleep 0.2
  done
  echo "tools/demo: attempt $2 of $1 never ran its 3 pods" >&2
  ctl get pods --jobset "$1" -o wide >&2
  exit 1
}

# Prints "<name>/<uid>" of the pod of rank $2 (index $2 of Job 0) of JobSet $1's current
# attempt.
rank_pod() {
  ctl get pods --jobset "$1" -o json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    if p["spec"]["hostname"] == sys.argv[1]:
        print("%s/%s" % (p["metadata"]["name"], p["metadata"]["uid"]))' "$1-workers-0-$2" || true
}

# Prints the lines of pod $1's log (as rank_pod names it) that match $2, as "   <pod>: <line>":
# from jobsetctl logs, or, for a pod of an earlier attempt, which jobsetd no longer knows, from
# the log its agent kept in its work dir.
show_log_lines() {
  local out
  out=$(ctl logs "${1%/*}" 2>/dev/null) || out=$(cat "$CLUSTER_DIR"/node-*/logs/"${1#*/}"/trainer.log)
  grep -E "$2" <<<"$out" | sed "s|^|   ${1%/*}: |" || true
}

# expect_completed NAME RESTARTS: waits up to 90 s for NAME to end; fails the demo unless it
# Completed after exactly RESTARTS restarts.
expect_completed() {
  local restarts state _
  for _ in $(seq 1 450); do
    state=$(jobset_field "$1" 'js["status"].get("terminalState", "")')
    [ -n "$state" ] && break
    sleep 0.2
  done
  restarts=$(jobset_field "$1" 'js["status"].get("restarts", 0)')
  if [ "$state" != Completed ] || [ "$restarts" != "$2" ]; then
    echo "tools/demo: $1 ended '${state:-not finished}' after $restarts restart(s), not Completed after $2" >&2
    ctl describe jobset "$1" >&2
    exit 1
  fi
}
expect_completed_after_one_restart() {
  expect_completed "$1" 1
  echo "== $(date +%T) $1 completed after 1 restart"
}
# status.restarts 0: restarts in place are not recreations.
expect_completed_without_restart() {
  expect_completed "$1" 0
  echo "== $(date +%T) $1 completed (status.restarts 0; in-place attempt" \
    "$(jobset_field "$1" 'js["status"].get("currentInPlaceRestartAttempt", 0)'))"
}

resilience_hang_scene() {
  local name=resilience-hang ckpt="$RESILIENCE_CKPT/resilience-hang"
  echo
  echo "== scene 1: a hang, detected and recovered"
  echo "   examples/resilience-hang.yaml: 3 ranks in lockstep, a step every 0.5 s, a checkpoint"
  echo "   every 3, progress reported to \$JOBSET_PROGRESS_FILE; jobsetd.io/progress-timeout: 5s."
  echo "   On attempt 0, rank 1 hangs after step 5 and the other ranks wait for it."
  echo "-- jobsetctl apply -f examples/resilience-hang.yaml"
  ctl apply -f "$(example_file examples/resilience-hang.yaml)" | sed 's/^/   /'
  # The gang's step is the lowest one its ranks finished (they write it to the shared folder).
  local step=-1 now last_at="" restarted_at="" restarts old_pods="" pod _
  for _ in $(seq 1 300); do
    now=$(cat "$ckpt"/attempt-0-rank-0 "$ckpt"/attempt-0-rank-1 "$ckpt"/attempt-0-rank-2 \
      2>/dev/null | sort -n | head -1 || true)
    if [ -f "$ckpt"/attempt-0-rank-0 ] && [ -f "$ckpt"/attempt-0-rank-1 ] &&
      [ -f "$ckpt"/attempt-0-rank-2 ] && [ "$now" != "$step" ]; then
      step=$now
      last_at=$(now_s)
      [ -n "$old_pods" ] || old_pods="$(rank_pod "$name" 0) $(rank_pod "$name" 1)"
      echo "   $(date +%T.%2N) the gang finished step $step"
    fi
    restarts=$(jobset_field "$name" 'js["status"].get("restarts", 0)')
    if [ "${restarts:-0}" -ge 1 ]; then
      restarted_at=$(now_s)
      break
    fi
    sleep 0.2
  done
  if [ -z "$restarted_at" ] || [ -z "$last_at" ]; then
    echo "tools/demo: $name was not restarted within 60 s" >&2
    ctl describe jobset "$name" >&2
    exit 1
  fi
  echo "== $(date +%T.%2N) jobsetd restarted the gang (status.restarts $restarts):" \
    "$(seconds_between "$last_at" "$restarted_at") s after its last step (timeout 5s)"
  echo "-- jobsetctl describe jobset $name (its restarts)"
  ctl describe jobset "$name" | grep -E '^Restarts:' | sed 's/^/   /' || true
  show_events "$name"
  expect_completed_after_one_restart "$name"
  show get pods --jobset "$name" -o wide
  echo "-- what ranks 0 and 1 printed on attempt 0, then on attempt 1"
  for pod in $old_pods; do show_log_lines "$pod" 'hanging|step 5 '; done
  for pod in $(rank_pod "$name" 0) $(rank_pod "$name" 1); do
    show_log_lines "$pod" 'resuming|step 12 '
  done
}

# The hang's JobSet, finished: where its wall time went (status.goodput, `describe`'s Goodput
# and Attempts), checked to add up to the time from submission to the end (within 1 %).
resilience_goodput_scene() {
  local name=resilience-hang
  echo
  echo "== scene 2: goodput, where $name's wall time went"
  echo "-- jobsetctl describe jobset $name (Goodput and Attempts)"
  ctl describe jobset "$name" | sed -n '/^Goodput:/,/^Events:/p' | grep -v '^Events:' |
    sed 's/^/   /'
  local check
  check=$(ctl get jobset "$name" -o json | /usr/bin/python3 -c '
import datetime, json, sys
g = json.load(sys.stdin)["status"].get("goodput", {})
def at(s):
    whole, _, frac = s.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp() + float("0." + (frac or "0"))
def sec(s):
    return float(s[:-1]) if s else 0.0
parts = [sec(g.get(k, "")) for k in ("queued", "starting", "productive", "stalled", "restarting")]
wall = at(g["finished"]) - at(g["submitted"]) if g.get("finished") else -1
ok = wall > 0 and abs(sum(parts) - wall) <= 0.01 * wall
print(("ok" if ok else "bad"), f"{sum(parts):.2f} {wall:.2f}")' 2>&1 || true)
  if [ "${check%% *}" != ok ]; then
    echo "tools/demo: $name's goodput does not add up: $check" >&2
    ctl get jobset "$name" -o yaml >&2
    exit 1
  fi
  set -- $check
  echo "== the phases add up to $2 s of $3 s from submission to the end"
}

# Applies manifest $2 (JobSet $1, shown as $3, checkpointing in $RESILIENCE_CKPT/$1), makes
# the node of its rank 1 slow once its pods run and waits until a pod's STATUS says
# Straggler: sets slow (the node), rank1_pod (its pod, as rank_pod names it), before
# (attempt_pods of attempt 0), table (that `get pods -o wide`) and slowed_at, flagged_at.
run_until_straggler() {
  local name=$1 ckpt="$RESILIENCE_CKPT/$1" _
  echo "-- jobsetctl apply -f $3"
  ctl apply -f "$2" | sed 's/^/   /'
  wait_attempt_running "$name" 0
  before=$(attempt_pods "$name" 0)
  rank1_pod=$(rank_pod "$name" 1)
  slow=$(echo "$before" | awk -v h="$name-workers-0-1" '$1 == h {print $2}')
  show get pods --jobset "$name" -o wide
  echo "$slow" >"$ckpt/slow-nodes"
  slowed_at=$(now_s)
  echo "== $(date +%T.%2N) $slow made slow ($ckpt/slow-nodes): rank 1 now takes 2 s a step"
  flagged_at=""
  for _ in $(seq 1 600); do
    table=$(ctl get pods --jobset "$name" -l jobset.sigs.k8s.io/restart-attempt=0 -o wide \
      2>/dev/null || true)
    if grep -q Straggler <<<"$table"; then
      flagged_at=$(now_s)
      break
    fi
    sleep 0.1
  done
  if [ -z "$flagged_at" ]; then
    echo "tools/demo: no pod of $name was flagged a straggler within 60 s" >&2
    ctl describe jobset "$name" >&2
    exit 1
  fi
  # With Replace ($4: Stopped,Straggler) the flagged pod's stop is shown too: it is ordered in
  # the pass that flags it, its agent's report may come a moment later.
  if [ -n "${4:-}" ]; then
    for _ in $(seq 1 100); do
      grep -q "$4" <<<"$table" && break
      sleep 0.1
      table=$(ctl get pods --jobset "$name" -l jobset.sigs.k8s.io/restart-attempt=0 -o wide \
        2>/dev/null || true)
    done
  fi
  echo "== $(date +%T.%2N) flagged $(seconds_between "$slowed_at" "$flagged_at") s after the node" \
    "turned slow (window 10s)"
  echo "-- jobsetctl get pods --jobset $name -o wide"
  echo "   ${table//$'\n'/$'\n'   }"
}

# Prints jobsetd_stragglers_total from jobsetd's /metrics.
show_stragglers_metric() {
  local metrics
  metrics=$(sed -n 's/^jobsetd metrics on \([^ ]*\).*/\1/p' "$CLUSTER_DIR/jobsetd.out")
  echo "-- $metrics: $(/usr/bin/python3 -c "
import sys, urllib.request
for line in urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().splitlines():
    if line.startswith('jobsetd_stragglers_total'): print(line)" "$metrics" 2>&1)"
}

resilience_flag_scene() {
  local name=resilience-flag manifest="$CLUSTER_DIR/resilience-flag.yaml" _
  echo
  echo "== scene 3: a straggler flagged"
  echo "   examples/resilience-straggler.yaml as resilience-flag, with jobsetd.io/straggler-action:"
  echo "   Flag: 3 ranks stepping on their own every 0.5 s; threshold 0.7 x the gang's median"
  echo "   step rate, window 10s."
  sed -e "s/^  name: resilience-straggler$/  name: $name/" -e "s|/resilience-straggler$|/$name|" \
    -e 's|jobsetd.io/straggler-action: Replace|jobsetd.io/straggler-action: Flag|' \
    "$(example_file examples/resilience-straggler.yaml)" >"$manifest"
  run_until_straggler "$name" "$manifest" "examples/resilience-straggler.yaml (as $name, Flag)"
  echo "-- the pod's condition (jobsetctl get pods -o json)"
  ctl get pods --jobset "$name" -o json | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    for c in p["status"].get("conditions", []):
        if c["type"] == "Straggler":
            print("   %s on %s: %s=%s %s" % (p["metadata"]["name"], p["spec"]["nodeName"],
                                           c["type"], c["status"], c.get("message", "")))' || true
  show_events "$name"
  show_stragglers_metric
  echo "== Flag only reports: rank 1 would run on at a quarter speed. Deleting $name."
  ctl delete jobset "$name" | sed 's/^/   /'
}

resilience_replace_scene() {
  local name=resilience-straggler
  echo
  echo "== scene 4: a straggler replaced"
  echo "   examples/resilience-straggler.yaml: the same with jobsetd.io/straggler-action: Replace"
  echo "   (restartStrategy BlockingRecreate). Four nodes, three ranks: one node is spare."
  run_until_straggler "$name" "$(example_file examples/resilience-straggler.yaml)" \
    examples/resilience-straggler.yaml "Stopped,Straggler"
  local slow_pod pod
  slow_pod=$rank1_pod
  echo "   (Stopped: stopped for its replacement as it is flagged; each rank saves a checkpoint as it stops)"
  show_events "$name"
  show_stragglers_metric
  echo "== the gang restarts without $slow"
  wait_attempt_running "$name" 1
  local after
  after=$(attempt_pods "$name" 1)
  show get pods --jobset "$name" -o wide
  echo "-- nodes: attempt 0 on $(echo "$before" | awk '{print $2}' | sort | xargs)," \
    "attempt 1 on $(echo "$after" | awk '{print $2}' | sort | xargs)"
  if echo "$after" | awk '{print $2}' | grep -qx "$slow"; then
    echo "tools/demo: attempt 1 of $name runs on the straggler's node $slow" >&2
    exit 1
  fi
  expect_completed_after_one_restart "$name"
  echo "-- what rank 1 printed on attempt 0, then on attempt 1"
  for pod in $slow_pod $(rank_pod "$name" 1); do
    show_log_lines "$pod" 'slow|SIGTERM|resuming|done'
  done
}

# Hot spares: agents of a slice of their own, a host killed under a gang, and the host back.
declare -A SLICE_AGENT_PIDS=()
declare -A SLICE_AGENT_ARGS=()

# start_slice_agents FIRST LAST SLICE [SPARE]: agents node-FIRST..node-LAST at 127.0.0.<i+1>,
# one cpu each as cluster_start's, labelled cloud.google.com/gke-nodepool=SLICE (node-SPARE
# also jobsetd.io/spare=true, as an operator labels a hot spare); their pids go to CLUSTER_PIDS
# (cluster_stop stops them) and SLICE_AGENT_PIDS. Waits up to 20 s until all are Ready.
start_slice_agents() {
  local first=$1 last=$2 slice=$3 spare=${4:-} i labels node _
  for i in $(seq "$first" "$last"); do
    node=node-$i
    labels=cloud.google.com/gke-nodepool=$slice
    [ "$i" = "$spare" ] && labels="$labels,jobsetd.io/spare=true"
    SLICE_AGENT_ARGS[$node]="--scheduler=$SERVER --node_name=$node --address=127.0.0.$((i + 1))
      --capacity=cpu=1,memory=2Gi --labels=$labels --work_dir=$CLUSTER_DIR/$node
      --shim=$BIN/agent/runtime/jobset-pod-shim
      --join_token_file=$CLUSTER_DIR/jobsetd/join-token"
    start_slice_agent "$node"
  done
  for _ in $(seq 1 200); do
    [ "$(ctl get nodes 2>/dev/null | grep -cE "^node-($(seq -s '|' "$first" "$last")) +Ready")" = \
      $((last - first + 1)) ] && return 0
    sleep 0.1
  done
  echo "tools/demo: agents node-$first..node-$last did not all register" >&2
  ctl get nodes >&2
  exit 1
}

# start_slice_agent NODE: (re)starts NODE's agent with the flags start_slice_agents gave it.
start_slice_agent() {
  # shellcheck disable=SC2086  # the flags are words without spaces
  "$BIN/agent/jobset-agent" ${SLICE_AGENT_ARGS[$1]} ${AGENT_FLAGS:-} \
    >>"$CLUSTER_DIR/$1.out" 2>>"$CLUSTER_DIR/$1.err" &
  CLUSTER_PIDS+=($!)
  SLICE_AGENT_PIDS[$1]=$!
}

# Prints the start time of process $1 (field 22 of /proc/$1/stat), or nothing.
proc_start_time() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  # shellcheck disable=SC2086  # split into fields 3..
  set -- ${stat##*) }
  echo "${20}"
}

# kill_host NODE: NODE's host dies (kill -9): its agent (started by start_slice_agent), then each
# of its pods' jobset-pod-shims (each in a session of its own, it would outlive the agent: the
# pid in its shim.pid, if that process started when the file says) and every process left in the
# pods' cgroups (their cgroups file). Exits 1 if a pod process survives.
kill_host() {
  local node=$1 dir shim started cg procs pid _ left=()
  kill -KILL "${SLICE_AGENT_PIDS[$node]}" 2>/dev/null || true
  wait "${SLICE_AGENT_PIDS[$node]}" 2>/dev/null || true
  # Gone: cluster_stop (under set -e) must not signal or wait for it.
  for pid in "${CLUSTER_PIDS[@]}"; do
    [ "$pid" = "${SLICE_AGENT_PIDS[$node]}" ] || left+=("$pid")
  done
  CLUSTER_PIDS=("${left[@]}")
  for dir in "$CLUSTER_DIR/$node"/pods/*; do
    [ -d "$dir" ] || continue
    if read -r shim started <"$dir/shim.pid" 2>/dev/null &&
      [ -n "$shim" ] && [ "$(proc_start_time "$shim")" = "$started" ]; then
      kill -KILL "$shim" 2>/dev/null || true
    fi
    [ -f "$dir/cgroups" ] || continue
    for _ in $(seq 1 100); do
      procs=""
      while read -r cg; do
        [ -d "$cg" ] || continue
        procs="$procs $(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')"
      done <"$dir/cgroups"
      [ -z "${procs// /}" ] && continue 2
      for pid in $procs; do kill -KILL "$pid" 2>/dev/null || true; done
      sleep 0.02
    done
    echo "tools/demo: processes of pod ${dir##*/} on $node survive SIGKILL:$procs" >&2
    exit 1
  done
}

# revive_host NODE: NODE's host is back (rebooted): its agent starts again and, told by jobsetd
# that its old pods are not wanted, removes them (cgroups and directories). Waits up to 20 s.
revive_host() {
  local _
  start_slice_agent "$1"
  for _ in $(seq 1 200); do
    [ -z "$(find "$CLUSTER_DIR/$1/pods" -mindepth 1 -maxdepth 1 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  echo "tools/demo: $1's agent, back, kept its old pods" >&2
  exit 1
}

# spare_gang_manifest NAME PODS: a JobSet of PODS pods in one exclusive slice
# (cloud.google.com/gke-nodepool), restartStrategy InPlaceRestart, one cpu each; each rank
# reports a step every 0.5 s to $JOBSET_PROGRESS_FILE, until stopped on attempt 0 and for 6 steps
# on later attempts.
spare_gang_manifest() {
  cat <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: $1
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  failurePolicy: {maxRestarts: 3, restartStrategy: InPlaceRestart}
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: $2
        completions: $2
        backoffLimit: 2147483647
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: trainer
              image: busybox
              resources: {requests: {cpu: "1"}}
              command:
              - /bin/sh
              - -c
              - |
                a=\$JOBSET_IN_PLACE_RESTART_ATTEMPT r=\$JOB_COMPLETION_INDEX
                echo "attempt \$a: rank \$r starting"
                trap 'echo "attempt \$a: rank \$r stopped (SIGTERM)"; exit 143' TERM
                i=0
                while :; do
                  i=\$((i + 1))
                  echo "step=\$i" >>"\$JOBSET_PROGRESS_FILE"
                  if [ "\$a" != 0 ] && [ \$i -ge 6 ]; then echo "attempt \$a: rank \$r done"; exit 0; fi
                  sleep 0.5 & wait \$!
                done
YAML
}

# Prints "<rank> <uid> <node> <phase> <in-place attempt> <name>" for each pod of JobSet $1 not on
# the lost node $2 (none: ""), by rank.
gang_pods() {
  ctl get pods --jobset "$1" -o json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
rows = []
for p in json.load(sys.stdin)["items"]:
    a = p["metadata"].get("annotations", {})
    node = p["spec"].get("nodeName", "")
    if node and node == sys.argv[1]:
        continue
    rows.append((int(a.get("batch.kubernetes.io/job-completion-index", -1)), p["metadata"]["uid"],
                 node or "-", p["status"].get("phase", ""),
                 a.get("jobset.sigs.k8s.io/in-place-restart-attempt", ""),
                 p["metadata"]["name"]))
for r in sorted(rows):
    print(*r)' "${2:-}" || true
}

# wait_gang_running NAME PODS ATTEMPT [LOST] [SECONDS]: waits (default 30 s) until PODS pods of
# NAME off node LOST run in-place attempt ATTEMPT; exits 1 if they never do.
wait_gang_running() {
  local _
  for _ in $(seq 1 $((${5:-30} * 20))); do
    [ "$(gang_pods "$1" "${4:-}" | awk -v a="$3" '$4 == "Running" && $5 == a' | wc -l)" = "$2" ] &&
      return 0
    sleep 0.05
  done
  echo "tools/demo: $1 never ran its $2 pods at in-place attempt $3" >&2
  ctl get pods --jobset "$1" -o wide >&2
  ctl describe jobset "$1" >&2
  exit 1
}

# A gang of three in slice-c (node-5..7, and node-8 a spare that takes no first attempt): a host
# under it dies (kill -9 of it and its pods); jobsetd declares it lost after --node_lost_timeout
# (5s here), the lost pod is made again on the spare, in the same slice, and the two others
# restart in place (same pods, attempt 1) with it; the gang completes and its goodput is shown.
resilience_spare_scene() {
  local name=resilience-spare before after victim killed_at running_at
  echo
  echo "== scene 5: a spare takes a lost host's place"
  echo "   Four more agents, node-5..8, one cpu each, in slice-c (cloud.google.com/gke-nodepool);"
  echo "   the operator keeps node-8 as a hot spare: jobsetd.io/spare=true takes no first attempt."
  start_slice_agents 5 8 slice-c
  echo "-- jobsetctl label node node-8 jobsetd.io/spare=true"
  ctl label node node-8 jobsetd.io/spare=true | sed 's/^/   /'
  echo "   $name: 3 ranks, exclusive-topology cloud.google.com/gke-nodepool (only slice-c has 3"
  echo "   free hosts), restartStrategy InPlaceRestart; each rank reports a step every 0.5 s."
  echo "-- jobsetctl apply -f $CLUSTER_DIR/$name.yaml"
  spare_gang_manifest "$name" 3 >"$CLUSTER_DIR/$name.yaml"
  ctl apply -f "$CLUSTER_DIR/$name.yaml" | sed 's/^/   /'
  wait_gang_running "$name" 3 0
  before=$(gang_pods "$name")
  show get pods --jobset "$name" -o wide
  victim=$(awk '$1 == 1 {print $3}' <<<"$before")
  killed_at=$(now_s)
  kill_host "$victim"
  echo "== $(date +%T.%2N) $victim's host killed (kill -9 of its agent and of its pod's processes)"
  wait_gang_running "$name" 3 1 "$victim"
  running_at=$(now_s)
  after=$(gang_pods "$name" "$victim")
  echo "== $(date +%T.%2N) the gang runs again, $(seconds_between "$killed_at" "$running_at") s after" \
    "the kill (node_lost_timeout 5s + 1 s: the target)"
  show get pods --jobset "$name" -o wide
  local nodes_before nodes_after kept
  nodes_before=$(awk '{print $3}' <<<"$before" | sort | xargs)
  nodes_after=$(awk '{print $3}' <<<"$after" | sort | xargs)
  kept=$(awk 'NR == FNR {uid[$2] = 1; next} ($2 in uid)' <(echo "$before") <(echo "$after") |
    wc -l)
  echo "-- nodes: attempt 0 on $nodes_before; attempt 1 on $nodes_after;" \
    "$kept pods restarted in place (same uid)"
  if [ "$nodes_after" != "$(echo "$nodes_before" | tr ' ' '\n' | grep -vx "$victim" |
    { cat; echo node-8; } | sort | xargs)" ] || [ "$kept" != 2 ]; then
    echo "tools/demo: expected the spare node-8 in $victim's place and 2 pods kept" >&2
    exit 1
  fi
  show_events "$name"
  expect_completed_without_restart "$name"
  echo "-- jobsetctl describe jobset $name (Goodput)"
  ctl describe jobset "$name" | sed -n '/^Goodput:/,/^Events:/p' | grep -v '^Events:' |
    sed 's/^/   /'
  echo "-- $victim's host comes back: its agent removes the pod jobsetd no longer wants"
  revive_host "$victim"
  echo "   $victim: no pods left"
}

resilience_demo() {
  local started ckpt
  started=$(now_s)
  for ckpt in resilience-hang resilience-flag resilience-straggler; do
    # The examples' checkpoints are hostPath volumes, written by their pods' default
    # (non-root) user.
    rm -rf "${RESILIENCE_CKPT:?}/$ckpt"
    mkdir -p "$RESILIENCE_CKPT/$ckpt"
    chmod 0777 "$RESILIENCE_CKPT/$ckpt"
  done
  echo "== starting jobsetd (metrics on) and 4 agents (one cpu each)"
  local r=$RESILIENCE_CKPT
  cluster_start 4 --metrics_listen=127.0.0.1:0 \
    --allowed_host_paths="$r/resilience-hang,$r/resilience-flag,$r/resilience-straggler"
  echo "   jobsetd serving on $SERVER"
  ctl get nodes
  resilience_hang_scene
  resilience_goodput_scene
  resilience_flag_scene
  resilience_replace_scene
  resilience_spare_scene
  echo
  echo "== done in $(seconds_between "$started" "$(now_s)") s: a hang restarted from its checkpoint," \
    "its goodput, a straggler flagged, a straggler's node replaced, a spare in a lost host's place"
}
