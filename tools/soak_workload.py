"""The soak's workload: the JobSet shapes it submits and the pod script that stamps what each
process does. Used by tools/soak.py; the stamps are read by tools/soak_check.py."""
import json

A = "jobset.sigs.k8s.io"

# ($$$$ is the shell's $$: Kubernetes' command expansion turns $$ into $.)
# Each pod appends "KIND T POD_UID NODE ATTEMPT INPLACE RJOB JOBINDEX PODINDEX PID [CODE]" to
# $MARK: "start" once, "beat" every 0.5 s, "exit" with its code just before a normal exit.
# BEHAVIOUR: ok (exit 0 after DURATION s); fail (pod 0 of attempt 0 exits 1, the rest as ok);
# oom (pod 0 of attempt 0 allocates past its 32Mi limit); ignore_term (runs until killed,
# ignoring SIGTERM); doublefork (leaves a daemonized grandchild behind, then as ok).
POD_SCRIPT = r"""
ip=${INPLACE:-0}; pi=${PODI:-0}
me="$POD_UID $NODE $ATTEMPT $ip $RJOB $JOBI $pi $$$$"
st() { echo "$1 $(date +%s.%N) $me $2" >> "$MARK"; }
st start
first=0
if [ "$ATTEMPT" = 0 ] && [ "$ip" = 0 ] && [ "$JOBI" = 0 ] && [ "$pi" = 0 ] && [ "$RJOB" = "$FAILER" ]; then first=1; fi
case "$BEHAVIOUR" in
  ignore_term) trap '' TERM ;;
  doublefork) (setsid sh -c 'exec sleep 3600' </dev/null >/dev/null 2>&1 &) ;;
  oom) if [ $first = 1 ]; then st beat; exec tail /dev/zero; fi ;;
esac
n=0
while [ "$BEHAVIOUR" = ignore_term ] || [ $n -lt $((DURATION * 2)) ]; do
  sleep 0.5; st beat; n=$((n + 1))
done
if [ $first = 1 ] && [ "$BEHAVIOUR" = fail ]; then st exit 1; exit 1; fi
st exit 0
exit 0
"""


def _env(mark, behaviour, duration, failer):
    def field(path):
        return {"valueFrom": {"fieldRef": {"fieldPath": path}}}
    return [
        {"name": "MARK", "value": mark},
        {"name": "BEHAVIOUR", "value": behaviour},
        {"name": "DURATION", "value": str(duration)},
        {"name": "FAILER", "value": failer},
        {"name": "POD_UID", **field("metadata.uid")},
        {"name": "NODE", **field("spec.nodeName")},
        {"name": "ATTEMPT", **field(f"metadata.annotations['{A}/restart-attempt']")},
        {"name": "INPLACE", **field(f"metadata.annotations['{A}/in-place-restart-attempt']")},
        {"name": "RJOB", **field(f"metadata.annotations['{A}/replicatedjob-name']")},
        {"name": "JOBI", **field(f"metadata.annotations['{A}/job-index']")},
        {"name": "PODI", **field("metadata.annotations['batch.kubernetes.io/job-completion-index']")},
    ]


def _rjob(name, replicas, pods, mark, behaviour, duration, failer, in_place=False, memory=None,
          depends_on=None):
    container = {
        "name": "main", "image": "busybox", "command": ["sh", "-c", POD_SCRIPT],
        "resources": {"requests": {"cpu": "500m"}},
        "env": _env(mark, behaviour, duration, failer),
        "volumeMounts": [{"name": "marks", "mountPath": mark.rsplit("/", 1)[0]}],
    }
    if memory:
        container["resources"]["limits"] = {"memory": memory}
    job = {
        "name": name, "replicas": replicas,
        "template": {"spec": {
            "parallelism": pods, "completions": pods, "completionMode": "Indexed",
            "backoffLimit": 2147483647 if in_place else 0,
            "template": {"spec": {
                "restartPolicy": "Never", "terminationGracePeriodSeconds": 2,
                "volumes": [{"name": "marks", "hostPath": {"path": mark.rsplit("/", 1)[0]}}],
                "containers": [container],
            }},
        }},
    }
    if depends_on:
        job["dependsOn"] = [{"name": depends_on, "status": "Ready"}]
    return job


# name -> (weight, builder(name, mark, rng) -> (JobSet dict, pods per attempt, phased, ttl))
def _gang(name, mark, rng):
    d = rng.randint(3, 8)
    spec = {
        "failurePolicy": {"maxRestarts": 3},
        "replicatedJobs": [_rjob("leader", 1, 1, mark, "ok", d, "-"),
                           _rjob("workers", 1, 2, mark, "ok", d, "-")],
    }
    # A Job per slice (two nodes each): the leader's and the workers'.
    meta = {"annotations": {f"alpha.{A}/exclusive-topology": "cloud.google.com/gke-nodepool"}}
    return meta, spec, 3, False, False


def _restart(name, mark, rng):
    spec = {"failurePolicy": {"maxRestarts": 2},
            "replicatedJobs": [_rjob("workers", 3, 1, mark, "fail", rng.randint(2, 5), "workers")]}
    return {}, spec, 3, False, False


def _in_place(name, mark, rng):
    spec = {"failurePolicy": {"maxRestarts": 2, "restartStrategy": "InPlaceRestart"},
            "replicatedJobs": [_rjob("workers", 2, 2, mark, "fail", rng.randint(2, 5), "workers",
                                     in_place=True)]}
    return {}, spec, 4, False, False


def _oom(name, mark, rng):
    spec = {"failurePolicy": {"maxRestarts": 1},
            "replicatedJobs": [_rjob("workers", 2, 1, mark, "oom", rng.randint(2, 4), "workers",
                                     memory="32Mi")]}
    return {}, spec, 2, False, False


def _depends(name, mark, rng):
    d = rng.randint(3, 6)
    spec = {"replicatedJobs": [_rjob("leader", 1, 1, mark, "ok", d + 2, "-"),
                               _rjob("workers", 2, 1, mark, "ok", d, "-", depends_on="leader")]}
    return {}, spec, 3, True, False


def _success(name, mark, rng):
    spec = {"successPolicy": {"operator": "Any", "targetReplicatedJobs": ["leader"]},
            "replicatedJobs": [_rjob("leader", 1, 1, mark, "ok", rng.randint(2, 5), "-"),
                               _rjob("workers", 2, 1, mark, "ignore_term", 0, "-")]}
    return {}, spec, 3, False, False


def _ttl(name, mark, rng):
    spec = {"ttlSecondsAfterFinished": 3,
            "replicatedJobs": [_rjob("workers", 2, 1, mark, "doublefork", rng.randint(1, 3), "-")]}
    return {}, spec, 2, False, True


SHAPES = {
    "gang": (3, _gang),
    "restart": (2, _restart),
    "inplace": (2, _in_place),
    "oom": (1, _oom),
    "depends": (1, _depends),
    "success": (1, _success),
    "ttl": (1, _ttl),
}


def jobset(name, shape, mark, rng, suspend=False):
    """(JobSet dict, pods per attempt, phased, ttl) of `shape` named `name`."""
    meta, spec, pods, phased, ttl = SHAPES[shape][1](name, mark, rng)
    if suspend:
        spec["suspend"] = True
    document = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                "metadata": {"name": name, **meta}, "spec": spec}
    return json.loads(json.dumps(document)), pods, phased, ttl


def pick_shape(rng):
    names = sorted(SHAPES)
    return rng.choices(names, weights=[SHAPES[n][0] for n in names])[0]
