"""L3 of the reliability plan: a kill -9 restart of jobsetd holding a big store. Used by
tools/soak.py's --big_store N.

N suspended JobSets (one pod each; suspended so that the store, not the agents, is what is
big) are applied in files of 1,000 with jobsetctl, plus one running JobSet per agent; then
jobsetd is killed with SIGKILL and restarted on its data. Measured from the restart: until it
answers a List (serving), until it lists every JobSet, and until every agent is Ready again;
and jobsetd_node_lost_total after the restart grace (0 expected: no mass node-lost)."""
import os
import time
import urllib.request

import bench_e2e as e2e


DOC = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
spec:
  suspend: {suspend}
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: busybox
              command: [sh, -c, "exec sleep 600"]
              resources: {{requests: {{cpu: 100m}}}}
---
"""


def node_lost_total(metrics_url):
    try:
        with urllib.request.urlopen(metrics_url, timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("jobsetd_node_lost_total"):
                    return float(line.split()[-1])
    except OSError:
        return None
    return 0.0


def metrics_url(cluster):
    log = os.path.join(cluster.scratch, "jobsetd.log")
    url = None
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("jobsetd metrics on http://"):
                url = line.split()[3]
    return url


def _answers(cluster, *args):
    try:
        return cluster.ctl(*args, timeout=2, check=False).returncode == 0
    except e2e.Failed:
        return False


def run(cluster, count, say):
    """Returns [(measure, value)] and [violation]."""
    t0 = time.monotonic()
    for start in range(0, count, 1000):
        path = os.path.join(cluster.scratch, "big.yaml")
        with open(path, "w") as f:
            for i in range(start, min(count, start + 1000)):
                f.write(DOC.format(name=f"big-{i:06d}", suspend="true"))
        cluster.ctl("apply", "-f", path, timeout=600)
        if start and start % 10000 == 0:
            say(f"big store: {start} JobSets applied")
    with open(os.path.join(cluster.scratch, "running.yaml"), "w") as f:
        for node in cluster.agents:
            f.write(DOC.format(name=f"run-{node}", suspend="false"))
    cluster.ctl("apply", "-f", os.path.join(cluster.scratch, "running.yaml"))
    filled = time.monotonic() - t0
    say(f"big store: {count} JobSets applied in {filled:.0f} s; kill -9 and restart")
    time.sleep(3)  # the running ones start
    cluster.jobsetd.kill()
    cluster.jobsetd.wait()
    t1 = time.monotonic()
    cluster.start_jobsetd()
    serving = listed = ready = None
    deadline = t1 + 120
    while time.monotonic() < deadline and ready is None:
        # A jobsetctl of its own each try, given 2 s: one that started before jobsetd listened
        # would wait out gRPC's reconnect backoff, not jobsetd.
        if serving is None and _answers(cluster, "get", "jobset", "run-node-1", "-o", "name"):
            serving = time.monotonic() - t1
        if serving is not None and listed is None:
            names = cluster.ctl("get", "jobsets", "-o", "name", timeout=120, check=False).stdout.split()
            if len(names) >= count + len(cluster.agents):
                listed = time.monotonic() - t1
        if listed is not None and set(cluster.agents) <= cluster.ready_nodes():
            ready = time.monotonic() - t1
        time.sleep(0.1)
    time.sleep(12)  # past --restart_grace (10 s): a node declared lost now would be counted
    lost = node_lost_total(metrics_url(cluster))
    rows = [("JobSets stored", count + len(cluster.agents)), ("apply of all of them", f"{filled:.1f} s"),
            ("kill -9 -> serving (Get answers)", f"{serving:.2f} s" if serving is not None else "never"),
            ("kill -9 -> List returns every JobSet", f"{listed:.2f} s" if listed is not None else "never"),
            ("kill -9 -> every agent Ready", f"{ready:.2f} s" if ready is not None else "never"),
            ("jobsetd_node_lost_total after the restart grace", lost)]
    bad = []
    if serving is None or serving > 10:
        bad.append(f"serving after {serving} s (target 10 s)")
    if listed is None:
        bad.append("the List never returned every JobSet")
    if ready is None:
        bad.append("not every agent was Ready again within 120 s")
    if lost:
        bad.append(f"{lost:.0f} nodes declared lost after the restart")
    return rows, bad
