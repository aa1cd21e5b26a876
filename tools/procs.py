"""The processes a tool started, and what they left: stopping them by pid, and finding the
processes a run left behind by a token (its scratch folder) in their environment. Used by
tools/bench_e2e.py and tools/soak*.py; never signals a process by name."""
import os
import signal
import subprocess
import time


def terminate(procs, grace=10):
    live = [p for p in procs if p is not None and p.poll() is None]
    for p in live:
        p.send_signal(signal.SIGTERM)
    end = time.monotonic() + grace
    for p in live:
        try:
            p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


def strays(token, keep):
    """The pids of processes whose environment contains `token` (a run's scratch path), but
    `keep` and this one."""
    needle = token.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in keep or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    yield int(entry)
        except OSError:
            continue


def kill_strays(token, keep):
    """SIGKILLs processes whose environment contains `token` (this run's scratch path), but `keep`."""
    for pid in strays(token, keep):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
