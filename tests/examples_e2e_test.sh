#!/usr/bin/env bash
# The system as users meet it: jobsetd, four jobset-agents (two slices), jobsetctl and the
# Python client, all real, on 127.0.0.1 with ports chosen at run time. Nodes read as kubectl's
# (v1 Node JSON, table columns, cordon, describe). Every example reaches
# its end state (the PyTorch one runs in //tests:agent_e2e_test), exclusive placement puts
# each Job in its own slice, a JobSet too big for the free capacity waits with its reason and
# starts when capacity frees, upstream manifests apply, and a bad manifest creates nothing.
set -uo pipefail
runfiles=$(pwd)
BIN=$runfiles
CLUSTER_DIR=${TEST_TMPDIR:-/tmp}/examples-e2e
rm -rf "$CLUSTER_DIR"
# shellcheck source=tools/local_cluster.sh
. "$runfiles/tools/local_cluster.sh"
export PYTHONPATH="$runfiles/python"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
field() {  # field JOBSET PYTHON_EXPR_ON_js
  ctl get jobset "$1" -o json | /usr/bin/python3 -c "import json,sys; js=json.load(sys.stdin); print($2)"
}
trap 'cluster_stop; rm -rf "$CLUSTER_DIR/checkpoints"' EXIT
rm -rf "$CLUSTER_DIR/checkpoints"
slices_restart=$(own_checkpoints "$runfiles/examples/slices-restart.yaml")
in_place=$(own_checkpoints "$runfiles/examples/slices-restart-in-place.yaml")

# The checkpoints of the slices examples are a hostPath volume.
cluster_start 4 --allowed_host_paths="$CLUSTER_DIR/checkpoints" || exit 1

# Nodes as kubectl shows them: v1 Nodes in a v1 List, kubectl's table columns, cordon.
nodes_check='
import json, sys
doc = json.load(sys.stdin)
assert doc["apiVersion"] == "v1" and doc["kind"] == "List", doc.keys()
assert len(doc["items"]) == 4, len(doc["items"])
for n in doc["items"]:
    assert n["apiVersion"] == "v1" and n["kind"] == "Node", n.get("kind")
    name = n["metadata"]["name"]
    assert n["metadata"]["labels"]["kubernetes.io/hostname"] == name
    assert n["metadata"]["creationTimestamp"].endswith("Z")
    assert n["metadata"]["annotations"]["jobsetd.x-k8s.io/connected"] == "true"
    ready = [c for c in n["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["status"] == "True" and ready[0]["reason"] == "KubeletReady", ready
    assert ready[0]["lastHeartbeatTime"] and ready[0]["lastTransitionTime"], ready
    kinds = {a["type"]: a["address"] for a in n["status"]["addresses"]}
    assert kinds["InternalIP"].startswith("127.") and kinds["Hostname"] == name, kinds
    assert n["status"]["allocatable"] == n["status"]["capacity"] and "cpu" in n["status"]["capacity"]
    assert n["status"]["nodeInfo"]["operatingSystem"] == "linux"
    assert n["status"]["nodeInfo"]["kubeletVersion"].startswith("jobset-agent")
    assert "registration" not in n and "state" not in n
print(doc["items"][0]["metadata"]["name"])'
if first=$(ctl get nodes -o json | /usr/bin/python3 -c "$nodes_check" 2>&1); then
  pass "get nodes -o json: a v1 List of v1 Nodes (metadata, Ready condition, addresses, nodeInfo)"
else
  fail "get nodes -o json is not Kubernetes' shape: $first"; first=""
fi
header=$(ctl get nodes | head -1 | tr -s ' ')
[ "$header" = "NAME STATUS ROLES AGE VERSION" ] && pass "get nodes: kubectl's columns" ||
  fail "get nodes header: $header"
if [ -n "$first" ] && ctl cordon "$first" >/dev/null &&
  [ "$(ctl get nodes "$first" | awk 'NR == 2 {print $2}')" = "Ready,SchedulingDisabled" ] &&
  ctl get nodes "$first" -o json | /usr/bin/python3 -c '
import json, sys
n = json.load(sys.stdin)
assert n["kind"] == "Node" and n["spec"]["unschedulable"] is True
assert {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"} in n["spec"]["taints"]'; then
  pass "a cordoned node: Ready,SchedulingDisabled, spec.unschedulable and its taint"
else
  fail "cordon $first: $(ctl get nodes 2>&1 | tr '\n' ' ')"
fi
described=$(ctl describe node "$first" 2>&1)
if grep -q "^Unschedulable:  true" <<<"$described" && grep -q "KubeletReady" <<<"$described"; then
  pass "describe node: its conditions and cordon"
else
  fail "describe node $first: $described"
fi
[ -n "$first" ] && ctl uncordon "$first" >/dev/null

# 1. The leader/worker example, through the Python client's example launcher.
if /usr/bin/python3 -B "$runfiles/examples/python/launch.py" --config="$CONFIG" --timeout=60 \
  "$runfiles/examples/leader-workers.yaml" >"$CLUSTER_DIR/launch.out" 2>&1; then
  pass "examples/leader-workers.yaml completed (examples/python/launch.py)"
else
  fail "leader-workers via launch.py:"; cat "$CLUSTER_DIR/launch.out"
fi
ctl delete jobset train >/dev/null

# Success policy Any: completes with the driver, its workers stopped.
ctl apply -f "$runfiles/examples/success-policy-any.yaml" >/dev/null
if ctl wait jobset any-driver --for=condition=Completed --timeout=60s >/dev/null; then
  pass "examples/success-policy-any.yaml completed with its driver"
else
  fail "success-policy-any did not complete"; ctl describe jobset any-driver
fi
for _ in $(seq 1 100); do
  [ "$(ctl get pods --jobset any-driver | grep -c Running)" = 0 ] && break
  sleep 0.1
done
[ "$(ctl get pods --jobset any-driver | grep -c Running)" = 0 ] &&
  pass "its remaining workers were stopped" || fail "workers still running after success"
ctl delete jobset any-driver >/dev/null

# dependsOn: the workers start after the leader is ready, and find it.
ctl apply -f "$runfiles/examples/depends-on.yaml" >/dev/null
if ctl wait jobset ordered --for=condition=Completed --timeout=60s >/dev/null; then
  pass "examples/depends-on.yaml completed (workers after the leader)"
else
  fail "depends-on did not complete"; ctl describe jobset ordered
fi
ctl delete jobset ordered >/dev/null

# Suspend/resume: nothing runs while suspended; resumed, it completes.
ctl apply -f "$runfiles/examples/suspend-resume.yaml" >/dev/null
sleep 1
if [ "$(ctl get pods --jobset paused -o json | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" = 0 ]; then
  pass "a suspended JobSet runs nothing"
else
  fail "pods exist while suspended"
fi
ctl resume jobset paused >/dev/null
if ctl wait jobset paused --for=condition=Completed --timeout=60s >/dev/null; then
  pass "examples/suspend-resume.yaml completed once resumed"
else
  fail "suspend-resume did not complete"; ctl describe jobset paused
fi
ctl delete jobset paused >/dev/null

# 2. Restart-all from checkpoints, and exclusive placement: each Job in its own slice.
ctl apply -f "$slices_restart" >/dev/null
if ctl wait jobset demo --for=condition=Completed --timeout=60s >/dev/null; then
  pass "examples/slices-restart.yaml completed"
else
  fail "slices-restart did not complete"; ctl describe jobset demo
fi
restarts=$(field demo 'js["status"].get("restarts", 0)')
[ "$restarts" = 1 ] && pass "status.restarts is 1" || fail "status.restarts is $restarts, not 1"
placement=$(ctl get pods --jobset demo -o json | /usr/bin/python3 -c '
import json, sys
pods = json.load(sys.stdin)["items"]
print("\n".join(sorted("%s %s" % (p["metadata"]["annotations"]["jobset.sigs.k8s.io/job-index"],
                                  p["spec"]["nodeName"]) for p in pods
                       if p["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] == "1")))')
slices=$(ctl get nodes -o json | /usr/bin/python3 -c '
import json, sys
for n in json.load(sys.stdin)["items"]:
    m = n["metadata"]
    print(m["name"], m["labels"]["cloud.google.com/gke-nodepool"])')
per_job=$(while read -r job node; do
  echo "$job $(echo "$slices" | awk -v n="$node" '$1 == n {print $2}')"
done <<<"$placement" | sort -u)
if [ "$(echo "$per_job" | wc -l)" = 2 ] &&
  [ "$(echo "$per_job" | awk '{print $2}' | sort -u | wc -l)" = 2 ]; then
  pass "each Job in its own slice: $(echo "$per_job" | tr '\n' ' ')"
else
  fail "exclusive placement: job/slice pairs: $(echo "$per_job" | tr '\n' ' ') (pods: $placement)"
fi
# Pod output, read from the agents (kept after the pods ended).
pod=$(ctl get pods --jobset demo -o json | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    if p["spec"]["hostname"] == "demo-workers-1-1" and \
       p["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] == "1":
        print(p["metadata"]["name"])')
out=$(ctl logs "$pod" 2>&1)
if echo "$out" | grep -q "attempt 1: resuming at step 3" && echo "$out" | grep -q "step 6"; then
  pass "jobsetctl logs $pod: $(echo "$out" | head -1) ... $(echo "$out" | tail -1)"
else
  fail "jobsetctl logs $pod: $out"
fi
# Pods in Kubernetes' v1 shape (issue 39): state.terminated.exitCode, lastState, image, imageID,
# as kubectl's JSON has them, and none of jobsetd's flat fields.
shape=$(ctl get pods --jobset demo -o json | /usr/bin/python3 -c '
import json, sys
v1 = {"name", "state", "lastState", "ready", "started", "restartCount", "image", "imageID",
      "containerID"}
codes = {}
for p in json.load(sys.stdin)["items"]:
    for c in p["status"]["containerStatuses"]:
        assert set(c) <= v1 and len(c["state"]) == 1, c
        assert c["image"] and c["imageID"] == "" and "restartCount" in c, c
        attempt = p["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"]
        if "terminated" in c["state"]:
            t = c["state"]["terminated"]
            codes.setdefault(attempt, []).append((t["exitCode"], t["reason"]))
        if attempt == "1":
            t = c["state"]["terminated"]
            assert t["startedAt"].endswith("Z") and t["finishedAt"].endswith("Z"), t
            assert c["ready"] is False and c["started"] is False and c["lastState"] == {}, c
assert set(codes["1"]) == {(0, "Completed")}, codes
assert "0" not in codes or (1, "Error") in codes["0"], codes
print(sorted(codes["1"])[0][0])' 2>&1)
if [ "$shape" = 0 ]; then
  pass "get pods -o json: containerStatuses in v1 shape (state.terminated.exitCode 0, Completed)"
else
  fail "get pods -o json: containerStatuses not in v1 shape: $shape"
fi
ctl delete jobset demo >/dev/null
rm -rf "$CLUSTER_DIR/checkpoints"/*

# 2b. The same restarted in place: the same pods on the same nodes, attempt 1, from checkpoints.
ctl apply -f "$in_place" >/dev/null
pods_of() {
  ctl get pods --jobset demo-in-place -o json | /usr/bin/python3 -c '
import json, sys
for p in sorted(json.load(sys.stdin)["items"], key=lambda p: p["metadata"]["name"]):
    print(p["metadata"]["name"], p["metadata"]["uid"], p["spec"]["nodeName"],
          p["metadata"]["annotations"]["jobset.sigs.k8s.io/in-place-restart-attempt"])'
}
first=""
for _ in $(seq 1 100); do
  first=$(pods_of 2>/dev/null)
  [ "$(echo "$first" | grep -c ' 0$')" = 4 ] && break
  sleep 0.1
done
if ctl wait jobset demo-in-place --for=condition=Completed --timeout=60s >/dev/null; then
  pass "examples/slices-restart-in-place.yaml completed"
else
  fail "slices-restart-in-place did not complete"; ctl describe jobset demo-in-place
fi
status=$(field demo-in-place '"%s %s" % (js["status"].get("restarts", 0), js["status"].get("currentInPlaceRestartAttempt"))')
[ "$status" = "0 1" ] && pass "in place: restarts 0, currentInPlaceRestartAttempt 1" ||
  fail "in place: restarts and currentInPlaceRestartAttempt are $status, not 0 1"
last=$(pods_of)
if [ "$(echo "$first" | awk '{print $1, $2, $3}')" = "$(echo "$last" | awk '{print $1, $2, $3}')" ] &&
  [ "$(echo "$last" | grep -c ' 1$')" = 4 ]; then
  pass "in place: the same 4 pods (name, uid, node) ran attempt 1"
else
  fail "in place: pods before: $first; after: $last"
fi
pod=$(echo "$last" | awk '$1 ~ /^demo-in-place-workers-1-1-/ {print $1}')
out=$(ctl logs "$pod" 2>&1)
if echo "$out" | grep -q "attempt 1: resuming at step 3" && echo "$out" | grep -q "step 6"; then
  pass "in place: jobsetctl logs $pod: $(echo "$out" | head -1) ... $(echo "$out" | tail -1)"
else
  fail "in place: jobsetctl logs $pod: $out"
fi
ctl delete jobset demo-in-place >/dev/null

if ctl logs no-such-pod >/dev/null 2>&1; then
  fail "logs of an unknown pod succeeded"
else
  pass "logs of an unknown pod: $(ctl logs no-such-pod 2>&1)"
fi

# jobsetctl logs -f follows a running pod until it ends.
cat >"$CLUSTER_DIR/talk.yaml" <<'EOF'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: talk}
spec:
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: c
              image: busybox
              command: [sh, -c, "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done"]
EOF
ctl apply -f "$CLUSTER_DIR/talk.yaml" >/dev/null
talk=""
for _ in $(seq 1 100); do
  talk=$(ctl get pods --jobset talk 2>/dev/null | awk '$3 == "Running" {print $1}')
  [ -n "$talk" ] && break
  sleep 0.1
done
followed=$(timeout 30 "$BIN/cli/jobsetctl" --config="$CONFIG" logs -f "$talk" 2>&1)
if [ "$(echo "$followed" | grep -c '^line')" = 5 ]; then
  pass "jobsetctl logs -f followed $talk to its end (5 lines)"
else
  fail "jobsetctl logs -f $talk: $followed"
fi
ctl delete jobset talk >/dev/null

# 3. Too big for the free capacity: pending with its reason, then it starts.
hog=$(mktemp "$CLUSTER_DIR/hog.XXXX.yaml")
cat >"$hog" <<'EOF'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: hog}
spec:
  replicatedJobs:
  - name: w
    replicas: 3
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: c, image: busybox, command: [sleep, "4"], resources: {requests: {cpu: "1"}}}
EOF
sed -e 's/name: hog/name: big/' -e 's/replicas: 3/replicas: 4/' -e 's/"4"/"0"/' "$hog" >"$hog.big"
ctl apply -f "$hog" >/dev/null
for _ in $(seq 1 100); do
  [ "$(ctl get pods --jobset hog | grep -c Running)" = 3 ] && break
  sleep 0.1
done
ctl apply -f "$hog.big" >/dev/null
sleep 1
if ctl describe jobset big | grep -q "Insufficient cpu"; then
  pass "the big JobSet waits: $(ctl describe jobset big | grep -m1 'Insufficient cpu' | sed 's/  */ /g')"
else
  fail "no pending reason for the big JobSet:"; ctl describe jobset big
fi
[ "$(ctl get pods --jobset big | grep -c Running)" = 0 ] || fail "the big JobSet ran partially"
if ctl wait jobset big --for=condition=Completed --timeout=60s >/dev/null; then
  pass "the big JobSet started once capacity freed, and completed"
else
  fail "the big JobSet never completed"; ctl describe jobset big
fi
ctl delete jobset hog >/dev/null
ctl delete jobset big >/dev/null

# 4. Upstream's own example manifests are accepted as they are.
bad=0
for f in "$runfiles"/api/testdata/upstream/*.yaml; do
  ctl apply --dry-run -f "$f" >/dev/null 2>"$CLUSTER_DIR/apply.err" || {
    bad=$((bad + 1)); echo "rejected $f:"; cat "$CLUSTER_DIR/apply.err"; }
done
[ "$bad" = 0 ] && pass "every upstream example applies (--dry-run)" || fail "$bad upstream examples rejected"

# 5. A bad manifest: exit 1, the field path, nothing created.
sed -e 's/name: hog/name: broken/' -e 's/replicas: 3/replicas: -1/' "$hog" >"$hog.bad"
if ctl apply -f "$hog.bad" >/dev/null 2>"$CLUSTER_DIR/bad.err"; then
  fail "a negative replicas was accepted"
elif grep -q 'spec.replicatedJobs\[0\].replicas' "$CLUSTER_DIR/bad.err" &&
  ! ctl get jobsets | grep -q broken; then
  pass "bad manifest rejected: $(head -1 "$CLUSTER_DIR/bad.err")"
else
  fail "bad manifest: $(cat "$CLUSTER_DIR/bad.err")"
fi

echo "$failures failure(s)"
[ "$failures" = 0 ]
