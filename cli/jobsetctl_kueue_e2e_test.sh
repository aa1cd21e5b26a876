#!/usr/bin/env bash
# jobsetctl against a real jobsetd with Kueue's objects: kueue-semantics.md
# §8's manifests (api/testdata/kueue) applied unchanged, one file at a time
# and then all in one file with the JobSet they queue; get of every kind as a
# table and -o yaml; describe; -w; a refused object; the queued JobSet's
# pending Workload (get pendingworkloads, describe); delete by name and -f.
# Usage: jobsetctl_kueue_e2e_test.sh JOBSETCTL JOBSETD MANIFEST...
set -uo pipefail

jobsetctl=$(realpath "$1")
jobsetd=$(realpath "$2")
shift 2
for m in "$@"; do
  case "$(basename "$m")" in
    flavors.yaml) flavors=$(realpath "$m") ;;
    cluster-queue.yaml) cluster_queue=$(realpath "$m") ;;
    local-queue-and-priority-classes.yaml) queues=$(realpath "$m") ;;
    jobset.yaml) jobset=$(realpath "$m") ;;
  esac
done
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# start_jobsetd, run, expect, expect_exactly (the runfiles root is the cwd).
source cli/e2e_helpers.sh || exit 1
start_jobsetd "$jobsetd"

# §8.1-8.4, each file as it is.
run 0 apply -f "$flavors"
expect_exactly "resourceflavor.kueue.x-k8s.io/on-demand created
resourceflavor.kueue.x-k8s.io/spot created
resourceflavor.kueue.x-k8s.io/gpu-h100 created"
run 0 apply -f "$cluster_queue"
expect_exactly "clusterqueue.kueue.x-k8s.io/research created"
run 0 apply -f "$queues"
expect_exactly "localqueue.kueue.x-k8s.io/research-queue created
workloadpriorityclass.kueue.x-k8s.io/experiment created
workloadpriorityclass.kueue.x-k8s.io/flagship created"
run 0 apply -f "$cluster_queue" --dry-run
expect_exactly "clusterqueue.kueue.x-k8s.io/research unchanged (dry run)"
cat >"$tmp/cohort.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata:
  name: ml-org
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: on-demand
      resources:
      - name: cpu
        nominalQuota: 8
YAML
run 0 apply -f "$tmp/cohort.yaml"
expect_exactly "cohort.kueue.x-k8s.io/ml-org created"

# get: each kind as a table (the CRDs' printer columns) and as YAML.
run 0 get resourceflavors
[ "$(head -1 <<<"$out" | tr -s ' ')" = "NAME AGE" ] ||
  { echo "FAIL: get resourceflavors header: $(head -1 <<<"$out")"; failures=$((failures + 1)); }
expect out "gpu-h100"
run 0 get flavor spot -o yaml
expect out "apiVersion: kueue.x-k8s.io/v1beta1"
expect out "kind: ResourceFlavor"
expect out "cloud.example.com/spot"
run 0 get clusterqueues
[ "$(head -1 <<<"$out" | tr -s ' ')" = "NAME COHORT PENDING WORKLOADS" ] ||
  { echo "FAIL: get clusterqueues header: $(head -1 <<<"$out")"; failures=$((failures + 1)); }
expect out "research   ml-org"
run 0 get cq -o wide
expect out "STRATEGY"
expect out "BestEffortFIFO"
run 0 get clusterqueue research -o yaml
expect out "kind: ClusterQueue"
expect out "cohort: ml-org"
expect out "withinClusterQueue: LowerPriority"
expect out "- name: gpu-h100"
run 0 get cq research -o jsonpath='{.spec.resourceGroups[0].flavors[*].name}'
expect_exactly "gpu-h100 on-demand spot"
run 0 get cohorts
expect out "ml-org"
run 0 get co ml-org -o yaml
expect out "kind: Cohort"
run 0 get localqueues -n research
[ "$(head -1 <<<"$out" | tr -s ' ')" = "NAME CLUSTERQUEUE PENDING WORKLOADS ADMITTED WORKLOADS" ] ||
  { echo "FAIL: get localqueues header: $(head -1 <<<"$out")"; failures=$((failures + 1)); }
expect out "research-queue   research"
run 0 get lq -A
expect out "NAMESPACE"
run 0 get queue research-queue -n research -o yaml
expect out "kind: LocalQueue"
expect out "clusterQueue: research"
run 0 get localqueues
expect err "No resources found in default namespace."
run 0 get workloadpriorityclasses
expect out "NAME         VALUE"
expect out "flagship     10000"
run 0 get wpc experiment -o yaml
expect out "kind: WorkloadPriorityClass"
expect out "value: 50"
run 0 get workloads -A
run 0 get kwl -n research -o yaml
expect out "kind: List"
run 0 get cq -o name
expect_exactly "clusterqueue.kueue.x-k8s.io/research"
run 1 get cq missing
expect err 'not found'

# describe, -w.
run 0 describe clusterqueue research
expect out "Name:         research"
expect out "Kind:         ClusterQueue"
expect out "Cohort:"
expect out "Nominal Quota:"
run 0 describe lq research-queue -n research
expect out "Namespace:    research"
expect out "Cluster Queue:"
run 0 get cq -w --timeout=1s
expect out "research"

# A refused object: jobsetd's message for it, nothing stored.
cat >"$tmp/bad.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: bad
spec:
  queueingStrategy: Sometimes
YAML
run 1 apply -f "$tmp/bad.yaml"
expect err "clusterqueue.kueue.x-k8s.io/bad"
expect err "spec.queueingStrategy"
run 1 get cq bad
expect err "not found"

# §8 in one file, in its order, with the JobSet queued through it.
cat "$flavors" >"$tmp/setup.yaml"
for f in "$cluster_queue" "$queues" "$jobset"; do
  printf -- '---\n' >>"$tmp/setup.yaml"
  cat "$f" >>"$tmp/setup.yaml"
done
run 0 apply -f "$tmp/setup.yaml"
expect_exactly "resourceflavor.kueue.x-k8s.io/on-demand unchanged
resourceflavor.kueue.x-k8s.io/spot unchanged
resourceflavor.kueue.x-k8s.io/gpu-h100 unchanged
clusterqueue.kueue.x-k8s.io/research unchanged
localqueue.kueue.x-k8s.io/research-queue unchanged
workloadpriorityclass.kueue.x-k8s.io/experiment unchanged
workloadpriorityclass.kueue.x-k8s.io/flagship unchanged
jobset.jobset.x-k8s.io/llm-pretrain created"
run 0 get jobsets -n research -o name
expect out "jobset.jobset.x-k8s.io/llm-pretrain"

# Why it is pending: namespace research lacks the ClusterQueue's label, so its
# Workload waits, inadmissible, at the head of both queues.
for _ in $(seq 1 100); do
  "$jobsetctl" get pendingworkloads --clusterqueue research -o name 2>/dev/null |
    grep -q . && break
  sleep 0.1
done
run 0 get pendingworkloads --clusterqueue research -o wide
expect out "POSITION IN CLUSTERQUEUE   POSITION IN LOCALQUEUE"
expect out "research-queue   50         0                          0"
expect out "Inadmissible   Workload namespace doesn't match ClusterQueue selector"
run 0 get pendingworkloads -n research --localqueue research-queue -o yaml
expect out "kind: PendingWorkloadsSummary"
expect out "positionInLocalQueue: 0"
run 0 get pendingworkloads -n research --localqueue research-queue -o name
workload=${out#workload.kueue.x-k8s.io/}
[[ "$out" == workload.kueue.x-k8s.io/jobset-llm-pretrain-* ]] ||
  { echo "FAIL: get pendingworkloads -o name: $out"; failures=$((failures + 1)); }
run 1 get pendingworkloads --clusterqueue missing
expect err "not found"
run 2 get pendingworkloads -n research
expect err "exactly one of --clusterqueue CQ and --localqueue LQ"
run 0 describe jobset llm-pretrain -n research
expect out "Kueue:"
expect out "  Workload:      $workload"
expect out "  Queue:         research-queue (ClusterQueue research)"
expect out "  State:         Pending, position 0 in ClusterQueue research, 0 in LocalQueue research-queue"
expect out "  Reason:        Inadmissible: Workload namespace doesn't match ClusterQueue selector"
run 0 describe workload "$workload" -n research
expect out "Position In Cluster Queue:  0"

# delete by name, then the file.
run 0 delete cohort ml-org
expect_exactly 'cohort.kueue.x-k8s.io "ml-org" deleted'
run 1 delete cohort ml-org
expect err "not found"
run 0 delete -f "$tmp/setup.yaml"
expect out 'resourceflavor.kueue.x-k8s.io "on-demand" deleted'
expect out 'clusterqueue.kueue.x-k8s.io "research" deleted'
expect out 'localqueue.kueue.x-k8s.io "research-queue" deleted'
expect out 'workloadpriorityclass.kueue.x-k8s.io "flagship" deleted'
expect out 'jobset.jobset.x-k8s.io "llm-pretrain" deleted'
for kind in resourceflavors clusterqueues cohorts workloadpriorityclasses; do
  run 0 get "$kind"
  expect err "No resources found"
done
run 0 get localqueues -n research
expect err "No resources found in research namespace."

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
