"""The soak's fault injectors: a per-agent TCP proxy (blackhole, delay, reset) and a small
filesystem for jobsetd's data that can be filled. Used by tools/soak.py."""
import os
import select
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
