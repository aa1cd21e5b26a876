"""Tests of the client given several jobsetd replicas (jobset/replicas.py):
in-process servers on 127.0.0.1 play the leader (answers GetJobSet and
WatchJobSets) and followers (UNAVAILABLE on every call, naming the leader
in the trailing metadata `jobsetd-leader`, as scheduler/ha does)."""

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

    def serve(self, fake):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        if isinstance(fake, grpc.GenericRpcHandler):
            server.add_generic_rpc_handlers((fake,))
        else:
            service_grpc.add_JobSetServiceServicer_to_server(fake, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.servers.append(server)
        return f"127.0.0.1:{port}"

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

    def test_no_leader_known_fails_unavailable_trying_each_once(self):
        first, second = Follower(), Follower()
        addresses = [self.serve(first), closed_port(), self.serve(second)]
        with jobset.Client(",".join(addresses), timeout=5) as client:
            with self.assertRaises(jobset.UnavailableError) as caught:
                client.get("a")
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual((first.calls, second.calls), (1, 1))
        self.assertIn("follower", str(caught.exception))

    def test_followers_naming_each_other_give_up(self):
        a, b = Follower(), Follower()
        a_address, b_address = self.serve(a), self.serve(b)
        a.leader, b.leader = b_address, a_address
        with jobset.Client(f"{a_address},{b_address}", timeout=5) as client:
            with self.assertRaises(jobset.UnavailableError):
                client.get("x")
        # The first call and len(list) + 1 redirects.
        self.assertEqual(a.calls + b.calls, 4)

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
