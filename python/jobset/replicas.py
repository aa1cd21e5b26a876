"""The addresses of a jobsetd cluster's replicas, as common/replicas.cc keeps
them for jobsetctl, and the back-off between rounds of them.

Only the replica that leads serves; a follower answers every call
UNAVAILABLE and names the leader ("HOST:PORT") in the trailing metadata
`jobsetd-leader`. The client dials current(); after a call fails, after()
moves current() to the leader the answer named, or to the next address (round
robin) when the one dialled could not be reached (or did not answer in time),
and says whether to try again at once or after a back-off (Backoff). One
address behaves as before: it is always current.
"""

import random
import threading

import grpc

from jobset.errors import ConfigError

# The trailing metadata key a follower names the leader in
# (common/leader_redirect.h).
LEADER_METADATA_KEY = "jobsetd-leader"
MAX_ADDRESSES = 16
MAX_ADDRESS_LENGTH = 261  # A DNS name and a port.

# The back-off between rounds (client-go's and the agents' shape): 100 ms,
# doubling to 2 s, each wait drawn from its upper half (jitter, so that the
# clients of a failed-over cluster do not come back in step).
BACKOFF_INITIAL = 0.1
BACKOFF_MAX = 2.0


def address_problem(entry):
    """Why `entry` is not HOST:PORT, or "" when it is."""
    if not entry:
        return "is empty"
    if len(entry.encode("utf-8", "replace")) > MAX_ADDRESS_LENGTH:
        return (f"is {len(entry.encode('utf-8', 'replace'))} bytes, over the "
                f"limit of {MAX_ADDRESS_LENGTH}")
    host, colon, port = entry.rpartition(":")
    if (not colon or not host or not port.isascii() or not port.isdigit()
            or not 1 <= int(port) <= 65535):
        return "is not HOST:PORT (port 1-65535)"
    if any(c <= " " or c >= "\x7f" or c in "/," for c in entry):
        return "is not HOST:PORT (a space, control character, / or ,)"
    return ""


def parse(flag, addresses):
    """Returns the list of "HOST:PORT[,HOST:PORT...]"; ConfigError naming
    `flag`, the entry's index and the entry when one is not HOST:PORT."""
    result = []
    for entry in addresses.split(","):
        if len(result) == MAX_ADDRESSES:
            raise ConfigError(
                f"{flag}: more than {MAX_ADDRESSES} addresses")
        problem = address_problem(entry)
        if problem:
            raise ConfigError(f'{flag}={addresses}: entry {len(result)} '
                              f'"{entry}" {problem}')
        result.append(entry)
    return result


def redirected_leader(error):
    """The leader a failed call (a grpc.RpcError) was redirected to, or
    None."""
    try:
        if error.code() != grpc.StatusCode.UNAVAILABLE:
            return None
        trailers = error.trailing_metadata() or ()
    except (AttributeError, TypeError):
        return None
    for key, value in trailers:
        if key == LEADER_METADATA_KEY and value:
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            return value
    return None


class Backoff:
    """The waits of one call between its rounds of replicas: BACKOFF_INITIAL
    doubling to BACKOFF_MAX, each drawn uniformly from [d/2, d].
    Thread-compatible (one call's)."""

    def __init__(self, initial=BACKOFF_INITIAL, maximum=BACKOFF_MAX,
                 rand=random.random):
        self._next = initial
        self._max = maximum
        self._rand = rand

    def next(self):
        """Returns the next wait in seconds."""
        d = self._next
        self._next = min(self._max, d * 2)
        return d / 2 + self._rand() * d / 2


class Replicas:
    """The replicas' addresses and the one to dial now. Thread-safe."""

    def __init__(self, addresses):
        if not addresses:
            raise ValueError("no addresses")
        self.addresses = list(addresses)
        self._lock = threading.Lock()
        self._next = 0         # The index tried after a failure.
        self._current = None   # None: addresses[0].
        self._redirects = 0    # In a row, since reached().
        self._unreachable = 0  # In a row, since a back-off or reached().

    def __len__(self):
        return len(self.addresses)

    def current(self):
        with self._lock:
            return self._current or self.addresses[0]

    def all(self):
        return ",".join(self.addresses)

    def reached(self):
        """A call was answered: both counts start again."""
        with self._lock:
            self._redirects = 0
            self._unreachable = 0

    def after(self, code, leader):
        """Tells how a call to current() failed: its grpc.StatusCode and the
        leader its answer named (None when none). Returns True when the call
        may go again at once, False when it should back off first.

        A valid redirect moves to that leader: at once up to len() + 1 times
        in a row (since reached()), past that (replicas that disagree on who
        leads, for a moment) after a back-off. UNAVAILABLE or
        DEADLINE_EXCEEDED without one moves to the next address: at once
        until every address failed in a row, then after a back-off (one per
        round, not per address). Anything else keeps current() (False)."""
        with self._lock:
            if leader is not None and not address_problem(leader):
                self._current = leader
                self._redirects += 1
                return self._redirects <= len(self.addresses) + 1
            if code not in (grpc.StatusCode.UNAVAILABLE,
                            grpc.StatusCode.DEADLINE_EXCEEDED):
                return False
            self._next = (self._next + 1) % len(self.addresses)
            self._current = self.addresses[self._next]
            self._unreachable += 1
            if self._unreachable < len(self.addresses):
                return True
            self._unreachable = 0
            return False
