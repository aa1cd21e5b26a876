#!/usr/bin/python3
"""End-to-end bench: a secure jobsetd and N jobset-agents as real processes on 127.0.0.1.

  tools/bench e2e [--nodes 64] [--runs N] [--only B1,B3,B5,B6,Q,P,H,S] [--b1-sizes 16,64] [--b3-jobs 1000]
                  [--jobsetd-flag F]... [--agent-flag F]...
  /usr/bin/python3 tools/bench_e2e.py --bin DIR ...      (DIR: a bazel-bin holding the four binaries)

Measures (every pod appends "KIND <date +%s.%N> ATTEMPT INDEX" to the file named by $MARK):
  B1     gang of N one-pod Jobs: `jobsetctl apply -f` started -> the last pod's first line
  B3     1,000 one-pod JobSets in one file: apply started -> every JobSet Completed (status polled);
         "apply" alone: how long `jobsetctl apply -f` of that file took
  B5     gang of 16, maxRestarts 1: pod 0 of attempt 0 exits 1 once all run -> all of attempt 1 running;
         once with restartStrategy Recreate and once with InPlaceRestart (the same pods, in place)
  B6     gang of 4: kill -9 of the agent under pod 1 -> all of attempt 1 running (10 s node-lost timeout)
  Q      B1 of 16 without and with a Kueue LocalQueue, in turns, and the difference (issue 41)
  P      a high-priority gang of 16 (at most --nodes) preempts a low-priority one in a ClusterQueue
         that holds one: the high one's apply -> its pods running; the victims get SIGTERM (grace
         2 s) and exit 1 s later, as a checkpoint would take
  H      gang of 16 with jobsetd.io/progress-timeout 3s: attempt 0 writes 5 steps to
         $JOBSET_PROGRESS_FILE and hangs -> all of attempt 1 running, from the last step written
         (issue 43; the target: timeout + 2 s to detect, and 1 s more to run again)
  S      hot spares: the nodes labelled in slices of min(17, N) (bench.jobsetd.io/slice, through
         jobsetctl label; the rest unlabelled), the last of each slice jobsetd.io/spare=true; a gang
         of one pod per other host of a slice (16 at most), exclusive on that key, restartStrategy
         InPlaceRestart; kill -9 of the host of pod 1 (its agent, its pod's shim and processes) ->
         every pod running in-place attempt 1, on the same slice with its spare (issue 43; the
         target: node_lost_timeout + 1 s; 10 s unless a --jobsetd-flag sets it). The labels go after S.
  RSS    VmHWM of jobsetd and of agent node-1 at the end of the run
Everything started here is stopped when it returns (also on Ctrl-C or an error): JobSets deleted,
then the agents and jobsetd by PID (SIGTERM, SIGKILL after 10 s), then any process left whose
environment names this run's scratch folder (the pods of a killed agent), by PID.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from procs import kill_strays, terminate

NODE_LOST_S = 10
CPU_PER_NODE = 8
ANNOTATION = "jobset.sigs.k8s.io"


class Failed(Exception):
    """One measurement (or the cluster) did not do what it should."""


def say(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def until(what, seconds, check, every=0.05):
    """Calls check() until it returns something true; returns it. Failed after `seconds`."""
    end = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= end:
            raise Failed(f"gave up after {seconds:g} s waiting for {what}")
        time.sleep(every)


def read_marks(path):
    """(kind, time, attempt, index) per well-formed line of a pods' mark file."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 4:
                    try:
                        out.append((parts[0], float(parts[1]), parts[2], parts[3]))
                    except ValueError:
                        pass
    except FileNotFoundError:
        pass
    return out


def marks_of(path, count, kind="run", attempt=None):
    """A check for until(): `count` distinct pods' marks of `kind` (and `attempt`), else None."""
    def check():
        seen = {}
        for k, t, a, i in read_marks(path):
            if k == kind and (attempt is None or a == attempt):
                seen.setdefault((a, i), t)
        return list(seen.values()) if len(seen) >= count else None
    return check


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise Failed(f"/proc/{pid}/status has no VmHWM")


def quote(s):
    return json.dumps(s)  # a JSON string is a valid YAML double-quoted scalar


def jobset_manifest(name, replicas, script, cpu, mark, max_restarts=0, in_place=False, labels=None,
                    grace=None, annotations=None, pods=1):
    """One JobSet, one ReplicatedJob of `replicas` Jobs of `pods` pods running `sh -c script`.

    in_place: restartStrategy InPlaceRestart (upstream's rules: backoffLimit MaxInt32), and
    ATTEMPT is the in-place restart attempt. INDEX: the Job's index, or with pods > 1 the pod's
    completion index. The mark file's folder is a hostPath volume at its own path (a pod sees no
    other host folder), as a user's checkpoints would be."""
    marks = os.path.dirname(mark)
    attempt = "in-place-restart-attempt" if in_place else "restart-attempt"
    index = f"{ANNOTATION}/job-index" if pods == 1 else "batch.kubernetes.io/job-completion-index"
    env = "\n".join([
        f"              - {{name: MARK, value: {quote(mark)}}}",
        "              - name: ATTEMPT",
        f"                valueFrom: {{fieldRef: {{fieldPath: \"metadata.annotations['{ANNOTATION}/{attempt}']\"}}}}",
        "              - name: INDEX",
        f"                valueFrom: {{fieldRef: {{fieldPath: \"metadata.annotations['{index}']\"}}}}",
    ])
    label_text = "".join(f"\n    {k}: {quote(v)}" for k, v in (labels or {}).items())
    meta_labels = f"\n  labels:{label_text}" if labels else ""
    note_text = "".join(f"\n    {k}: {quote(v)}" for k, v in (annotations or {}).items())
    if annotations:
        meta_labels += f"\n  annotations:{note_text}"
    grace_line = f"\n            terminationGracePeriodSeconds: {grace}" if grace is not None else ""
    return f"""apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}{meta_labels}
spec:
  failurePolicy: {{maxRestarts: {max_restarts}{", restartStrategy: InPlaceRestart" if in_place else ""}}}
  replicatedJobs:
  - name: w
    replicas: {replicas}
    template:
      spec:
        parallelism: {pods}
        completions: {pods}
        backoffLimit: {2147483647 if in_place else 0}
        template:
          spec:
            restartPolicy: Never{grace_line}
            volumes:
            - {{name: marks, hostPath: {{path: {quote(marks)}}}}}
            containers:
            - name: main
              image: busybox
              command: [sh, -c, {quote(script)}]
              resources: {{requests: {{cpu: "{cpu}"}}}}
              volumeMounts:
              - {{name: marks, mountPath: {quote(marks)}}}
              env:
{env}
"""


STAMP = 'echo "run $(date +%s.%N) $ATTEMPT $INDEX" >> "$MARK"'
GANG_SCRIPT = STAMP
B3_SCRIPT = "true"
# Pod 0 of attempt 0 fails once every pod of the attempt has stamped (bounded: 10 s).
B5_SCRIPT = STAMP + """
if [ "$ATTEMPT" = 0 ]; then
  if [ "$INDEX" = 0 ]; then
    n=0
    while [ "$(grep -c '^run [0-9.]* 0 ' "$MARK")" -lt @N@ ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
    echo "fail $(date +%s.%N) $ATTEMPT $INDEX" >> "$MARK"
    exit 1
  fi
  exec sleep 300
fi"""
B6_SCRIPT = STAMP + """
if [ "$ATTEMPT" = 0 ]; then exec sleep 300; fi"""
# Attempt 0 writes 5 steps, marks when it wrote the last, and hangs.
H_TIMEOUT_S = 3
H_SCRIPT = STAMP + """
if [ "$ATTEMPT" = 0 ]; then
  i=1
  while [ $i -le 5 ]; do echo "step=$i" >> "$JOBSET_PROGRESS_FILE"; i=$((i+1)); sleep 0.2; done
  echo "last $(date +%s.%N) $ATTEMPT $INDEX" >> "$MARK"
  exec sleep 300
fi"""
# A preemption victim: on SIGTERM it "writes its checkpoint" (marks "term", 1 s) and exits.
VICTIM_SCRIPT = """trap 'echo "term $(date +%s.%N) $ATTEMPT $INDEX" >> "$MARK"; sleep 1; exit 0' TERM
""" + STAMP + """
sleep 300 & wait $!"""
VICTIM_GRACE_S = 2

# S: the topology key of its slices; its pods stamp and wait.
S_SLICE_KEY = "bench.jobsetd.io/slice"
SPARE_LABEL = "jobsetd.io/spare"


S_SCRIPT = STAMP + """
exec sleep 300"""


def node_lost_seconds(jobsetd_flags):
    """jobsetd's --node_lost_timeout in seconds: the last one given as a --jobsetd-flag ("2s",
    "1500ms"), else NODE_LOST_S."""
    seconds = NODE_LOST_S
    for flag in jobsetd_flags:
        if flag.startswith("--node_lost_timeout="):
            value = flag.split("=", 1)[1]
            try:
                seconds = float(value[:-2]) / 1000 if value.endswith("ms") else float(value.rstrip("s"))
            except ValueError:
                raise Failed(f"--node_lost_timeout: give seconds or milliseconds (10s, 1500ms), got {value!r}")
    return seconds


def s_slices(nodes):
    """S's slices: lists of node names, min(17, nodes) each, the last one the spare."""
    k = min(17, nodes)
    return [[f"node-{j * k + i}" for i in range(1, k + 1)] for j in range(nodes // k)]

# Kueue's objects for Q and P (issue 41): one flavor; ClusterQueue "bench" with quota for every
# node (Q), ClusterQueue "preempt" with quota for P's one-node pods and preemption within it;
# a LocalQueue for each in namespace default; priority classes low and high.
def kueue_setup(nodes, preempt_pods):
    def cq(name, cpu):
        return f"""apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: {cpu}}}]}}]
"""
    docs = ["apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: default}\n",
            cq("bench", nodes * CPU_PER_NODE), cq("preempt", preempt_pods * CPU_PER_NODE)]
    for q in ("bench", "preempt"):
        docs.append(f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                    f"metadata: {{name: {q}, namespace: default}}\nspec: {{clusterQueue: {q}}}\n")
    for pc, value in (("low", 0), ("high", 1000)):
        docs.append(f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
                    f"metadata: {{name: {pc}}}\nvalue: {value}\n")
    return "---\n".join(docs)


def queued(queue, priority_class=None):
    labels = {"kueue.x-k8s.io/queue-name": queue}
    if priority_class:
        labels["kueue.x-k8s.io/priority-class"] = priority_class
    return labels


STAGES = ("created_to_bound", "bound_to_sent", "sent_to_received", "received_to_started",
          "started_to_reported", "reported_to_committed")


class Cluster:
    """jobsetd (TLS, tokens, fsync on) and `nodes` agents, all children of this process."""

    def __init__(self, bin_dir, scratch, nodes, jobsetd_flags=(), agent_flags=()):
        self.bin = {
            "jobsetd": os.path.join(bin_dir, "scheduler/jobsetd"),
            "agent": os.path.join(bin_dir, "agent/jobset-agent"),
            "shim": os.path.join(bin_dir, "agent/runtime/jobset-pod-shim"),
            "ctl": os.path.join(bin_dir, "cli/jobsetctl"),
        }
        missing = [p for p in self.bin.values() if not os.access(p, os.X_OK)]
        if missing:
            raise Failed(f"not built: {', '.join(missing)}")
        self.scratch = scratch
        # The pods' mark files (a hostPath volume), written by the agents' default pod user.
        self.marks = os.path.join(scratch, "marks")
        os.makedirs(self.marks, exist_ok=True)
        os.chmod(self.marks, 0o777)
        self.data = os.path.join(scratch, "jobsetd")
        self.nodes = nodes
        self.jobsetd_flags = list(jobsetd_flags)
        self.agent_flags = list(agent_flags)
        self.jobsetd = None
        self.agents = {}  # node name -> Popen
        self.address = None
        self.env = dict(os.environ, JOBSET_BENCH_RUN=scratch)

    def _spawn(self, argv, log):
        with open(os.path.join(self.scratch, log), "ab") as out:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    env=self.env, start_new_session=True)

    def start(self):
        self.jobsetd = self._spawn([self.bin["jobsetd"], "--listen=127.0.0.1:0", f"--data_dir={self.data}",
                                    "--metrics_listen=127.0.0.1:0", f"--node_lost_timeout={NODE_LOST_S}s",
                                    f"--allowed_host_paths={self.marks}", *self.jobsetd_flags],
                                   "jobsetd.log")
        log = os.path.join(self.scratch, "jobsetd.log")

        def said(prefix):  # the 4th word of jobsetd's line starting with `prefix`
            self.alive()
            with open(log, errors="replace") as f:
                for line in f:
                    if line.startswith(prefix):
                        return line.split()[3]
            return None
        self.address = until("jobsetd to serve", 30, lambda: said("jobsetd serving on "))
        self.metrics_url = until("jobsetd's metrics address", 10, lambda: said("jobsetd metrics on http://"))
        until("jobsetd's admin.conf and join-token", 10,
              lambda: all(os.path.exists(os.path.join(self.data, f)) for f in ("admin.conf", "join-token")))
        for i in range(1, self.nodes + 1):
            self.start_agent(f"node-{i}")
        self.wait_ready(30 + self.nodes)

    def start_agent(self, node):
        i = int(node.split("-")[1])
        host = i + 1
        self.agents[node] = self._spawn([
            self.bin["agent"], f"--scheduler={self.address}", f"--node_name={node}",
            f"--address=127.0.{host // 256}.{host % 256}", f"--capacity=cpu={CPU_PER_NODE},memory=8Gi",
            f"--labels=cloud.google.com/gke-nodepool=slice-{(i - 1) // 4}",
            f"--work_dir={os.path.join(self.scratch, node)}", f"--shim={self.bin['shim']}",
            f"--join_token_file={os.path.join(self.data, 'join-token')}", *self.agent_flags], f"{node}.log")

    def kill_host(self, node):
        """kill -9 of `node`'s host: its agent, then each of its pods' shims (a session of its own,
        it outlives the agent; the pid in shim.pid if that process started when the file says) and
        every process left in the pods' cgroups. Failed if one survives."""
        self.agents[node].kill()
        self.agents[node].wait(timeout=10)
        pods = os.path.join(self.scratch, node, "pods")
        for uid in os.listdir(pods) if os.path.isdir(pods) else []:
            d = os.path.join(pods, uid)
            try:
                with open(os.path.join(d, "shim.pid")) as f:
                    pid, started = f.read().split()[:2]
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[19] == started:
                        os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError, IndexError):
                pass
            try:
                with open(os.path.join(d, "cgroups")) as f:
                    cgroups = [line.strip() for line in f if line.strip()]
            except OSError:
                continue
            for _ in range(200):
                pids = set()
                for cg in cgroups:
                    for root, _dirs, files in os.walk(cg):
                        if "cgroup.procs" in files:
                            try:
                                with open(os.path.join(root, "cgroup.procs")) as f:
                                    pids.update(int(p) for p in f.read().split())
                            except (OSError, ValueError):
                                pass
                if not pids:
                    break
                for p in pids:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.01)
            else:
                raise Failed(f"processes of pod {uid} on {node} survive SIGKILL")

    def alive(self):
        if self.jobsetd.poll() is not None:
            raise Failed(f"jobsetd exited with {self.jobsetd.returncode}; see {self.scratch}/jobsetd.log")
        return True

    def stages(self):
        """stage -> (count, sum in seconds) of jobsetd_pod_startup_stage_seconds, scraped now."""
        with urllib.request.urlopen(self.metrics_url, timeout=30) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            for part, i in (("_count{", 0), ("_sum{", 1)):
                head = f"jobsetd_pod_startup_stage_seconds{part}"
                if line.startswith(head):
                    stage = line[len(head):].split('"')[1]
                    out.setdefault(stage, [0.0, 0.0])[i] = float(line.split()[-1])
        return out

    def ctl(self, *args, timeout=120, check=True):
        argv = [self.bin["ctl"], f"--config={os.path.join(self.data, 'admin.conf')}", *args]
        try:
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=timeout, env=self.env)
        except subprocess.TimeoutExpired:
            raise Failed(f"jobsetctl {' '.join(args[:3])} did not return within {timeout} s")
        if check and r.returncode != 0:
            raise Failed(f"jobsetctl {' '.join(args[:3])}: exit {r.returncode}: {r.stderr.strip()[:400]}")
        return r

    def items(self, *what, timeout=120):
        out = self.ctl("get", *what, "-o", "json", timeout=timeout).stdout
        try:
            return json.loads(out).get("items") or []
        except (ValueError, AttributeError):
            raise Failed(f"jobsetctl get {' '.join(what)} -o json printed no list: {out[:200]!r}")

    def ready_nodes(self):
        ready = set()
        for node in self.items("nodes"):
            for c in (node.get("status") or {}).get("conditions") or []:
                if c.get("type") == "Ready" and c.get("status") == "True":
                    ready.add(node["metadata"]["name"])
        return ready

    def wait_ready(self, seconds):
        until(f"{len(self.agents)} agents Ready", seconds,
              lambda: self.alive() and set(self.agents) <= self.ready_nodes(), every=0.3)

    def apply(self, name, text, timeout=300):
        path = os.path.join(self.scratch, f"{name}.yaml")
        with open(path, "w") as f:
            f.write(text)
        t0 = time.time()
        self.ctl("apply", "-f", path, timeout=timeout)
        return t0, time.time() - t0, path

    def idle(self):
        """Deletes every JobSet and waits until no agent holds a pod; restarts killed agents."""
        for name in self.ctl("get", "jobsets", "-o", "name", check=False).stdout.split():
            r = self.ctl("delete", "jobset", name.split("/")[-1], check=False)
            if r.returncode != 0:
                say(f"idle: delete {name}: exit {r.returncode}: {r.stderr.strip()[:300]}")
        dead = [n for n, p in self.agents.items() if p.poll() is not None]
        if dead:
            kill_strays(os.path.join(self.scratch, "marks"),
                        {p.pid for p in self.agents.values()} | {self.jobsetd.pid})
            for node in dead:
                self.start_agent(node)
            self.wait_ready(60)
        until("the agents to stop every pod", 60, lambda: not any(
            os.listdir(d) for d in self.pod_dirs()), every=0.1)

    def pod_dirs(self):
        for node in self.agents:
            d = os.path.join(self.scratch, node, "pods")
            if os.path.isdir(d):
                yield d

    def stop(self):
        self.stop_agents()
        terminate([self.jobsetd])
        kill_strays(self.scratch, set())

    def stop_agents(self):
        """Deletes every JobSet, waits (bounded) for the pods to go, and stops the agents."""
        if self.jobsetd and self.jobsetd.poll() is None and self.address:
            try:
                # One call for all of them: a soak's big store holds 100,000.
                self.ctl("delete", "jobsets", "--all", "-A", timeout=300, check=False)
                end = time.monotonic() + 20
                while time.monotonic() < end and any(os.listdir(d) for d in self.pod_dirs()):
                    time.sleep(0.1)
            except (Failed, OSError) as e:
                say(f"stopping: {e}")
        terminate(list(self.agents.values()))


class Bench:
    def __init__(self, cluster, args):
        self.c = cluster
        self.args = args
        self.results = {}  # measure -> [seconds]
        self.stages = {}  # measure label -> stage -> (pods, mean seconds)
        self.failures = {}  # measure -> [message]
    def mark(self, name):
        return os.path.join(self.c.marks, name)

    def record(self, values):
        for key, v in values.items():
            self.results.setdefault(key, []).append(v)

    def b1(self, n, run):
        name = f"b1-n{n}-r{run}"
        t0, _, _ = self.c.apply(name, jobset_manifest(name, n, GANG_SCRIPT, CPU_PER_NODE, self.mark(name)))
        stamps = until(f"{n} pods of {name} running", 120, marks_of(self.mark(name), n))
        return {f"B1 gang N={n}, apply -> all running": max(stamps) - t0}

    def q(self, n, run):
        """B1 of N without and with a LocalQueue (Kueue's admission first), in turns."""
        out = {}
        for kind in (("unqueued", "queued") if run % 2 == 0 else ("queued", "unqueued")):
            name = f"q-{kind}-n{n}-r{run}"
            labels = queued("bench") if kind == "queued" else None
            t0, _, _ = self.c.apply(name, jobset_manifest(name, n, GANG_SCRIPT, CPU_PER_NODE, self.mark(name),
                                                          labels=labels))
            stamps = until(f"{n} pods of {name} running", 120, marks_of(self.mark(name), n))
            out[f"Q B1 gang N={n} {kind}, apply -> all running"] = max(stamps) - t0
            self.c.idle()
        out[f"Q queued - unqueued, N={n}"] = (out[f"Q B1 gang N={n} queued, apply -> all running"] -
                                               out[f"Q B1 gang N={n} unqueued, apply -> all running"])
        return out

    def p(self, n, run):
        """A high-priority gang of N preempts a running low-priority one of N in a ClusterQueue that
        holds one of them: the high one's apply -> its pods all running, against the victim's
        grace period + 1 s (the victims write a "checkpoint" for 1 s on SIGTERM)."""
        low, high = f"p-low-r{run}", f"p-high-r{run}"
        self.c.apply(low, jobset_manifest(low, n, VICTIM_SCRIPT, CPU_PER_NODE, self.mark(low),
                                          labels=queued("preempt", "low"), grace=VICTIM_GRACE_S))
        until(f"{n} pods of {low} running", 120, marks_of(self.mark(low), n))
        t0, _, _ = self.c.apply(high, jobset_manifest(high, n, GANG_SCRIPT, CPU_PER_NODE, self.mark(high),
                                                      labels=queued("preempt", "high")))
        stamps = until(f"{n} pods of {high} running", 120, marks_of(self.mark(high), n))
        terms = until(f"{n} victims' checkpoints", 10, marks_of(self.mark(low), n, "term"))
        return {f"P preemption N={n} (victim grace {VICTIM_GRACE_S} s), preemptor apply -> all running":
                max(stamps) - t0,
                f"P preemptor apply -> last victim SIGTERM, N={n}": max(terms) - t0}

    def b3(self, jobs, run):
        names = [f"b3-r{run}-{i:04d}" for i in range(jobs)]
        mark = self.mark(f"b3-r{run}")
        text = "---\n".join(jobset_manifest(nm, 1, B3_SCRIPT, 1, mark) for nm in names)
        t0, took, path = self.c.apply(f"b3-r{run}", text, timeout=600)
        wanted = set(names)

        def all_finished():
            self.c.alive()
            done = set()
            for js in self.c.items("jobsets", timeout=120):
                for cond in (js.get("status") or {}).get("conditions") or []:
                    if cond.get("type") in ("Completed", "Failed") and cond.get("status") == "True":
                        done.add(js["metadata"]["name"])
            return wanted <= done
        until(f"{jobs} JobSets to finish", 600, all_finished, every=0.2)
        end = time.time()
        self.c.ctl("delete", "-f", path, timeout=600, check=False)
        return {f"B3 {jobs} one-pod JobSets, apply -> all finished": end - t0,
                f"apply -f of {jobs} documents": took}

    def b5(self, n, run, in_place=False):
        name = f"b5{'i' if in_place else ''}-n{n}-r{run}"
        mark = self.mark(name)
        self.c.apply(name, jobset_manifest(name, n, B5_SCRIPT.replace("@N@", str(n)), CPU_PER_NODE, mark, 1,
                                           in_place))
        failed = until("pod 0 to fail", 60, marks_of(mark, 1, "fail"))
        stamps = until(f"{n} pods of attempt 1", 120, marks_of(mark, n, "run", "1"))
        how = "InPlaceRestart" if in_place else "Recreate"
        return {f"B5 restart-all N={n} ({how}), failing exit -> next attempt all running":
                max(stamps) - min(failed)}

    def b6(self, n, run):
        name = f"b6-n{n}-r{run}"
        mark = self.mark(name)
        self.c.apply(name, jobset_manifest(name, n, B6_SCRIPT, CPU_PER_NODE, mark, 3))
        until(f"{n} pods of attempt 0", 60, marks_of(mark, n, "run", "0"))
        victim = None
        for pod in self.c.items("pods", "--jobset", name):
            notes = (pod.get("metadata") or {}).get("annotations") or {}
            if notes.get(f"{ANNOTATION}/job-index") == "1" and notes.get(f"{ANNOTATION}/restart-attempt") == "0":
                victim = (pod.get("spec") or {}).get("nodeName")
        if victim not in self.c.agents:
            raise Failed(f"no node found for pod 1 of {name} (got {victim!r})")
        t_kill = time.time()
        self.c.agents[victim].kill()
        self.c.agents[victim].wait(timeout=10)
        stamps = until(f"{n} pods of attempt 1 after killing {victim}", 120, marks_of(mark, n, "run", "1"),
                       every=0.1)
        return {f"B6 kill -9 of an agent, {n}-pod gang -> running elsewhere": max(stamps) - t_kill}

    def h(self, n, run):
        name = f"h-n{n}-r{run}"
        mark = self.mark(name)
        self.c.apply(name, jobset_manifest(name, n, H_SCRIPT, CPU_PER_NODE, mark, 3,
                                           annotations={"jobsetd.io/progress-timeout": f"{H_TIMEOUT_S}s"}))
        last = until(f"{n} pods' last step", 60, marks_of(mark, n, "last", "0"))
        stamps = until(f"{n} pods of attempt 1", 60, marks_of(mark, n, "run", "1"), every=0.1)
        took = max(stamps) - max(last)
        return {f"H hang of a {n}-pod gang: last step -> all of attempt 1 running": took,
                f"H the same less the {H_TIMEOUT_S} s timeout": took - H_TIMEOUT_S}

    def s(self, slices, run):
        """Hot spares: kill -9 of the host of pod 1 of an exclusive InPlaceRestart gang -> every pod
        running in-place attempt 1 on the same slice, the slice's spare in the lost host's place."""
        for nodes in slices:
            for node in nodes:
                self.c.ctl("label", "node", node, f"{S_SLICE_KEY}={nodes[0]}", "--overwrite")
            self.c.ctl("label", "node", nodes[-1], f"{SPARE_LABEL}=true", "--overwrite")
        n = len(slices[0]) - 1
        name = f"s-n{n}-r{run}"
        mark = self.mark(name)
        self.c.apply(name, jobset_manifest(name, 1, S_SCRIPT, CPU_PER_NODE, mark, 3, True, grace=2, pods=n,
                                           annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology":
                                                        S_SLICE_KEY}))
        until(f"{n} pods of attempt 0", 60, marks_of(mark, n, "run", "0"))

        def nodes_of(attempt):
            out = {}
            for pod in self.c.items("pods", "--jobset", name):
                notes = (pod.get("metadata") or {}).get("annotations") or {}
                if notes.get(f"{ANNOTATION}/in-place-restart-attempt") == attempt:
                    out[notes.get("batch.kubernetes.io/job-completion-index")] = (
                        (pod.get("spec") or {}).get("nodeName"), pod["metadata"]["uid"])
            return out
        before = nodes_of("0")
        victim = (before.get("1") or (None,))[0]
        if victim not in self.c.agents:
            raise Failed(f"no node found for pod 1 of {name} (got {victim!r})")
        slice_nodes = next(s for s in slices if victim in s)
        t_kill = time.time()
        self.c.kill_host(victim)
        try:
            stamps = until(f"{n} pods of in-place attempt 1 after killing {victim}", 120,
                           marks_of(mark, n, "run", "1"), every=0.05)
        except Failed:
            for what in (("describe", "jobset", name), ("get", "pods", "--jobset", name, "-o", "wide")):
                say(f"jobsetctl {' '.join(what)}:\n{self.c.ctl(*what, check=False).stdout[-4000:]}")
            raise
        took = max(stamps) - t_kill
        after = nodes_of("1")
        where = sorted(node for node, _ in after.values())
        if (len(after) != n or victim in where or slice_nodes[-1] not in where
                or not set(where) <= set(slice_nodes)):
            raise Failed(f"{name} runs on {where}, not on slice {slice_nodes[0]}.. with its spare")
        moved = [i for i, (node, uid) in after.items() if before.get(i) != (node, uid)]
        if moved != ["1"]:
            raise Failed(f"{name}: pods {moved} were not restarted in place (only pod 1 should move)")
        lost = node_lost_seconds(self.c.jobsetd_flags)
        return {f"S kill -9 of a host under a {n}-pod exclusive gang, spare in its slice -> all running "
                f"again in place (node_lost_timeout {lost:g} s)": took,
                f"S the same less node_lost_timeout (target: <= 1 s)": took - lost}

    def measure(self, label, runs, fn):
        before = self.c.stages()
        for run in range(runs):
            try:
                got = fn(run)
                self.record(got)
                say(f"{label} run {run + 1}/{runs}: " + ", ".join(f"{k}: {v:.3f} s" for k, v in got.items()))
            except Failed as e:
                self.failures.setdefault(label, []).append(str(e))
                say(f"{label} run {run + 1}/{runs}: FAILED: {e}")
            self.c.idle()
        after = self.c.stages()
        self.stages[label] = {}
        for stage in STAGES:
            n = after.get(stage, (0, 0))[0] - before.get(stage, (0, 0))[0]
            total = after.get(stage, (0, 0))[1] - before.get(stage, (0, 0))[1]
            self.stages[label][stage] = (int(n), total / n if n else None)

    def table(self, rss):
        rows = ["| measure | median | min | max | runs |", "|---|---|---|---|---|"]
        for key, values in self.results.items():
            rows.append(f"| {key} | {statistics.median(values):.3f} s | {min(values):.3f} s | "
                        f"{max(values):.3f} s | {len(values)} |")
            if key.startswith("B3 "):
                jobs = int(key.split()[1])
                rows.append(f"| B3 throughput | {jobs / statistics.median(values):.0f} JobSets/s | | | |")
        for key, rss_mib in rss.items():
            rows.append(f"| {key} | {rss_mib:.1f} MiB | | | |")
        for key, messages in self.failures.items():
            rows.append(f"| {key} | FAILED {len(messages)}: {messages[0][:100]} | | | |")
        return "\n".join(rows)

    def stage_table(self):
        """Each measure's mean time per pod in each startup stage (jobsetd's histograms)."""
        rows = ["| measure | pods | " + " | ".join(STAGES) + " |", "|---|---|" + "---|" * len(STAGES)]
        for label, stages in self.stages.items():
            pods = max(n for n, _ in stages.values())
            cells = [f"{mean * 1000:.1f} ms" if mean is not None else "-" for _, mean in stages.values()]
            rows.append(f"| {label} | {pods} | " + " | ".join(cells) + " |")
        return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="bazel-bin holding jobsetd, jobset-agent, the shim, jobsetctl")
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3, help="runs of every measure (default 3)")
    ap.add_argument("--only", default="B1,B3,B5,B6",
                    help="B1,B3,B5,B6, Q,P (Kueue's queues), H (hangs) and S (hot spares)")
    ap.add_argument("--b1-sizes", default="16,64", help="gang sizes; those above --nodes are left out")
    ap.add_argument("--b3-jobs", type=int, default=1000)
    ap.add_argument("--jobsetd-flag", action="append", default=[], help="one more jobsetd flag (repeatable)")
    ap.add_argument("--agent-flag", action="append", default=[], help="one more jobset-agent flag (repeatable)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (every process's log)")
    args = ap.parse_args()
    only = {w.strip() for w in args.only.split(",") if w.strip()}
    unknown = only - {"B1", "B3", "B5", "B6", "Q", "P", "H", "S"}
    if unknown or not only:
        ap.error(f"--only takes B1,B3,B5,B6,Q,P,H,S; got {args.only!r}")
    if args.nodes < 1 or args.nodes > 60000 or args.runs < 1 or args.runs > 100 or not 1 <= args.b3_jobs <= 10000:
        ap.error("--nodes 1..60000, --runs 1..100, --b3-jobs 1..10000")
    try:
        sizes = [int(s) for s in args.b1_sizes.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--b1-sizes takes numbers, got {args.b1_sizes!r}")
    sizes = [s for s in sizes if 1 <= s <= args.nodes] or [args.nodes]

    # SIGTERM and Ctrl-C unwind through the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    scratch = tempfile.mkdtemp(prefix="jobset-bench-e2e-")
    cluster = None
    ok = False
    try:
        cluster = Cluster(args.bin, scratch, args.nodes, args.jobsetd_flag, args.agent_flag)
        say(f"starting jobsetd and {args.nodes} agents in {scratch}")
        cluster.start()
        say(f"jobsetd on {cluster.address}, {args.nodes} agents Ready")
        bench = Bench(cluster, args)
        if "B1" in only:
            for n in sizes:
                bench.measure(f"B1 N={n}", args.runs, lambda r: bench.b1(n, r))
        if "B3" in only:
            bench.measure("B3", args.runs, lambda r: bench.b3(args.b3_jobs, r))
        if "B5" in only:
            n5 = min(16, args.nodes)
            bench.measure(f"B5 N={n5}", args.runs, lambda r: bench.b5(n5, r))
            bench.measure(f"B5 N={n5} in place", args.runs, lambda r: bench.b5(n5, r, in_place=True))
        nq = min(16, args.nodes)
        if only & {"Q", "P"}:
            cluster.apply("kueue-setup", kueue_setup(args.nodes, nq))
        if "Q" in only:
            bench.measure(f"Q N={nq}", args.runs, lambda r: bench.q(nq, r))
        if "P" in only:
            bench.measure(f"P N={nq}", args.runs, lambda r: bench.p(nq, r))
        if "H" in only:
            nh = min(16, args.nodes)
            bench.measure(f"H N={nh}", args.runs, lambda r: bench.h(nh, r))
        if "S" in only:
            if args.nodes >= 3:
                slices = s_slices(args.nodes)
                bench.measure(f"S N={len(slices[0]) - 1}", args.runs, lambda r: bench.s(slices, r))
                for nodes in slices:
                    for node in nodes:
                        cluster.ctl("label", "node", node, f"{S_SLICE_KEY}-", f"{SPARE_LABEL}-", check=False)
            else:
                say("S left out: it needs --nodes 3 or more (two hosts and a spare)")
        if "B6" in only:
            if args.nodes >= 5:
                bench.measure("B6 N=4", args.runs, lambda r: bench.b6(4, r))
            else:
                say("B6 left out: it needs --nodes 5 or more (a spare node for the killed one's pod)")
        rss = {"jobsetd peak RSS (VmHWM)": peak_rss_mib(cluster.jobsetd.pid),
               "agent node-1 peak RSS (VmHWM)": peak_rss_mib(cluster.agents["node-1"].pid)}
        load = os.getloadavg()
        print(f"\ntools/bench e2e: {args.nodes} nodes, {args.runs} run(s) each, {os.cpu_count()} CPUs, "
              f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end\n")
        print(bench.table(rss))
        print("\nPod startup stages, mean per pod (jobsetd_pod_startup_stage_seconds, docs/metrics.md):\n")
        print(bench.stage_table())
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"results": bench.results, "failures": bench.failures, "rss_mib": rss,
                           "stages": bench.stages}, f, indent=1)
        ok = not bench.failures and bool(bench.results)
    except Failed as e:
        say(f"aborted: {e}")
    except KeyboardInterrupt:
        say("interrupted")
    finally:
        if cluster is not None:
            say("stopping: JobSets, agents, jobsetd")
            cluster.stop()
        if args.keep:
            say(f"scratch kept: {scratch}")
        else:
            subprocess.run(["rm", "-rf", scratch], check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
