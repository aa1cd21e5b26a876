"""The soak's faults: a per-agent TCP proxy (blackhole, delay, reset), a small filesystem for
jobsetd's data that can be filled, and the fault loop with its supervisor. Used by
tools/soak.py and tools/soak_cluster.py."""
import collections
import os
import random
import select
import signal
import socket
import struct
import subprocess
import threading
import time


class Proxy:
    """Forwards every connection made to its port to `target` (host, port), in one of three
    modes: "pass"; "blackhole" (bytes are read and dropped both ways, new connections are
    accepted and never forwarded, as a silent network drop looks to both ends); and
    "delay" (each chunk waits `delay_s` before it is sent on). reset() closes every
    connection with a TCP RST. Thread-safe; a thread per connection direction."""

    def __init__(self, target):
        self.target = target
        self.mode = "pass"
        self.delay_s = 0.0
        self._lock = threading.Lock()
        self._conns = []  # [(client socket, upstream socket or None)]
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = None
            if self.mode != "blackhole":
                try:
                    upstream = socket.create_connection(self.target, timeout=5)
                    upstream.settimeout(None)
                except OSError:
                    _abort(client)
                    continue
            with self._lock:
                self._conns.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            if upstream is not None:
                threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while True:
                r, _, _ = select.select([src], [], [], 0.5)
                if self._closed:
                    return
                if not r:
                    continue
                data = src.recv(65536)
                if not data:
                    break
                if self.mode == "blackhole" or dst is None:
                    continue
                if self.mode == "delay" and self.delay_s > 0:
                    time.sleep(self.delay_s)
                dst.sendall(data)
        except (OSError, ValueError):  # ValueError: the other direction closed the socket
            pass
        for s in (src, dst):
            _abort(s)

    def reset(self):
        """Closes every connection open now with a TCP RST (both ends see "connection reset")."""
        with self._lock:
            conns, self._conns = self._conns, []
        for client, upstream in conns:
            _abort(client)
            _abort(upstream)

    def close(self):
        self._closed = True
        self._listener.close()
        self.reset()


def _abort(sock):
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class SmallDisk:
    """A tmpfs of `size_mib` mounted at `path` (root only), which fill() fills to the last byte
    and drain() empties again; unmount() at the end. Without root (or where mount fails) it is
    a plain folder and `available` is False."""

    def __init__(self, path, size_mib):
        self.path = path
        self.filler = os.path.join(path, ".soak-filler")
        os.makedirs(path, exist_ok=True)
        self.available = False
        if os.geteuid() == 0:
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mib}m,mode=0700", "tmpfs", path],
                               capture_output=True, text=True)
            self.available = r.returncode == 0
            self.why = r.stderr.strip()
        else:
            self.why = "not root: no tmpfs to fill"

    def fill(self):
        """Writes zeros until the filesystem says ENOSPC; returns the bytes written."""
        written = 0
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1 << 20, 4096, 1):  # whole MiB, then what is left of the last
                block = b"\0" * size
                try:
                    while True:
                        written += os.write(fd, block)
                except OSError:
                    pass
        finally:
            os.close(fd)
        return written

    def drain(self):
        try:
            os.unlink(self.filler)
        except FileNotFoundError:
            pass

    def unmount(self):
        if self.available:
            subprocess.run(["umount", self.path], capture_output=True)
            self.available = False


def _say(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


class Faults:
    """The fault loop over a soak_cluster.SoakCluster, and its supervisor: a jobsetd or agent
    that exits is started again (and recorded, expected or not)."""

    KINDS = ("jobsetd_kill", "agent_kill", "agent_kill_long", "agent_stop", "proxy_blackhole", "proxy_delay",
             "proxy_reset", "disk_full", "failpoint", "etcd_kill")

    def __init__(self, args, cluster, history, node_lost_s):
        self.args = args
        self.c = cluster
        self.history = history
        self.node_lost_s = node_lost_s
        self.rng = random.Random(f"{args.seed}-faults")
        self.lock = threading.Lock()  # held while a process is killed or started
        self.counts = collections.Counter()
        self.stop = threading.Event()
        self.expected_exit_until = 0.0  # jobsetd may exit on its own until then (disk full, failpoint)
        self.down = set()  # agents and servers killed on purpose, not yet started again
        left_out = {}
        if cluster.ha:
            left_out["disk_full"] = "jobsetd's data is in etcd (--ha)"
            left_out["failpoint"] = "a restarted replica follows: its failpoints are not reached (--ha)"
        else:
            left_out["etcd_kill"] = "no etcd without --ha"
            if not cluster.disk.available:
                left_out["disk_full"] = cluster.disk.why
        if not args.failpoints:
            left_out.setdefault("failpoint", "no --failpoints given")
        for kind, why in sorted(left_out.items()):
            _say(f"{kind} left out: {why}")
        self.kinds = [k for k in self.KINDS if k not in left_out and k in args.faults]

    def record(self, kind, target, t0, w0, **extra):
        self.counts[kind] += 1
        self.history.write({"op": "fault", "kind": kind, "target": target, "t0": t0, "t1": time.monotonic(),
                            "w0": w0, "w1": time.time(), **extra})

    def run(self, until):
        order = list(self.kinds)
        self.rng.shuffle(order)
        # Every kind once, even past `until`, then at random until then.
        while not self.stop.wait(self.rng.uniform(0.5, 1.5) * self.args.fault_every) and \
                (order or time.monotonic() < until):
            kind = order.pop(0) if order else self.rng.choice(self.kinds)
            getattr(self, kind)()

    def _restart(self, server, failpoints=""):
        """kill -9 of `server` (if it runs) and its start again; True once a leader serves."""
        with self.lock:
            self.down.add(server.name)
            if server.proc is not None and server.proc.poll() is None:
                server.proc.kill()
            server.proc.wait()
            self.c.failpoints = failpoints
            self.c.start_jobsetd(server)
            self.down.discard(server.name)
        return self.c.wait_serving(60)

    def _leader(self):
        return next((s for s in self.c.servers if s.leads()), self.c.servers[0])

    def jobsetd_kill(self):
        t0, w0 = time.monotonic(), time.time()
        leader = self._leader()
        up = self._restart(leader)
        self.record("jobsetd_kill", leader.name, t0, w0, serving_after_s=round(time.monotonic() - t0, 3), up=up)

    def failpoint(self):
        name = self.rng.choice(self.args.failpoints)
        hits = self.rng.randint(2, 5)
        t0, w0 = time.monotonic(), time.time()
        self.expected_exit_until = time.monotonic() + 3600
        server = self.c.servers[0]
        self._restart(server, f"{name}={hits - 1}*off->crash")
        armed = server.proc  # the supervisor replaces it once it crashed
        end = time.monotonic() + 20
        while time.monotonic() < end and armed.poll() is None:
            time.sleep(0.1)
        crashed = armed.poll() is not None
        self._restart(server)  # unarmed
        self.expected_exit_until = time.monotonic() + 2
        self.record("failpoint", name, t0, w0, hits=hits, crashed=crashed)

    def etcd_kill(self):
        """A member of etcd killed and started again. The leading replica may lose its lease
        meanwhile (its etcd client was on that member) and exit, by design: that exit is
        expected, and the next replica leads."""
        t0, w0 = time.monotonic(), time.time()
        down = self.rng.uniform(2, 6)
        self.expected_exit_until = time.monotonic() + 3600
        self.c.etcd_signal(signal.SIGUSR1)
        time.sleep(down)
        self.c.etcd_signal(signal.SIGUSR2)
        self.expected_exit_until = time.monotonic() + 10
        self.record("etcd_kill", "etcd", t0, w0, down_s=round(down, 2))

    def _agent(self):
        return self.rng.choice(sorted(self.c.agents))

    def agent_kill(self, down_s=1.0, kind="agent_kill"):
        node = self._agent()
        t0, w0 = time.monotonic(), time.time()
        with self.lock:
            self.down.add(node)
            self.c.agents[node].kill()
            self.c.agents[node].wait()
        time.sleep(down_s)
        with self.lock:
            self.c.start_agent(node)
            self.down.discard(node)
        self.record(kind, node, t0, w0, down_s=round(down_s, 2))

    def agent_kill_long(self):
        self.agent_kill(self.node_lost_s + 2 + self.rng.uniform(0, 3), "agent_kill_long")

    def agent_stop(self):
        node = self._agent()
        t0, w0 = time.monotonic(), time.time()
        down = self.rng.uniform(2, 8)
        self.c.agents[node].send_signal(signal.SIGSTOP)
        time.sleep(down)
        self.c.agents[node].send_signal(signal.SIGCONT)
        self.record("agent_stop", node, t0, w0, down_s=round(down, 2))

    def _proxies(self, mode, seconds, delay_s=0.0):
        node = self._agent()
        t0, w0 = time.monotonic(), time.time()
        for p in self.c.proxies[node]:
            p.delay_s, p.mode = delay_s, mode
        time.sleep(seconds)
        for p in self.c.proxies[node]:
            p.mode = "pass"
            if mode == "blackhole":
                p.reset()  # what was cut off stays cut off; the agent dials again
        return node, t0, w0

    def proxy_blackhole(self):
        down = self.rng.uniform(2, 8)
        node, t0, w0 = self._proxies("blackhole", down)
        self.record("proxy_blackhole", node, t0, w0, down_s=round(down, 2))

    def proxy_delay(self):
        delay = self.rng.uniform(0.05, 0.5)
        node, t0, w0 = self._proxies("delay", 5, delay)
        self.record("proxy_delay", node, t0, w0, delay_s=round(delay, 3))

    def proxy_reset(self):
        node = self._agent()
        t0, w0 = time.monotonic(), time.time()
        for p in self.c.proxies[node]:
            p.reset()
        self.record("proxy_reset", node, t0, w0)

    def disk_full(self):
        t0, w0 = time.monotonic(), time.time()
        self.expected_exit_until = time.monotonic() + 3600
        written = self.c.disk.fill()
        time.sleep(3)
        self.c.disk.drain()
        self.expected_exit_until = time.monotonic() + 5
        self.record("disk_full", "jobsetd", t0, w0, filled_mib=round(written / 2**20, 1))

    def supervise(self):
        """Starts again a jobsetd or agent that exited on its own; a jobsetd's exit outside a
        disk-full or failpoint fault, and every agent's, is recorded as unexpected."""
        while not self.stop.wait(0.5):
            with self.lock:
                for s in self.c.servers:
                    if s.proc.poll() is not None and s.name not in self.down:
                        self.history.write({"op": "exit", "who": s.name, "rc": s.proc.returncode, "t": time.monotonic(),
                                            "expected": time.monotonic() < self.expected_exit_until})
                        self.c.failpoints = ""
                        self.c.start_jobsetd(s)
                for node, p in self.c.agents.items():
                    if p.poll() is not None and node not in self.down:
                        self.history.write({"op": "exit", "who": node, "rc": p.returncode, "expected": False,
                                            "t": time.monotonic()})
                        self.c.start_agent(node)

    def sample(self):
        while not self.stop.wait(2.0):
            self.c.sample()
