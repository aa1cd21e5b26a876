# shellcheck shell=bash
# tools/demo --resilience: jobsetd's hang and straggler detection (docs/resilience.md) on a
# local jobsetd (metrics on) and four agents. Sourced by tools/demo, which builds, sets BIN
# and CLUSTER_DIR and stops everything it started. resilience_demo starts the cluster once and
# runs one function per scene; each fails the demo (exit 1) unless it ends as described:
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
#
# Hot spares (jobsetd.io/spare) are tested in scheduler/controller/resilience_test.cc, not shown.

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

# Waits up to 90 s until JobSet $1 has finished; exits 1 unless it completed after exactly
# one restart.
expect_completed_after_one_restart() {
  local restarts _
  for _ in $(seq 1 450); do
    state=$(jobset_field "$1" 'js["status"].get("terminalState", "")')
    [ -n "$state" ] && break
    sleep 0.2
  done
  restarts=$(jobset_field "$1" 'js["status"].get("restarts", 0)')
  if [ "$state" != Completed ] || [ "$restarts" != 1 ]; then
    echo "tools/demo: $1 ended '${state:-not finished}' after $restarts restart(s), not Completed after 1" >&2
    ctl describe jobset "$1" >&2
    exit 1
  fi
  echo "== $(date +%T) $1 completed after 1 restart"
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
    examples/resilience-straggler.yaml
  local slow_pod pod
  slow_pod=$rank1_pod
  echo "   (Stopped: replaced in the same step as flagged; each rank saves a checkpoint as it stops)"
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
  echo
  echo "== done in $(seconds_between "$started" "$(now_s)") s: a hang restarted from its checkpoint," \
    "its goodput, a straggler flagged, a straggler's node replaced"
}
