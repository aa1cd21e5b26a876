"""Tests of the client given several jobsetd replicas (jobset/replicas.py):
in-process servers on 127.0.0.1 play the leader (answers GetJobSet and
WatchJobSets) and followers (UNAVAILABLE on every call, naming the leader
in the trailing metadata `jobsetd-leader`, as scheduler/ha does), and the
retries of a failover: a leader that comes up late, a follower that learns
the leader late, a request that may have reached jobsetd before its
connection broke."""

import collections
import socket
import threading
import time
import unittest
from concurrent import futures

import grpc

import jobset
from jobset import replicas
from proto import jobset_pb2
from proto import jobset_service_pb2 as service_pb2
from proto import jobset_service_pb2_grpc as service_grpc


class Leader(service_grpc.JobSetServiceServicer):
    """Answers GetJobSet with a JobSet of the name asked for (after `delay`
    seconds, or until `release` is set), and WatchJobSets with one event."""

    def __init__(self, delay=0.0):
        self.calls = 0
        self.delay = delay
        self.release = threading.Event()

    def GetJobSet(self, request, context):
        self.calls += 1
        if self.delay:
            self.release.wait(self.delay)
        js = jobset_pb2.JobSet()
        js.metadata.name = request.name
        return js

    def WatchJobSets(self, request, context):
        self.calls += 1
        event = service_pb2.WatchEvent(type="ADDED")
        event.object.metadata.name = "w"
        yield event


class Follower(grpc.GenericRpcHandler):
    """Aborts every call UNAVAILABLE, naming `leader` (when set) in the
    trailing metadata."""

    def __init__(self, leader=None):
        self.calls = 0
        self.leader = leader

    def service(self, handler_call_details):
        def abort(request, context):
            self.calls += 1
            if self.leader:
                context.set_trailing_metadata(
                    ((replicas.LEADER_METADATA_KEY, self.leader),))
            context.abort(grpc.StatusCode.UNAVAILABLE,
                          "jobsetd: this replica is a follower; the leader "
                          f"is at {self.leader}")
        if handler_call_details.method.endswith("/WatchJobSets"):
            def abort_stream(request, context):
                abort(request, context)
                yield  # Never reached: a server-streaming handler.
            return grpc.unary_stream_rpc_method_handler(abort_stream)
        return grpc.unary_unary_rpc_method_handler(abort)


class Flaky(service_grpc.JobSetServiceServicer):
    """A leader whose first `failures` calls of each method fail
    UNAVAILABLE after they reached it (as when jobsetd stops mid-call: the
    client cannot tell whether they were applied), then answer."""

    def __init__(self, failures=1):
        self.failures = failures
        self.calls = collections.Counter()
        self.resource_versions = []  # Of the watches after the first.

    def _fail_first(self, method, context):
        self.calls[method] += 1
        if self.calls[method] <= self.failures:
            context.abort(grpc.StatusCode.UNAVAILABLE, "connection reset")

    def CreateJobSet(self, request, context):
        self._fail_first("CreateJobSet", context)
        return service_pb2.CreateJobSetResponse(jobset=request.jobset,
                                                created=True)

    def DeleteJobSet(self, request, context):
        self._fail_first("DeleteJobSet", context)
        js = jobset_pb2.JobSet()
        js.metadata.name = request.name
        return js

    def GetJobSet(self, request, context):
        self._fail_first("GetJobSet", context)
        js = jobset_pb2.JobSet()
        js.metadata.name = request.name
        js.metadata.resource_version = "1"
        return js

    def WatchJobSets(self, request, context):
        """The first watch delivers the JobSet running, then breaks; the
        next (from its resourceVersion) delivers it Completed."""
        self.calls["WatchJobSets"] += 1
        js = jobset_pb2.JobSet()
        js.metadata.name = "w"
        if self.calls["WatchJobSets"] == 1:
            js.metadata.resource_version = "2"
            yield service_pb2.WatchEvent(type="MODIFIED", object=js)
            context.abort(grpc.StatusCode.UNAVAILABLE, "Socket closed")
        self.resource_versions.append(request.resource_version)
        js.metadata.resource_version = "3"
        js.status.conditions.add(type="Completed", status="True")
        yield service_pb2.WatchEvent(type="MODIFIED", object=js)


def closed_port():
    """A port nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


class ReplicasTest(unittest.TestCase):

    def setUp(self):
        self.servers = []

    def tearDown(self):
        for server in self.servers:
            server.stop(None)

    def serve(self, fake, address="127.0.0.1:0"):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        if isinstance(fake, grpc.GenericRpcHandler):
            server.add_generic_rpc_handlers((fake,))
        else:
            service_grpc.add_JobSetServiceServicer_to_server(fake, server)
        port = server.add_insecure_port(address)
        server.start()
        self.servers.append(server)
        return f"127.0.0.1:{port}"

    def serve_later(self, fake, address, delay):
        """Starts serving `fake` on `address` after `delay` seconds (a
        leader being elected meanwhile); returns the timer."""
        timer = threading.Timer(delay, self.serve, (fake, address))
        timer.start()
        self.addCleanup(timer.cancel)
        return timer

    def test_a_follower_redirects_to_the_leader(self):
        leader = Leader()
        leader_address = self.serve(leader)
        follower = Follower(leader_address)
        follower_address = self.serve(follower)
        # The leader is not in the list: only the redirect finds it.
        with jobset.Client(f"{follower_address},{closed_port()}",
                           timeout=5) as client:
            self.assertEqual(client.get("a").metadata.name, "a")
            self.assertEqual((follower.calls, leader.calls), (1, 1))
            self.assertEqual(client.address, leader_address)
            self.assertEqual(client.get("b").metadata.name, "b")
            self.assertEqual((follower.calls, leader.calls), (1, 2))

    def test_an_unreachable_replica_is_passed_over(self):
        leader = Leader()
        leader_address = self.serve(leader)
        with jobset.Client(f"{closed_port()},{leader_address}",
                           timeout=5) as client:
            client.get("a")
            client.get("b")
            self.assertEqual(leader.calls, 2)
            self.assertEqual(client.address, leader_address)

    def test_a_redirect_that_is_not_host_port_is_not_followed(self):
        leader = Leader()
        leader_address = self.serve(leader)
        follower = Follower("not/an address")
        with jobset.Client(f"{self.serve(follower)},{leader_address}",
                           timeout=5) as client:
            client.get("a")
            self.assertEqual((follower.calls, leader.calls), (1, 1))

    def test_no_leader_known_goes_round_until_the_timeout(self):
        first, second = Follower(), Follower()
        addresses = [self.serve(first), closed_port(), self.serve(second)]
        with jobset.Client(",".join(addresses), timeout=1.5) as client:
            start = time.monotonic()
            with self.assertRaises(jobset.UnavailableError) as caught:
                client.get("a")
            elapsed = time.monotonic() - start
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        # Round after round, backing off between them (100 ms doubling),
        # not one round and not a busy loop.
        self.assertGreaterEqual(elapsed, 1.4)
        self.assertLess(elapsed, 3)
        self.assertGreaterEqual(first.calls, 3)
        self.assertLessEqual(first.calls, 10)
        self.assertLessEqual(abs(first.calls - second.calls), 1)
        message = str(caught.exception)
        self.assertIn("follower", message)
        self.assertIn("replicas " + ",".join(addresses), message)
        self.assertRegex(message, r"\d+ attempts in 1\.\ds, until the 1\.5s "
                         r"timeout")

    def test_followers_naming_each_other_back_off(self):
        a, b = Follower(), Follower()
        a_address, b_address = self.serve(a), self.serve(b)
        a.leader, b.leader = b_address, a_address
        with jobset.Client(f"{a_address},{b_address}", timeout=1) as client:
            with self.assertRaises(jobset.UnavailableError):
                client.get("x")
            # The first call and len(list) + 1 redirects at once, then one
            # a back-off (about 5 in a second), not a busy loop.
            self.assertGreater(a.calls + b.calls, 4)
            self.assertLess(a.calls + b.calls, 14)
            # They settle: one of them leads now.
            leader = Leader()
            self.servers[0].stop(None)
            a_leader = self.serve(leader, a_address)
            self.assertEqual(client.get("y").metadata.name, "y")
            self.assertEqual(client.address, a_leader)

    def test_a_leader_that_comes_up_late_is_reached(self):
        # The first replica is gone for good; the other starts serving 1.5 s
        # after the call: the call lands within its timeout.
        dead, late = closed_port(), closed_port()
        leader = Leader()
        self.serve_later(leader, late, 1.5)
        with jobset.Client(f"{dead},{late}", timeout=10) as client:
            start = time.monotonic()
            self.assertEqual(client.get("a").metadata.name, "a")
            self.assertGreaterEqual(time.monotonic() - start, 1.4)
            self.assertLess(time.monotonic() - start, 5)
            self.assertEqual(client.address, late)
        self.assertEqual(leader.calls, 1)

    def test_a_follower_that_learns_the_leader_redirects_then(self):
        leader = Leader()
        leader_address = self.serve(leader)
        follower = Follower()  # No leader elected yet.
        timer = threading.Timer(1.0, setattr,
                                (follower, "leader", leader_address))
        timer.start()
        self.addCleanup(timer.cancel)
        with jobset.Client(self.serve(follower), timeout=10) as client:
            self.assertEqual(client.get("a").metadata.name, "a")
        self.assertGreater(follower.calls, 1)
        self.assertEqual(leader.calls, 1)

    def test_a_short_timeout_gives_up_naming_the_addresses(self):
        addresses = [closed_port(), closed_port()]
        with jobset.Client(",".join(addresses), timeout=0.5) as client:
            start = time.monotonic()
            with self.assertRaises(jobset.UnavailableError) as caught:
                client.list()
            self.assertLess(time.monotonic() - start, 2)
        message = str(caught.exception)
        self.assertIn("Connection refused", message)
        self.assertIn(f"replicas {addresses[0]},{addresses[1]}: ", message)
        self.assertIn("until the 0.5s timeout", message)

    def test_what_may_have_been_applied_is_repeated_only_if_harmless(self):
        flaky = Flaky()
        with jobset.Client(self.serve(flaky), timeout=5) as client:
            # A read, and a named create (jobsetd answers a repeat that
            # finds the same JobSet "unchanged"): sent again.
            self.assertEqual(client.get("a").metadata.name, "a")
            self.assertEqual(flaky.calls["GetJobSet"], 2)
            named = jobset_pb2.JobSet()
            named.metadata.name = "named"
            self.assertEqual(client.create(named).metadata.name, "named")
            self.assertEqual(flaky.calls["CreateJobSet"], 2)
            # A generateName create would make a second JobSet, a delete
            # answer NOT_FOUND: not sent again, and the error says why.
            flaky.calls.clear()
            generated = jobset_pb2.JobSet()
            generated.metadata.generate_name = "gen-"
            with self.assertRaises(jobset.UnavailableError) as caught:
                client.create(generated)
            self.assertIn("CreateJobSet is not safe to repeat",
                          str(caught.exception))
            self.assertEqual(flaky.calls["CreateJobSet"], 1)
            with self.assertRaises(jobset.UnavailableError) as caught:
                client.delete("named")
            self.assertIn("DeleteJobSet is not safe to repeat",
                          str(caught.exception))
            self.assertEqual(flaky.calls["DeleteJobSet"], 1)

    def test_wait_watches_again_after_the_stream_breaks(self):
        flaky = Flaky(failures=0)
        with jobset.Client(self.serve(flaky), timeout=5) as client:
            done = client.wait("w", "Completed", timeout=10)
        self.assertEqual(done.metadata.resource_version, "3")
        # Watched again from the last event it had, missing nothing.
        self.assertEqual(flaky.resource_versions, ["2"])

    def test_backoff_doubles_to_its_maximum_with_jitter(self):
        top = replicas.Backoff(rand=lambda: 1.0)
        self.assertEqual([round(top.next(), 3) for _ in range(7)],
                         [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0])
        bottom = replicas.Backoff(rand=lambda: 0.0)
        self.assertEqual([round(bottom.next(), 3) for _ in range(3)],
                         [0.05, 0.1, 0.2])

    def test_a_deadline_moves_on_for_the_next_call_only(self):
        slow, leader = Leader(delay=5), Leader()
        slow_address, leader_address = self.serve(slow), self.serve(leader)
        try:
            with jobset.Client(f"{slow_address},{leader_address}",
                               timeout=0.5) as client:
                start = time.monotonic()
                with self.assertRaises(jobset.UnavailableError) as caught:
                    client.get("a")
                self.assertLess(time.monotonic() - start, 3)
                self.assertEqual(caught.exception.code,
                                 grpc.StatusCode.DEADLINE_EXCEEDED)
                self.assertEqual((slow.calls, leader.calls), (1, 0))
                client.get("b")
                self.assertEqual((slow.calls, leader.calls), (1, 1))
        finally:
            slow.release.set()

    def test_watch_is_redirected_before_it_delivers(self):
        leader = Leader()
        leader_address = self.serve(leader)
        follower = Follower(leader_address)
        with jobset.Client(f"{self.serve(follower)},{closed_port()}",
                           timeout=5) as client:
            events = list(client.watch(timeout=5))
        self.assertEqual([(t, js.metadata.name) for t, js in events],
                         [("ADDED", "w")])
        self.assertEqual((follower.calls, leader.calls), (1, 1))

    def test_a_bad_list_is_refused(self):
        for server, message in [
                ("127.0.0.1:1,,127.0.0.1:2",
                 'server=127.0.0.1:1,,127.0.0.1:2: entry 1 "" is empty'),
                ("a:1,b:0", 'entry 1 "b:0" is not HOST:PORT .port 1-65535.'),
                ("a:1,b/c:2", 'entry 1 "b/c:2" is not HOST:PORT .a space'),
                ("a", 'entry 0 "a" is not HOST:PORT'),
                (",".join(["a:1"] * 17), "more than 16 addresses"),
                ("h" * 260 + ":1", "over the limit of 261")]:
            with self.assertRaisesRegex(jobset.ConfigError, message):
                jobset.Client(server)
        # ConfigError is a ValueError, as for a bad config file.
        with self.assertRaises(ValueError):
            jobset.Client("a:1,")


if __name__ == "__main__":
    unittest.main()
