#!/usr/bin/python3
"""The soak (issue 44): jobsetd and real agents under a seeded mix of work and faults, every
client call and pod stamp recorded, and tools/soak_check.py's invariants checked at the end.

  tools/soak [--duration 10m] [--seed N] [--agents 6] [--keep] ...
  /usr/bin/python3 tools/soak.py --bin DIR [--python DIR] ...   (DIR: a bazel-bin)

What runs (tools/soak_cluster.py): a secure jobsetd (RocksDB, fsync on, its data dir on a
tmpfs of --disk_mib that a fault fills) on a fixed loopback port, or with --ha three replicas
on a private 3-member etcd; --agents jobset-agents (process runtime, --lease set below the
node-lost timeout), each dialing jobsetd through TCP proxies of its own; --clients
workers creating JobSets of every shape in tools/soak_workload.py (with same-name retries),
getting, listing, suspending, resuming and deleting them; --watchers watching every JobSet.
Faults (tools/soak_faults.py), one at a time every --fault_every (each kind once first, then
at random):
  jobsetd_kill      kill -9 of jobsetd (the leader with --ha), restarted on its port and data
  agent_kill        kill -9 of an agent, restarted 1 s later (its pods live on in their shims)
  agent_kill_long   the same, restarted after the node-lost timeout
  agent_stop        SIGSTOP of an agent for 2-8 s, then SIGCONT
  proxy_blackhole   an agent's connection silently drops everything for 2-8 s
  proxy_delay       an agent's connection delays each chunk by 50-500 ms for 5 s
  proxy_reset       an agent's connection reset (TCP RST)
  disk_full         jobsetd's data filesystem filled for 3 s (jobsetd is restarted if it exits)
  failpoint         jobsetd restarted with a failpoint armed to crash it at its 2nd-5th hit
                    (JOBSET_FAILPOINTS; only where the build has failpoints, see --failpoints)
  etcd_kill         with --ha: kill -9 of an etcd member (by local-etcd), started again 2-6 s later
Then every fault is healed, the work drains (--drain), a full List is taken, everything is
stopped, and the checker runs. It prints the faults by kind, the operations by kind and
outcome, and each invariant's result; the exit status is 1 on any violation, with the seed.
"""
import argparse
import collections
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_e2e as e2e  # noqa: E402
import procs  # noqa: E402
import soak_big_store  # noqa: E402
import soak_check  # noqa: E402
import soak_cluster  # noqa: E402
import soak_faults  # noqa: E402
import soak_workload  # noqa: E402

def say(text):
    e2e.say(text)


class History:
    """history.jsonl: one JSON object a line, written under a lock, flushed at once."""

    def __init__(self, path):
        self._f = open(path, "a", buffering=1)
        self._lock = threading.Lock()

    def write(self, record):
        line = json.dumps(record, sort_keys=True)
        with self._lock:
            self._f.write(line + "\n")

    def close(self):
        self._f.close()


def jobset_state(js):
    status = js.status
    return {"name": js.metadata.name, "uid": js.metadata.uid, "rv": js.metadata.resource_version,
            "restarts": [status.restarts, status.current_in_place_restart_attempt],
            "terminal": status.terminal_state in soak_check.TERMINAL, "suspend": js.spec.suspend,
            "phase": status.terminal_state or ("Suspended" if js.spec.suspend else "Active")}


def spec_hash(js):
    """The spec as acknowledged, less spec.suspend (the soak's own updates change it)."""
    spec = type(js.spec)()
    spec.CopyFrom(js.spec)
    spec.ClearField("suspend")
    return hashlib.sha256(spec.SerializeToString(deterministic=True)).hexdigest()[:16]


def outcome(error):
    """A failed call's outcome: "info" when it may or may not have happened (no answer), else
    "fail" (a definite answer), and the gRPC code's name."""
    code = getattr(error, "code", None)
    name = code.name if code is not None and hasattr(code, "name") else type(error).__name__
    return ("info" if name in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "UNKNOWN", "CANCELLED",
                               "INTERNAL") else "fail"), name


class Workload:
    """--clients threads of seeded client calls and --watchers watch loops, all recorded."""

    def __init__(self, args, cluster, history, jobset_module):
        self.args = args
        self.cluster = cluster
        self.history = history
        self.js = jobset_module
        self.lock = threading.Lock()
        self.known = {}  # name -> {"shape", "suspend", "terminal", "gone", "ttl"}
        self.meta_pods, self.meta_phased = {}, {}
        self.stop = threading.Event()
        self.stop_watch = threading.Event()
        self.final_rv_seen = {}  # watcher -> whether its last round after the final List ended cleanly
        self.threads = []

    def client(self, timeout=10.0):
        return self.js.Client.from_config(os.path.join(self.cluster.data, "admin.conf"), timeout=timeout,
                                          server=self.cluster.server_list())

    def start(self):
        for w in range(self.args.clients):
            t = threading.Thread(target=self._worker, args=(w,), daemon=True)
            t.start()
            self.threads.append(t)
        for w in range(self.args.watchers):
            t = threading.Thread(target=self._watcher, args=(w,), daemon=True)
            t.start()
            self.threads.append(t)

    def _call(self, w, op, name, fn, **extra):
        record = {"op": op, "w": w, "name": name, "t0": time.monotonic(), **extra}
        try:
            result = fn()
            record["res"] = "ok"
        except Exception as e:  # every client error is an outcome to record
            record["res"], record["code"] = outcome(e)
            record["t1"] = time.monotonic()
            self.history.write(record)
            return None, record
        record["t1"] = time.monotonic()
        return result, record

    def _worker(self, w):
        rng = random.Random(f"{self.args.seed}-client-{w}")
        seq = 0
        client = None
        while not self.stop.is_set():
            if client is None:
                try:
                    client = self.client()
                except Exception:  # admin.conf is rewritten while jobsetd restarts
                    time.sleep(0.5)
                    continue
            with self.lock:
                live = [n for n, k in self.known.items() if not k["gone"] and not k["terminal"]]
                names = [n for n, k in self.known.items() if not k["gone"]]
            r = rng.random()
            if r < 0.35 and len(live) < self.args.max_live:
                seq += 1
                self._create(client, w, rng, f"w{w}-{seq:04d}")
            elif r < 0.55 and names:
                self._get(client, w, rng.choice(names))
            elif r < 0.65:
                self._list(client, w)
            elif r < 0.80 and live:
                name = rng.choice(live)
                self._update(client, w, name, "resume" if self.known[name]["suspend"] else "suspend")
            elif r < 0.88 and names:
                done = [n for n in names if self.known[n]["terminal"]]
                self._delete(client, w, rng.choice(done if done and rng.random() < 0.7 else names))
            self.stop.wait(rng.uniform(0.1, 0.5))
        client and client.close()

    def _create(self, client, w, rng, base):
        shape = soak_workload.pick_shape(rng)
        name = f"{base}-{shape}"
        mark = os.path.join(self.cluster.marks, f"{name}.log")
        suspend = rng.random() < 0.15
        document, pods, phased, ttl = soak_workload.jobset(name, shape, mark, rng, suspend=suspend)
        with self.lock:
            self.known[name] = {"shape": shape, "suspend": suspend, "terminal": False, "gone": False, "ttl": ttl}
            self.meta_pods[name], self.meta_phased[name] = pods, phased
        # Retried with the same name and spec until jobsetd answers (at most 60 s).
        end = time.monotonic() + 60
        while True:
            created, record = self._call(w, "create", name, lambda: client.create(document),
                                         shape=shape, ttl=ttl)
            if created is not None:
                record.update(jobset_state(created), spec=spec_hash(created))
                self.history.write(record)
                return
            if record["res"] != "info" or time.monotonic() > end or self.stop.is_set():
                return
            time.sleep(0.3)

    def _get(self, client, w, name):
        got, record = self._call(w, "get", name, lambda: client.get(name))
        if got is not None:
            record.update(jobset_state(got))
            self.history.write(record)
            self._learn([record])

    def _list(self, client, w):
        items, record = self._call(w, "list", "*", lambda: client.list())
        if items is not None:
            record["items"] = [jobset_state(j) for j in items]
            self.history.write(record)
            self._learn(record["items"])

    def _learn(self, states):
        with self.lock:
            for s in states:
                k = self.known.get(s["name"])
                if k is not None:
                    k["terminal"] = k["terminal"] or s["terminal"]

    def _update(self, client, w, name, op):
        got, record = self._call(w, op, name, lambda: getattr(client, op)(name))
        if got is not None:
            record.update(jobset_state(got))
            self.history.write(record)
            with self.lock:
                self.known[name]["suspend"] = op == "suspend"

    def _delete(self, client, w, name):
        got, record = self._call(w, "delete", name, lambda: client.delete(name))
        if got is not None or record.get("code") == "NOT_FOUND":
            with self.lock:
                self.known[name]["gone"] = True
        if got is not None:
            record["uid"] = got.metadata.uid
            self.history.write(record)

    def _watcher(self, w):
        rng = random.Random(f"{self.args.seed}-watch-{w}")
        rv, relist = "", True
        client = None
        last_round_clean = False
        while True:
            final_round = self.stop_watch.is_set()
            if client is None:
                try:
                    client = self.client(timeout=10.0)
                except Exception:
                    time.sleep(0.5)
                    continue
            self.history.write({"op": "watch_open", "w": w, "from": rv, "relist": relist, "t": time.monotonic()})
            relist = False
            try:
                for kind, js in client.watch(resource_version=rv, timeout=rng.uniform(1, 5)):
                    state = jobset_state(js)
                    self.history.write({"op": "watch", "w": w, "type": kind, "t": time.monotonic(), **state})
                    rv = state["rv"]
                last_round_clean = True
            except Exception as e:
                res, code = outcome(e)
                self.history.write({"op": "watch_break", "w": w, "code": code, "t": time.monotonic()})
                last_round_clean = False
                if code == "OUT_OF_RANGE":
                    rv, relist = "", True
                time.sleep(0.2)
            if final_round:
                self.final_rv_seen[str(w)] = last_round_clean
                break
        client.close()


def stuck(cluster, names):
    """What jobsetd says of JobSets that did not finish, into stuck-NAME.txt of the run's
    folder: describe, its pods and events, and the nodes."""
    for name in names:
        with open(os.path.join(cluster.scratch, f"stuck-{name}.txt"), "w") as f:
            for what in (("describe", "jobset", name), ("get", "pods", "-l", f"{soak_workload.A}/jobset-name={name}",
                                                         "-o", "wide"),
                         ("get", "events"), ("get", "nodes")):
                try:
                    r = cluster.ctl(*what, timeout=30, check=False)
                    f.write(f"$ jobsetctl {' '.join(what)}\n{r.stdout}{r.stderr}\n")
                except e2e.Failed as e:
                    f.write(f"$ jobsetctl {' '.join(what)}\n{e}\n")


def drain(cluster, workload, seconds):
    """Resumes what is suspended and waits until every JobSet has finished and every TTL'd one
    is gone, at most `seconds`; returns the final List's states and every pod."""
    client = workload.client(timeout=30.0)
    end = time.monotonic() + seconds
    try:
        while True:
            items = client.list()
            for js in items:
                if js.spec.suspend:
                    try:
                        client.resume(js.metadata.name)
                    except Exception as e:
                        say(f"drain: resume {js.metadata.name}: {e}")
            waiting = [j.metadata.name for j in items if j.status.terminal_state not in soak_check.TERMINAL
                       or workload.known.get(j.metadata.name, {}).get("ttl")]
            if not waiting or time.monotonic() > end:
                if waiting:
                    say(f"drain: {len(waiting)} JobSets still active after {seconds} s: {waiting[:5]}")
                    stuck(cluster, waiting[:10])
                break
            time.sleep(1)
        t = time.monotonic()
        jobsets = [dict(jobset_state(j), spec=spec_hash(j)) for j in client.list()]
        by_name = {j["name"]: j for j in jobsets}
        pods = []
        for p in client.list_pods():
            cs = p.status.container_statuses
            exit_code = None
            if cs and cs[0].state.WhichOneof("state") == "terminated" and cs[0].state.terminated.HasField("exit_code"):
                exit_code = cs[0].state.terminated.exit_code
            js_name = p.metadata.labels.get(f"{soak_workload.A}/jobset-name", "")
            if p.status.phase in ("Pending", "Running") and js_name in by_name:
                by_name[js_name]["active_pods"] = by_name[js_name].get("active_pods", 0) + 1
            pods.append({"name": p.metadata.name, "uid": p.metadata.uid, "phase": p.status.phase,
                         "exit_code": exit_code, "jobset": js_name,
                         "inplace": p.metadata.annotations.get(f"{soak_workload.A}/in-place-restart-attempt", "0")})
        return {"t": t, "jobsets": jobsets, "pods": pods}
    finally:
        client.close()


def leftovers(scratch, keep_pids):
    """Processes whose environment names `scratch` (but `keep_pids`) and mounts under it."""
    found = []
    for pid in procs.strays(scratch, keep_pids):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append(f"pid {pid}: {argv[:120]}")
    mounts = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4]
            if point.startswith(scratch + "/"):
                mounts.append(f"mount {point}")
    return {"processes": found, "mounts": mounts}


def table(title, rows):
    width = max([len(r[0]) for r in rows] + [len(title)])
    lines = [title]
    lines += [f"  {r[0]:<{width}}  {r[1]}" for r in rows]
    return "\n".join(lines)


def report(history_path, faults, run, results):
    ops = collections.Counter()
    exits = collections.Counter()
    with open(history_path) as f:
        for line in f:
            r = json.loads(line)
            if r["op"] in ("create", "get", "list", "suspend", "resume", "delete"):
                ops[(r["op"], r["res"] + (f" {r['code']}" if r.get("code") else ""))] += 1
            elif r["op"] == "watch":
                ops[("watch event", r["type"])] += 1
            elif r["op"] == "watch_break":
                ops[("watch break", r["code"])] += 1
            elif r["op"] == "exit":
                exits[(r["who"].split("-")[0], "expected" if r["expected"] else "UNEXPECTED")] += 1
    print(table("Faults injected", sorted(faults.counts.items()) if faults and faults.counts else [("none", "")]))
    print(table("Operations", [(f"{op} {res}", n) for (op, res), n in sorted(ops.items())]))
    if exits:
        print(table("Process exits the soak did not cause", [(f"{w} {e}", n) for (w, e), n in sorted(exits.items())]))
    print(table("Checked", [(what, n) for what, n in soak_check.coverage(run)]))
    print("Invariants")
    soak_check.print_results(results)


def parse_duration(text):
    units = {"s": 1, "m": 60, "h": 3600}
    try:
        return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError(f"a duration like 60s, 10m or 1h, not {text!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="bazel-bin holding jobsetd, jobset-agent, the shim, jobsetctl")
    ap.add_argument("--python", required=True, help="folder holding the `jobset` package and its proto/ modules")
    ap.add_argument("--duration", type=parse_duration, default=600.0, help="how long work and faults run (10m)")
    ap.add_argument("--seed", type=int, default=None, help="the run's seed (default: from the clock, printed)")
    ap.add_argument("--agents", type=int, default=6)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--watchers", type=int, default=2)
    ap.add_argument("--max_live", type=int, default=8, help="JobSets not yet finished at once, at most")
    ap.add_argument("--fault_every", type=parse_duration, default=6.0, help="mean time between faults")
    ap.add_argument("--faults", default=",".join(soak_faults.Faults.KINDS),
                    help="the fault kinds to inject (comma-separated; default every kind)")
    ap.add_argument("--failpoints", default="", help="comma-separated failpoint names the failpoint fault arms")
    ap.add_argument("--disk_mib", type=int, default=256, help="size of jobsetd's data filesystem")
    ap.add_argument("--drain", type=parse_duration, default=120.0, help="how long to wait for the work to finish")
    ap.add_argument("--jobsetd-flag", dest="jobsetd_flag", action="append", default=[])
    ap.add_argument("--agent-flag", dest="agent_flag", action="append", default=[])
    ap.add_argument("--keep", action="store_true", help="keep the run's folder (history, logs, stamps)")
    ap.add_argument("--ha", action="store_true",
                    help="three jobsetd replicas on a private 3-member etcd (kills hit the leader; etcd_kill)")
    ap.add_argument("--big_store", type=int, default=0,
                    help="instead of the soak: L3, a kill -9 restart of jobsetd holding this many JobSets")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = int(time.time()) % 1000000
    args.failpoints = [f for f in args.failpoints.split(",") if f]
    args.faults = [f for f in args.faults.split(",") if f]
    unknown = set(args.faults) - set(soak_faults.Faults.KINDS)
    if unknown:
        ap.error(f"--faults: unknown kinds {sorted(unknown)}; known: {','.join(soak_faults.Faults.KINDS)}")
    if args.big_store:
        room = args.big_store + args.agents + 1000
        args.jobsetd_flag += [f"--max_jobsets={room}", f"--max_jobsets_per_namespace={room}"]
    if not (1 <= args.agents <= 64 and 1 <= args.clients <= 32 and 0 <= args.watchers <= 32):
        ap.error("--agents 1..64, --clients 1..32, --watchers 0..32")
    sys.path[:0] = args.python.split(":")
    import jobset  # noqa: E402  (the client; its proto modules come with --python)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    scratch = tempfile.mkdtemp(prefix="jobset-soak-")
    history = History(os.path.join(scratch, "history.jsonl"))
    say(f"soak: seed {args.seed}, {args.duration:.0f} s, {args.agents} agents, in {scratch}")
    history.write({"op": "meta", "seed": args.seed, "duration": args.duration, "agents": args.agents})
    cluster = workload = faults = None
    results = None
    big_store_rc = None
    try:
        cluster = soak_cluster.SoakCluster(args, scratch, history)
        cluster.start()
        say(f"jobsetd on {cluster.address}, {args.agents} agents Ready")
        if args.big_store:
            rows, bad = soak_big_store.run(cluster, args.big_store, say)
            print(table(f"L3: kill -9 of jobsetd holding {args.big_store} JobSets", rows))
            for b in bad:
                print(f"FAIL  {b}")
            big_store_rc = 1 if bad else 0
            return big_store_rc
        workload = Workload(args, cluster, history, jobset)
        faults = soak_faults.Faults(args, cluster, history, soak_cluster.NODE_LOST_S)
        for fn in (faults.supervise, faults.sample):
            threading.Thread(target=fn, daemon=True).start()
        workload.start()
        until = time.monotonic() + args.duration
        faults.run(until)
        while time.monotonic() < until:
            time.sleep(0.5)
        say(f"work and faults stop; faults: {dict(faults.counts)}")
        workload.stop.set()
        for t in workload.threads[:args.clients]:
            t.join(timeout=90)
        cluster.heal()  # proxies pass, the disk is drained, etcd's members run
        if not cluster.wait_serving(60):
            raise e2e.Failed("jobsetd does not serve after the faults stopped")
        final = drain(cluster, workload, args.drain)
        workload.stop_watch.set()
        for t in workload.threads[args.clients:]:
            t.join(timeout=30)
        faults.stop.set()
        with open(os.path.join(scratch, "final.json"), "w") as f:
            json.dump(final, f)
        history.write({"op": "meta", "pods": workload.meta_pods, "phased": workload.meta_phased,
                       "watchers_caught_up": workload.final_rv_seen})
    except e2e.Failed as e:
        say(f"aborted: {e}")
    except KeyboardInterrupt:
        say("interrupted")
    finally:
        if faults is not None:
            faults.stop.set()
        if workload is not None:
            workload.stop.set()
            workload.stop_watch.set()
        if cluster is not None:
            say("stopping: JobSets, agents, jobsetd")
            cluster.heal()
            cluster.stop()
            if cluster.disk is not None:
                if args.keep:  # the tmpfs goes with its mount: its files (RocksDB's LOG) are kept
                    subprocess.run(["cp", "-a", cluster.data, cluster.data + ".kept"], check=False)
                cluster.disk.unmount()
            left = leftovers(scratch, set())
            with open(os.path.join(scratch, "leftovers.json"), "w") as f:
                json.dump(left, f)
            procs.kill_strays(scratch, set())
            cluster.close()
        history.close()
        if big_store_rc is not None and not args.keep:
            subprocess.run(["rm", "-rf", scratch], check=False)
    if os.path.exists(os.path.join(scratch, "final.json")):
        run = soak_check.load(scratch)
        results = soak_check.check(run)
        report(os.path.join(scratch, "history.jsonl"), faults, run, results)
    ok = results is not None and not any(bad for _, bad in results)
    print(f"soak: {'PASS' if ok else 'FAIL'}, seed {args.seed} (replay: --seed {args.seed}"
          f" --duration {args.duration:.0f}s --agents {args.agents})")
    if args.keep or not ok:
        say(f"the run's folder is kept: {scratch}")
    else:
        subprocess.run(["rm", "-rf", scratch], check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
