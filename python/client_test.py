"""The Python client against a real jobsetd on 127.0.0.1 (port chosen at
run time). Without agents pods stay pending; a Job with
activeDeadlineSeconds makes a JobSet fail, which gives wait() an ending.
LogsTest adds a jobset-agent (process runtime) whose pods print lines;
FailoverTest kills its jobsetd and starts it again on the same port while
calls are under way.
"""

import copy
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import grpc

import jobset
from proto import jobset_service_pb2

DEADLINE_JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "deadline"},
    "spec": {
        "replicatedJobs": [{
            "name": "workers",
            "template": {"spec": {
                "activeDeadlineSeconds": 1,
                "template": {"spec": {
                    "containers": [{"name": "main", "image": "bash",
                                    "command": ["true"],
                                    "resources": {"limits": {"cpu": 1}}}],
                    # Kubernetes has it, jobsetd ignores it: a warning.
                    "dnsPolicy": "ClusterFirst",
                }},
            }},
        }],
    },
}


def start_jobsetd(data_dir, listen="127.0.0.1:0"):
    """Starts jobsetd; returns (process, address)."""
    process = subprocess.Popen(
        [os.environ["JOBSETD"], f"--listen={listen}",
         f"--data_dir={data_dir}", "--fsync=false"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        match = re.match(r"jobsetd serving on (\S+) ", line)
        if match:
            return process, match.group(1)
    process.kill()
    process.wait()
    raise RuntimeError("jobsetd did not start")


def free_port():
    """A port nothing listens on now (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_agent(address, data_dir, work_dir):
    """Starts a jobset-agent (node-1, process runtime) joined to the
    jobsetd at `address` with its join token; returns the process."""
    args = [os.environ["AGENT"], f"--scheduler={address}",
            "--node_name=node-1", "--address=127.0.0.1",
            "--capacity=cpu=4,memory=4Gi", f"--work_dir={work_dir}",
            f"--join_token_file={os.path.join(data_dir, 'join-token')}"]
    if os.path.exists(os.environ.get("SHIM", "")):
        args.append(f"--shim={os.environ['SHIM']}")
    return subprocess.Popen(args, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def stop(process):
    """Kills a process this test started, and reaps it."""
    process.kill()
    process.wait()
    if process.stdout:
        process.stdout.close()


def poll(what, condition, timeout=30):
    """Calls what() until condition(result) holds; returns the result."""
    deadline = time.monotonic() + timeout
    while True:
        result = what()
        if condition(result) or time.monotonic() > deadline:
            return result
        time.sleep(0.1)


def printing_jobset(name, script, cpu="100m"):
    """A JobSet of one pod running `script` under sh."""
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": [{
            "name": "w",
            "template": {"spec": {"backoffLimit": 0, "template": {"spec": {
                "containers": [{"name": "main", "image": "busybox",
                                "command": ["sh", "-c", script],
                                "resources": {"requests": {"cpu": cpu}}}],
            }}}},
        }]},
    }


class ClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.process, cls.address = start_jobsetd(os.path.join(cls.tmp, "data"))
        # Secure, as jobsetd always is: TLS and the admin.conf it wrote.
        cls.config = os.path.join(cls.tmp, "data", "admin.conf")
        cls.client = jobset.Client.from_config(cls.config)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        stop(cls.process)  # Only the pid this test started.

    def test_apply_get_list_suspend_resume_delete(self):
        path = os.environ["UPSTREAM_MANIFEST"]
        results = self.client.apply(path)
        self.assertEqual([(r.name, r.action) for r in results],
                         [("success-policy", "created")])
        self.assertEqual(self.client.apply(path)[0].action, "unchanged")
        with open(path, encoding="utf-8") as f:
            text = f.read().replace(
                "  name: success-policy\n",
                "  name: success-policy\n  labels:\n    team: ml\n", 1)
        self.assertEqual(self.client.apply(text, dry_run=True)[0].action,
                         "configured")
        self.assertEqual(self.client.apply(text)[0].action, "configured")

        got = self.client.get("success-policy")
        self.assertEqual(got.metadata.labels["team"], "ml")
        self.assertEqual([rj.name for rj in got.spec.replicated_jobs],
                         ["leader", "workers"])
        as_dict = jobset.to_dict(got)
        self.assertEqual(as_dict["spec"]["successPolicy"]["operator"], "All")
        self.assertIn("success-policy",
                      [js.metadata.name for js in self.client.list()])
        self.assertEqual(self.client.list(label_selector="team=other"), [])

        def names():
            return {p.metadata.name for p in
                    self.client.list_pods("success-policy")}

        deadline = time.monotonic() + 10
        while len(names()) != 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        before = names()
        self.assertEqual(len(before), 3)
        self.assertTrue(self.client.suspend("success-policy").spec.suspend)
        self.assertFalse(self.client.resume("success-policy").spec.suspend)

        # The controller may still be stopping the pods of the suspended
        # attempt: wait for the resumed JobSet's three, none of the old.
        deadline = time.monotonic() + 10
        pods = self.client.list_pods("success-policy")
        while ((len(pods) != 3 or
                before & {p.metadata.name for p in pods}) and
               time.monotonic() < deadline):
            time.sleep(0.1)
            pods = self.client.list_pods("success-policy")
        self.assertEqual(len(pods), 3)
        self.assertFalse(before & {p.metadata.name for p in pods})
        self.assertEqual(len(self.client.list_jobs("success-policy")), 2)
        # One item a page: the lists page through to the same items.
        with jobset.Client.from_config(self.config, page_size=1) as paged:
            self.assertEqual(
                [p.metadata.name for p in paged.list_pods("success-policy")],
                [p.metadata.name for p in pods])
            self.assertEqual(len(paged.list_jobs("success-policy")), 2)
            self.assertEqual([js.metadata.name for js in paged.list()],
                             [js.metadata.name for js in self.client.list()])
            self.assertGreaterEqual(len(paged.list_events("success-policy")),
                                    1)

        self.assertEqual(self.client.delete("success-policy").metadata.name,
                         "success-policy")
        with self.assertRaises(jobset.NotFoundError) as caught:
            self.client.get("success-policy")
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("success-policy", caught.exception.message)

    def test_nodes(self):
        # No agent joins this test's jobsetd: no nodes, and a named one is
        # NOT_FOUND as with kubectl.
        self.assertEqual(self.client.list_nodes(), [])
        with self.assertRaises(jobset.NotFoundError) as caught:
            self.client.get_node("node-x")
        self.assertIn("node-x", caught.exception.message)

    def test_wait_met_other_terminal_and_timeout(self):
        results = self.client.apply(DEADLINE_JOBSET)
        self.assertEqual(results[0].action, "created")
        self.assertEqual(
            results[0].warnings,
            ["spec.replicatedJobs[0].template.spec.template.spec.dnsPolicy: "
             "ignored by jobsetd"])
        self.assertEqual(
            results[0].jobset.spec.replicated_jobs[0].template.spec.template
            .spec.containers[0].resources.limits["cpu"], "1")
        failed = self.client.wait("deadline", "Failed", timeout=30)
        self.assertEqual(failed.status.terminal_state, "Failed")
        with self.assertRaises(jobset.ConditionNotMetError):
            self.client.wait("deadline", "Completed", timeout=30)

        pending = dict(DEADLINE_JOBSET, metadata={"name": "pending"})
        pending["spec"] = {"replicatedJobs": [{
            "name": "w", "template": {"spec": {"template": {"spec": {
                "containers": [{"name": "c", "image": "bash"}]}}}}}]}
        self.client.apply(pending)
        start = time.monotonic()
        with self.assertRaises(jobset.WaitTimeoutError):
            self.client.wait("pending", "Completed", timeout=1)
        self.assertLess(time.monotonic() - start, 10)

    def test_watch_lists_then_streams(self):
        self.client.apply(dict(DEADLINE_JOBSET, metadata={"name": "watched"}))
        events = []
        for event_type, obj in self.client.watch("watched", timeout=3):
            events.append(event_type)
            if obj.status.terminal_state:
                break
        self.assertEqual(events[0], "ADDED")
        self.assertIn("MODIFIED", events)

    def test_pod_security_refusal_is_forbidden(self):
        # jobsetd's default Pod Security level, baseline, refuses hostPath.
        host = dict(DEADLINE_JOBSET, metadata={"name": "hostdata"})
        host["spec"] = {"replicatedJobs": [{
            "name": "w", "template": {"spec": {"template": {"spec": {
                "volumes": [{"name": "data", "hostPath": {"path": "/srv"}}],
                "containers": [{"name": "c", "image": "bash"}]}}}}}]}
        with self.assertRaises(jobset.Forbidden) as caught:
            self.client.apply(host)
        self.assertEqual(caught.exception.code,
                         grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn('violates PodSecurity "baseline:latest": hostPath '
                      'volumes (volume "data")', caught.exception.message)

    def test_rejected_spec_carries_field_path(self):
        bad = dict(DEADLINE_JOBSET, metadata={"name": "bad"})
        bad["spec"] = {"replicatedJobs": [{
            "name": "w", "replicas": -1, "template": {"spec": {"template": {
                "spec": {"containers": [{"name": "c", "image": "bash"}]}}}}}]}
        with self.assertRaises(jobset.InvalidError) as caught:
            self.client.apply(bad)
        self.assertEqual(caught.exception.code,
                         grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("spec.replicatedJobs[0].replicas",
                      caught.exception.message)
        with self.assertRaises(jobset.NotFoundError):
            self.client.get("bad")

    def test_manifest_errors_name_the_field(self):
        typo = dict(DEADLINE_JOBSET, spec={"replicatedJob": []})
        with self.assertRaisesRegex(jobset.ManifestError,
                                    r"spec\.replicatedJob: unknown field"):
            self.client.apply(typo)
        with self.assertRaisesRegex(jobset.ManifestError, "kind"):
            self.client.apply(dict(DEADLINE_JOBSET, kind="Job"))
        with self.assertRaisesRegex(jobset.ManifestError, "not valid YAML"):
            self.client.apply("a: [")

    def test_tokens_and_forbidden(self):
        token = self.client.create_token("py-user", groups=["py-team"])
        self.assertIn("py-user", [t.name for t in self.client.list_tokens()])
        with jobset.Client.from_config(self.config, token=token,
                                       namespace="team-py") as user:
            self.assertFalse(user.can_i("create", "jobsets"))
            with self.assertRaises(jobset.Forbidden) as caught:
                user.apply(dict(DEADLINE_JOBSET, metadata={"name": "nope"}))
            self.assertIn('is forbidden: User "py-user" cannot',
                          str(caught.exception))
        self.client.delete_token("py-user")
        with jobset.Client.from_config(self.config, token=token) as gone:
            with self.assertRaises(jobset.Unauthenticated):
                gone.list()
        with jobset.Client.from_config(self.config,
                                       token="no-such.token") as bad:
            with self.assertRaises(jobset.Unauthenticated):
                bad.list()

    def test_secrets_and_config_maps(self):
        created = self.client.apply_secret(
            "py-token", {"token": "s3cret", "raw": b"\x00\x01"},
            labels={"team": "py"})
        self.assertTrue(created.created)
        self.assertEqual(dict(created.secret.data), {})  # never echoed
        self.assertTrue(self.client.apply_secret(
            "py-token", {"token": "s3cret", "raw": b"\x00\x01"},
            labels={"team": "py"}).unchanged)
        got = self.client.get_secret("py-token")
        self.assertEqual(got.type, "Opaque")
        self.assertEqual(got.data["token"], b"s3cret")
        self.assertEqual(got.data["raw"], b"\x00\x01")
        self.assertIn("py-token", [s.metadata.name for s in
                                   self.client.list_secrets(
                                       label_selector="team=py")])
        with self.assertRaises(jobset.ApiError) as caught:
            self.client.apply_secret("py-token", {"token": "x"},
                                     create_only=True)
        self.assertIn("py-token", str(caught.exception))
        with self.assertRaises(jobset.ApiError) as caught:
            self.client.apply_secret("Bad_Name", {"k": "v"})
        self.assertIn("metadata.name", str(caught.exception))
        self.client.delete_secret("py-token")
        with self.assertRaises(jobset.NotFoundError):
            self.client.get_secret("py-token")

        cm = self.client.apply_config_map("py-settings", {"mode": "fast"},
                                          binary_data={"blob": b"\xff"})
        self.assertTrue(cm.created)
        got = self.client.get_config_map("py-settings")
        self.assertEqual(dict(got.data), {"mode": "fast"})
        self.assertEqual(got.binary_data["blob"], b"\xff")
        self.assertEqual([c.metadata.name for c in
                          self.client.list_config_maps()], ["py-settings"])
        self.client.delete_config_map("py-settings")
        self.assertEqual(self.client.list_config_maps(), [])

    def test_kueue_objects(self):
        # kueue-semantics.md §8.1-8.4 as they are.
        manifests = os.environ["KUEUE_MANIFESTS"]
        for name in ("flavors.yaml", "cluster-queue.yaml",
                     "local-queue-and-priority-classes.yaml"):
            for obj, warnings in jobset.load_kueue_manifest(
                    os.path.join(manifests, name)):
                self.assertEqual(warnings, [])
                self.assertTrue(self.client.apply_kueue_object(obj).created)
        self.assertTrue(self.client.apply_kueue_object(obj).unchanged)
        cq = self.client.get_kueue_object("ClusterQueue", "research")
        self.assertEqual(cq.spec.cohort, "ml-org")
        self.assertEqual(cq.spec.queueing_strategy, "BestEffortFIFO")
        self.assertEqual(sorted(f.metadata.name for f in
                                self.client.list_kueue_objects("rf")),
                         ["gpu-h100", "on-demand", "spot"])
        self.assertEqual([q.metadata.name for q in
                          self.client.list_kueue_objects(
                              "LocalQueue", namespace="research")],
                         ["research-queue"])
        self.assertEqual(self.client.list_kueue_objects("LocalQueue"), [])
        self.assertEqual(self.client.get_kueue_object("wpc", "flagship").value,
                         10000)
        # Listed first, then changes (jobsetd may write its status).
        events = [(t, o.metadata.name) for t, o in
                  self.client.watch_kueue_objects("cq", timeout=1)]
        self.assertEqual(events[0], ("ADDED", "research"))
        self.assertEqual({name for _, name in events}, {"research"})
        with self.assertRaises(jobset.InvalidError) as caught:
            self.client.apply_kueue_object({
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "ClusterQueue", "metadata": {"name": "py-bad"},
                "spec": {"queueingStrategy": "Sometimes"}})
        self.assertIn("spec.queueingStrategy", caught.exception.message)
        for kind, name, ns in (("LocalQueue", "research-queue", "research"),
                               ("ClusterQueue", "research", None),
                               ("WorkloadPriorityClass", "flagship", None),
                               ("WorkloadPriorityClass", "experiment", None),
                               ("ResourceFlavor", "on-demand", None),
                               ("ResourceFlavor", "spot", None),
                               ("ResourceFlavor", "gpu-h100", None)):
            self.assertEqual(self.client.delete_kueue_object(
                kind, name, namespace=ns).metadata.name, name)
        with self.assertRaises(jobset.NotFoundError):
            self.client.get_kueue_object("cq", "research")

    def test_unreachable_server_names_the_address(self):
        with jobset.Client("127.0.0.1:1", timeout=5) as client:
            with self.assertRaises(jobset.UnavailableError) as caught:
                client.get("x")
        self.assertIn("127.0.0.1:1", str(caught.exception))

    def test_version_namespaces_rbac_and_missing_objects(self):
        version = self.client.version()
        self.assertRegex(version.git_version, r"^v\d")
        self.assertTrue(version.platform.startswith("linux/"))
        # The client applies no Namespace objects (jobsetctl does): sent
        # here through the service itself.
        ns = jobset_service_pb2.Namespace()
        ns.metadata.name = "py-team"
        ns.metadata.labels["team"] = "py"
        self.client._call("ApplyNamespace",
                          jobset_service_pb2.ApplyNamespaceRequest(
                              namespace=ns))
        self.assertIn("py-team", [n.metadata.name for n in
                                  self.client.list_namespaces()])
        self.assertEqual([n.metadata.name for n in self.client.list_namespaces(
            label_selector="team=py")], ["py-team"])
        self.assertEqual(self.client.get_namespace("py-team")
                         .metadata.labels["team"], "py")
        with self.assertRaises(jobset.NotFoundError):
            self.client.get_namespace("py-none")
        # The built-in roles are there to read.
        self.assertIn("admin", [r.metadata.name for r in
                                self.client.list_rbac("ClusterRole")])
        self.assertIsInstance(self.client.list_rbac("RoleBinding",
                                                    all_namespaces=True),
                              list)
        with self.assertRaises(jobset.NotFoundError) as caught:
            self.client.get_pod("py-no-pod")
        self.assertEqual(caught.exception.message,
                         'pods "py-no-pod" not found')
        with self.assertRaises(jobset.NotFoundError) as caught:
            self.client.get_job("py-no-job")
        self.assertEqual(caught.exception.message,
                         'jobs.batch "py-no-job" not found')
        with self.assertRaises(jobset.NotFoundError):
            self.client.logs("py-no-pod")

    def test_example_launcher(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml",
                                         delete=False) as f:
            import yaml
            yaml.safe_dump(dict(DEADLINE_JOBSET,
                                metadata={"name": "launched"}), f)
        run = subprocess.run(
            [sys.executable, os.environ["LAUNCH_PY"], f.name,
             "--config", self.config, "--timeout", "30"],
            capture_output=True, text=True, timeout=60, check=False)
        # The JobSet fails (no agents, a 1 s deadline): exit 1 with its status.
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("jobset launched created", run.stdout)
        self.assertIn("Failed", run.stdout + run.stderr)


class LogsTest(unittest.TestCase):
    """Logs and single pods and Jobs, with an agent that runs the pods."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        data = os.path.join(cls.tmp, "data")
        cls.process, address = start_jobsetd(data)
        cls.agent = start_agent(address, data, os.path.join(cls.tmp, "node"))
        cls.client = jobset.Client.from_config(
            os.path.join(data, "admin.conf"))
        nodes = poll(cls.client.list_nodes, lambda n: len(n) == 1)
        if len(nodes) != 1:
            cls.tearDownClass()
            raise RuntimeError("the agent did not register")

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        stop(cls.agent)
        stop(cls.process)

    def pod_of(self, name, phases):
        """The pod of JobSet `name`, once its phase is one of `phases`."""
        pods = poll(lambda: self.client.list_pods(name),
                    lambda p: len(p) == 1 and p[0].status.phase in phases)
        self.assertEqual(len(pods), 1)
        self.assertIn(pods[0].status.phase, phases)
        return pods[0]

    def test_logs_whole_tail_and_limits(self):
        self.client.apply(printing_jobset(
            "printer", "for i in 1 2 3 4 5; do echo line $i; done"))
        pod = self.pod_of("printer", ("Succeeded",))
        name = pod.metadata.name
        self.assertEqual(self.client.get_pod(name).status.phase, "Succeeded")
        self.assertEqual(self.client.get_pod(name, jobset="printer").spec
                         .node_name, "node-1")
        # Kubernetes' v1 ContainerStatus, as its Python client reads it.
        main = pod.status.container_statuses[0]
        self.assertEqual(main.state.WhichOneof("state"), "terminated")
        self.assertEqual(main.state.terminated.exit_code, 0)
        self.assertEqual(main.state.terminated.reason, "Completed")
        self.assertEqual(main.image, "busybox")
        self.assertFalse(main.last_state.HasField("terminated"))
        status = jobset.to_dict(pod)["status"]["containerStatuses"][0]
        self.assertEqual(status["state"]["terminated"]["exitCode"], 0)
        self.assertEqual(
            (status["ready"], status["started"], status["restartCount"],
             status["imageID"], status["lastState"]),
            (False, False, 0, "", {}))
        self.assertEqual(self.client.get_job("printer-w-0").metadata.name,
                         "printer-w-0")
        lines = "".join(f"line {i}\n" for i in range(1, 6))
        self.assertEqual(self.client.logs(name), lines)
        self.assertEqual(self.client.logs(name, container="main"), lines)
        self.assertEqual(self.client.logs(name, tail_lines=2),
                         "line 4\nline 5\n")
        self.assertEqual(self.client.logs(name, tail_lines=0), "")
        self.assertEqual(self.client.logs(name, tail_lines=99), lines)
        self.assertEqual(self.client.logs(name, tail_bytes=7), "line 5\n")
        self.assertEqual(self.client.logs(name, limit_bytes=6), "line 1")
        self.assertEqual(
            self.client.logs(name, tail_lines=2, limit_bytes=4), "line")
        with self.assertRaises(jobset.NotFoundError) as caught:
            self.client.logs(name, container="sidecar")
        self.assertIn("its containers: main", caught.exception.message)
        with self.assertRaises(ValueError):
            self.client.logs(name, tail_lines=-1)

    def test_follow_until_the_container_exits(self):
        self.client.apply(printing_jobset(
            "follower", "echo a; echo b; sleep 2; echo c"))
        name = self.pod_of("follower", ("Running", "Succeeded")).metadata.name
        poll(lambda: self.client.logs(name), lambda text: "b" in text)
        start = time.monotonic()
        # The last line there now, then what follows, until the pod ends.
        self.assertEqual(list(self.client.logs(name, follow=True,
                                               tail_lines=1)),
                         ["b\n", "c\n"])
        self.assertGreater(time.monotonic() - start, 0.5)
        self.assertEqual(self.client.get_pod(name).status.phase,
                         "Succeeded")
        self.assertEqual(list(self.client.logs(name, follow=True)),
                         ["a\n", "b\n", "c\n"])
        self.assertEqual(list(self.client.logs(name, follow=True,
                                               limit_bytes=3)),
                         ["a\n", "b"])

    def test_logs_of_an_earlier_attempt(self):
        """Attempt 0 prints and fails, attempt 1 prints and succeeds: the
        current pod's log is attempt 1's, and `previous` (or `attempt=0`)
        reads attempt 0's pod, which the restart erased."""
        spec = printing_jobset(
            "retried", 'echo "attempt-$JOBSET_RESTART_ATTEMPT"; '
            '[ "$JOBSET_RESTART_ATTEMPT" -ge 1 ]')
        spec["spec"]["failurePolicy"] = {"maxRestarts": 1}
        self.client.apply(spec)
        attempt = "jobset.sigs.k8s.io/restart-attempt"
        pods = poll(lambda: self.client.list_pods("retried"),
                    lambda p: len(p) == 1 and
                    p[0].metadata.labels[attempt] == "1" and
                    p[0].status.phase == "Succeeded")
        self.assertEqual(len(pods), 1)
        self.assertEqual(pods[0].metadata.labels[attempt], "1")
        name = pods[0].metadata.name
        self.assertEqual(self.client.logs(name), "attempt-1\n")
        self.assertEqual(self.client.logs(name, attempt=1), "attempt-1\n")
        self.assertEqual(self.client.logs(name, previous=True), "attempt-0\n")
        self.assertEqual(self.client.logs(name, attempt=0), "attempt-0\n")
        lines = list(self.client.logs(name, previous=True, follow=True))
        self.assertEqual(lines, ["attempt-0\n"])
        with self.assertRaises(jobset.ApiError) as caught:
            self.client.logs(name, attempt=5)
        self.assertEqual(caught.exception.code, grpc.StatusCode.OUT_OF_RANGE)
        self.assertIn("has not run", caught.exception.message)
        for bad in ({"attempt": -1}, {"attempt": 0, "previous": True}):
            with self.assertRaises(ValueError):
                self.client.logs(name, **bad)
        self.client.delete("retried")

    def test_a_pod_not_placed_has_no_log_yet(self):
        self.client.apply(printing_jobset("too-big", "true", cpu="64"))
        name = self.pod_of("too-big", ("Pending",)).metadata.name
        with self.assertRaises(jobset.ApiError) as caught:
            self.client.logs(name)
        self.assertEqual(caught.exception.code,
                         grpc.StatusCode.FAILED_PRECONDITION)
        self.client.delete("too-big")


class FailoverTest(unittest.TestCase):
    """A jobsetd killed and started again on its port while calls are
    under way, listed after an address where nothing listens: the calls
    land once it is back, within their timeout."""

    def setUp(self):
        tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        self.data = os.path.join(tmp, "data")
        self.listen = f"127.0.0.1:{free_port()}"
        self.process, _ = start_jobsetd(self.data, self.listen)
        self.addCleanup(lambda: self.process and stop(self.process))
        self.servers = f"https://127.0.0.1:{free_port()},{self.listen}"

    def client(self, timeout=jobset.client.DEFAULT_TIMEOUT):
        client = jobset.Client.from_config(
            os.path.join(self.data, "admin.conf"), server=self.servers,
            timeout=timeout)
        self.addCleanup(client.close)
        return client

    def restart_after(self, seconds):
        """Kills jobsetd now and starts it again after `seconds`."""
        stop(self.process)

        def start():
            self.process, _ = start_jobsetd(self.data, self.listen)
        timer = threading.Timer(seconds, start)
        timer.start()
        self.addCleanup(timer.join)

    def test_a_create_during_the_outage_lands_once(self):
        client = self.client()
        self.assertEqual(client.list(), [])
        self.restart_after(2)
        start = time.monotonic()
        result = client.apply(printing_jobset("during", "true"))
        self.assertEqual([(r.name, r.action) for r in result],
                         [("during", "created")])
        self.assertGreater(time.monotonic() - start, 1.5)
        self.assertEqual([js.metadata.name for js in client.list()],
                         ["during"])
        # Created once: a repeat finds the same JobSet.
        self.assertEqual(client.apply(printing_jobset("during", "true"))[0]
                         .action, "unchanged")
        self.assertEqual(client.create(printing_jobset("during", "true"))
                         .metadata.uid, result[0].jobset.metadata.uid)

    def test_wait_rides_out_a_restart(self):
        client = self.client()
        failing = copy.deepcopy(DEADLINE_JOBSET)
        failing["metadata"] = {"name": "doomed"}
        failing["spec"]["replicatedJobs"][0]["template"]["spec"][
            "activeDeadlineSeconds"] = 3
        client.apply(failing)
        done = []
        waiter = threading.Thread(target=lambda: done.append(
            client.wait("doomed", "Failed", timeout=60)))
        waiter.start()
        time.sleep(0.5)
        self.restart_after(1.5)
        waiter.join(60)
        self.assertEqual([js.status.terminal_state for js in done],
                         ["Failed"])

    def test_a_short_timeout_gives_up_naming_every_replica(self):
        client = self.client(timeout=1)
        stop(self.process)
        self.process = None
        start = time.monotonic()
        with self.assertRaises(jobset.UnavailableError) as caught:
            client.get("x")
        self.assertLess(time.monotonic() - start, 3)
        message = str(caught.exception)
        self.assertIn(f"replicas {self.servers[len('https://'):]}: ",
                      message)
        self.assertIn("Connection refused", message)
        self.assertRegex(message, r"\d+ attempts in")


if __name__ == "__main__":
    unittest.main()
