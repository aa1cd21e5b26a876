#!/usr/bin/python3
"""Failover of jobsetd on etcd, measured end to end (tools/bench failover).

Starts a private three-member etcd with TLS (local-etcd), three jobsetd
replicas on it (--store=etcd, fixed loopback ports so a restarted replica
comes back where the agents expect it) and agents given every replica, all
as real processes on 127.0.0.1. Then, --runs times: kill -9 of the replica
that leads, and it measures

  serving:  the kill -> another replica prints "jobsetd serving on"
  agents:   the kill -> every agent logged "connected to jobsetd at" the
            new leader

and restarts the killed replica as a follower before the next run. Prints
median, min and max of each, and the target (lease + 2 s). Only the pids it
started are signalled; everything is stopped before it exits.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, poll=0.005):
    """Polls until `predicate` answers something other than None or False;
    that answer (0 counts), else its last one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value is not None and value is not False:
            return value
        time.sleep(poll)
    return predicate()


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class Bench:
    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="jobsetd-failover.")
        self.procs = []  # Every Popen started, for cleanup.
        self.replicas = []  # {addr, dir, proc, out, starts}
        self.agents = []  # {name, proc, err}

    def start(self, argv, out, err):
        proc = subprocess.Popen(argv, stdout=open(out, "w"),
                                stderr=open(err, "w"),
                                stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def binary(self, path):
        return os.path.join(self.args.bin, path)

    def start_etcd(self):
        d = os.path.join(self.dir, "etcd")
        self.etcd = self.start([self.binary("store/etcd/local-etcd"),
                                f"--dir={d}", "--members=3"],
                               os.path.join(self.dir, "etcd.out"),
                               os.path.join(self.dir, "etcd.err"))
        env_file = os.path.join(d, "env")
        if not wait_for(lambda: os.path.exists(env_file), 60, 0.1):
            raise RuntimeError("etcd did not start: " +
                               read(os.path.join(self.dir, "etcd.err")))
        self.env = dict(line.split("=", 1)
                        for line in read(env_file).splitlines() if "=" in line)

    def start_replica(self, i):
        r = self.replicas[i]
        r["starts"] += 1
        r["out"] = os.path.join(self.dir, f"replica-{i + 1}.{r['starts']}.out")
        e = self.env
        r["proc"] = self.start(
            [self.binary("scheduler/jobsetd"), f"--listen={r['addr']}",
             f"--data_dir={r['dir']}", "--store=etcd",
             f"--cluster_secret_file={self.secret_file}",
             f"--etcd_endpoints={e['ETCD_ENDPOINTS']}",
             f"--etcd_cafile={e['ETCD_CAFILE']}",
             f"--etcd_certfile={e['ETCD_CERTFILE']}",
             f"--etcd_keyfile={e['ETCD_KEYFILE']}",
             f"--leader_lease={self.args.lease}",
             "--node_lost_timeout=30s", "--restart_grace=30s"],
            r["out"], r["out"] + ".err")

    def serving(self, i):
        r = self.replicas[i]
        return r["proc"].poll() is None and \
            "\njobsetd serving on " in "\n" + read(r["out"])

    def following(self, i):
        return "\njobsetd follower on " in "\n" + read(self.replicas[i]["out"])

    def start_cluster(self):
        self.start_etcd()
        # One secret for every replica: the CA lives in etcd, sealed with it.
        self.secret_file = os.path.join(self.dir, "cluster-secret")
        fd = os.open(self.secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(32).hex().encode())
        os.close(fd)
        for i in range(3):
            self.replicas.append({
                "addr": f"127.0.0.1:{free_port()}",
                "dir": os.path.join(self.dir, f"replica-{i + 1}"),
                "proc": None, "out": "", "starts": 0})
        self.start_replica(0)
        if not wait_for(lambda: self.serving(0), 30, 0.05):
            raise RuntimeError("replica-1 did not serve: " +
                               read(self.replicas[0]["out"] + ".err")[-2000:])
        for i in (1, 2):
            self.start_replica(i)
            if not wait_for(lambda: self.following(i), 30, 0.05):
                raise RuntimeError(f"replica-{i + 1} did not follow")
        scheduler = ",".join(r["addr"] for r in self.replicas)
        token = os.path.join(self.replicas[0]["dir"], "join-token")
        for n in range(self.args.agents):
            name = f"node-{n + 1}"
            err = os.path.join(self.dir, f"{name}.err")
            proc = self.start(
                [self.binary("agent/jobset-agent"), f"--scheduler={scheduler}",
                 f"--node_name={name}", f"--address=127.0.0.{n + 2}",
                 f"--work_dir={os.path.join(self.dir, name)}",
                 f"--join_token_file={token}",
                 f"--shim={self.binary('agent/runtime/jobset-pod-shim')}",
                 "--capacity=cpu=1,memory=1Gi"],
                os.path.join(self.dir, f"{name}.out"), err)
            self.agents.append({"name": name, "proc": proc, "err": err})
        for a in self.agents:
            if not wait_for(lambda: "connected to jobsetd at" in read(a["err"]),
                            30, 0.05):
                raise RuntimeError(f"{a['name']} did not connect: " +
                                   read(a["err"])[-2000:])

    def leader(self):
        for i in range(3):
            if self.serving(i):
                return i
        return None

    def one_failover(self):
        old = self.leader()
        if old is None:
            raise RuntimeError("no replica leads")
        before = [read(a["err"]).count("connected to jobsetd at")
                  for a in self.agents]
        killed = time.monotonic()
        self.replicas[old]["proc"].send_signal(signal.SIGKILL)
        self.replicas[old]["proc"].wait()
        new = wait_for(lambda: next((i for i in range(3)
                                     if i != old and self.serving(i)), None),
                       self.lease_s + 30)
        if new is None:
            raise RuntimeError("no replica took over")
        serving = time.monotonic() - killed
        address = self.replicas[new]["addr"]

        def reconnected():
            # Every agent has connected again since the kill, last to the
            # new leader.
            for a, b in zip(self.agents, before):
                lines = [line for line in read(a["err"]).splitlines()
                         if "connected to jobsetd at" in line]
                if len(lines) <= b or f"at {address} " not in lines[-1]:
                    return False
            return True
        if not wait_for(reconnected, 30):
            raise RuntimeError("the agents did not reconnect")
        agents = time.monotonic() - killed
        # The killed replica comes back, on its port, as a follower.
        self.start_replica(old)
        if not wait_for(lambda: self.following(old), 30, 0.05):
            raise RuntimeError("the killed replica did not come back")
        return serving, agents

    def stop(self):
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if not self.args.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def parse_duration(text):
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    if text.endswith("s"):
        return float(text[:-1])
    raise ValueError(f"--lease={text}: want e.g. 2s or 500ms")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True,
                   help="a bazel-bin with jobsetd, jobset-agent, the shim "
                   "and local-etcd")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--lease", default="2s", help="jobsetd --leader_lease")
    p.add_argument("--agents", type=int, default=4)
    p.add_argument("--json", default="", help="write the figures here")
    p.add_argument("--keep", action="store_true", help="keep the folder")
    args = p.parse_args()
    if not 1 <= args.runs <= 100 or not 1 <= args.agents <= 64:
        p.error("--runs is 1-100 and --agents 1-64")
    bench = Bench(args)
    bench.lease_s = parse_duration(args.lease)
    results = []
    try:
        bench.start_cluster()
        for run in range(args.runs):
            serving, agents = bench.one_failover()
            results.append((serving, agents))
            print(f"run {run + 1}: new leader serving {serving:.2f} s, "
                  f"agents reconnected {agents:.2f} s", flush=True)
            time.sleep(0.5)
    except RuntimeError as e:
        print(f"tools/bench failover: {e} (files in {bench.dir})",
              file=sys.stderr)
        args.keep = True
        bench.stop()
        return 1
    bench.stop()
    target = bench.lease_s + 2
    print()
    print(f"Failover on a 3-member etcd (TLS), 3 replicas, {args.agents} "
          f"agents, --leader_lease={args.lease}, {len(results)} runs:")
    print()
    print("| measure (kill -9 of the leader ->) | median | min | max | "
          "target |")
    print("|---|---|---|---|---|")
    for k, name in ((0, "another replica serving"),
                    (1, "every agent reconnected to it")):
        xs = [r[k] for r in results]
        print(f"| {name} | {statistics.median(xs):.2f} s | {min(xs):.2f} s | "
              f"{max(xs):.2f} s | ≤ {target:.1f} s |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"lease_s": bench.lease_s, "runs": results}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
