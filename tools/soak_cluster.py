"""The soak's cluster: jobsetd (one on RocksDB, or with `ha` three replicas on a private
3-member etcd), agents that dial it through per-agent proxies, all children of this process.
Used by tools/soak.py and tools/soak_faults.py."""
import os
import signal
import socket
import subprocess
import time

import bench_e2e as e2e
import procs
import soak_faults

NODE_LOST_S = 5
LEASE_S = 3
REPLICAS = 3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class Server:
    """One jobsetd: its port, data folder, process and log; started again on the same port and
    data. Its log holds every start, each after a "==== start N" line."""

    def __init__(self, name, scratch):
        self.name = name
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.data = os.path.join(scratch, name)
        self.log = os.path.join(scratch, f"{name}.log")
        self.proc = None
        self.starts = 0

    def start(self, argv, env):
        self.starts += 1
        with open(self.log, "ab") as out:
            out.write(f"==== start {self.starts}\n".encode())
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         env=env, start_new_session=True)

    def this_start(self):
        """The log of the running start."""
        text = read(self.log)
        return text[text.rfind(f"==== start {self.starts}\n"):]

    def leads(self):
        return self.proc is not None and self.proc.poll() is None and "\njobsetd serving on " in self.this_start()


class SoakCluster(e2e.Cluster):
    """bench_e2e's cluster with jobsetd restartable on its port and data, agents behind
    proxies (one per agent and replica), and with `ha` three replicas on etcd; without it a
    data filesystem that can be filled."""

    def __init__(self, args, scratch, history):
        super().__init__(args.bin, scratch, args.agents, args.jobsetd_flag, args.agent_flag)
        self.history = history
        self.bin_dir = args.bin
        self.ha = args.ha
        self.servers = [Server(f"replica-{i + 1}" if self.ha else "jobsetd", scratch)
                        for i in range(REPLICAS if self.ha else 1)]
        self.data = self.servers[0].data  # admin.conf and join-token
        self.disk = None if self.ha else soak_faults.SmallDisk(self.data, args.disk_mib)
        self.proxies = {}  # node -> [Proxy per server]
        self.failpoints = ""  # JOBSET_FAILPOINTS of the next start
        self.etcd = None
        self.etcd_env = {}

    @property
    def jobsetd(self):
        """The process of the leader (or of the one replica), else of the first server."""
        return next((s.proc for s in self.servers if s.leads()), self.servers[0].proc)

    @jobsetd.setter
    def jobsetd(self, value):
        assert value is None  # bench_e2e.Cluster's __init__; the servers hold the processes

    def start(self):
        if self.ha:
            self._start_etcd()
        self.start_jobsetd(self.servers[0])
        if not self.wait_serving(60):
            raise e2e.Failed(f"jobsetd does not serve; see {self.servers[0].log}")
        for s in self.servers[1:]:
            self.start_jobsetd(s)
            if not e2e.until(f"{s.name} to follow", 30, lambda: "\njobsetd follower on " in s.this_start()):
                raise e2e.Failed(f"{s.name} does not follow; see {s.log}")
        for i in range(1, self.nodes + 1):
            node = f"node-{i}"
            self.proxies[node] = [soak_faults.Proxy(("127.0.0.1", s.port)) for s in self.servers]
            self.start_agent(node)
        self.wait_ready(30 + self.nodes)

    def _start_etcd(self):
        d = os.path.join(self.scratch, "etcd")
        self.etcd = self._spawn([os.path.join(self.bin_dir, "store/etcd/local-etcd"), f"--dir={d}", "--members=3"],
                                "etcd.log")
        env = os.path.join(d, "env")
        e2e.until("local-etcd's env", 60, lambda: self.etcd.poll() is None and os.path.exists(env), every=0.1)
        self.etcd_env = dict(line.split("=", 1) for line in read(env).splitlines() if "=" in line)
        fd = os.open(os.path.join(self.scratch, "cluster-secret"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(32).hex().encode())
        os.close(fd)

    def start_jobsetd(self, server=None):
        server = server or self.servers[0]
        env = dict(self.env)
        if self.failpoints:
            env["JOBSET_FAILPOINTS"] = self.failpoints
        argv = [self.bin["jobsetd"], f"--listen={server.address}", f"--data_dir={server.data}",
                "--metrics_listen=127.0.0.1:0", f"--node_lost_timeout={NODE_LOST_S}s",
                "--heartbeat_interval=1s", "--restart_grace=10s", f"--allowed_host_paths={self.marks}"]
        if self.ha:
            e = self.etcd_env
            argv += ["--store=etcd", f"--etcd_endpoints={e['ETCD_ENDPOINTS']}", f"--etcd_cafile={e['ETCD_CAFILE']}",
                     f"--etcd_certfile={e['ETCD_CERTFILE']}", f"--etcd_keyfile={e['ETCD_KEYFILE']}",
                     f"--cluster_secret_file={os.path.join(self.scratch, 'cluster-secret')}"]
        server.start(argv + list(self.jobsetd_flags), env)
        self.address = ",".join(s.address for s in self.servers)

    def server_list(self):
        """What clients are given: every replica, with its scheme."""
        return ",".join(f"https://{s.address}" for s in self.servers)

    def ctl(self, *args, timeout=120, check=True):
        return super().ctl(f"--server={self.server_list()}", *args, timeout=timeout, check=check)

    def wait_serving(self, seconds=30):
        """Until jobsetd (a leader) answers a list; False if it does not within `seconds`."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                if all(os.path.exists(os.path.join(self.data, f)) for f in ("admin.conf", "join-token")) and \
                        self.ctl("get", "jobsets", "-o", "name", timeout=10, check=False).returncode == 0:
                    return True
            except e2e.Failed:  # jobsetctl timed out
                pass
            time.sleep(0.2)
        return False

    def start_agent(self, node):
        i = int(node.split("-")[1])
        host = i + 1
        via = ",".join(f"127.0.0.1:{p.port}" for p in self.proxies[node])
        self.agents[node] = self._spawn([
            self.bin["agent"], f"--scheduler={via}", f"--node_name={node}",
            f"--address=127.0.{host // 256}.{host % 256}", f"--capacity=cpu={e2e.CPU_PER_NODE},memory=8Gi",
            f"--labels=cloud.google.com/gke-nodepool=slice-{(i - 1) // 2}", f"--lease={LEASE_S}s",
            f"--work_dir={os.path.join(self.scratch, node)}", f"--shim={self.bin['shim']}",
            f"--join_token_file={os.path.join(self.data, 'join-token')}", *self.agent_flags], f"{node}.log")

    def alive(self):
        return True  # jobsetd may be down on purpose; callers look at the servers themselves

    def sample(self):
        """Each running jobsetd's RSS and open fds, into the history."""
        for s in self.servers:
            if s.proc is None or s.proc.poll() is not None:
                continue
            pid = s.proc.pid
            try:
                with open(f"/proc/{pid}/status") as f:
                    rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
                fds = len(os.listdir(f"/proc/{pid}/fd"))
            except (OSError, StopIteration, ValueError):
                continue
            self.history.write({"op": "sample", "pid": pid, "rss_kb": rss, "fds": fds, "t": time.monotonic()})

    def etcd_signal(self, sig):
        if self.etcd is not None and self.etcd.poll() is None:
            self.etcd.send_signal(sig)

    def stop(self):
        """Stops everything (bench_e2e's order: JobSets deleted, agents, then jobsetd) and
        records each jobsetd's and agent's exit status: SIGTERM must end it with 0."""
        alive = {s.name: s.proc for s in self.servers if s.proc is not None and s.proc.poll() is None}
        alive.update((n, p) for n, p in self.agents.items() if p.poll() is None)
        # Every replica is asked to stop before the strays of the run are killed: the base
        # class's stop knows one jobsetd, and its sweep killed the others with SIGKILL.
        self.stop_agents()
        procs.terminate([s.proc for s in self.servers])
        procs.terminate([self.etcd])
        procs.kill_strays(self.scratch, set())
        for who, proc in sorted(alive.items()):
            if proc.returncode != 0:
                self.history.write({"op": "exit", "who": who, "rc": proc.returncode, "expected": False,
                                    "t": time.monotonic(), "at": "shutdown"})

    def heal(self):
        """Every proxy passes, the disk is drained, a killed etcd member runs again."""
        for ps in self.proxies.values():
            for p in ps:
                p.mode = "pass"
        if self.disk is not None:
            self.disk.drain()
        self.etcd_signal(signal.SIGUSR2)

    def close(self):
        for ps in self.proxies.values():
            for p in ps:
                p.close()
        if self.disk is not None:
            self.disk.unmount()
