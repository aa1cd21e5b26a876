"""The Python client against a real jobsetd on 127.0.0.1 (port chosen at
run time). Without agents pods stay pending; a Job with
activeDeadlineSeconds makes a JobSet fail, which gives wait() an ending.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

import grpc

import jobset

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


def start_jobsetd(data_dir):
    """Starts jobsetd; returns (process, address)."""
    process = subprocess.Popen(
        [os.environ["JOBSETD"], "--listen=127.0.0.1:0",
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
        cls.process.kill()  # Only the pid this test started.
        cls.process.wait()

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

    def test_unreachable_server_names_the_address(self):
        with jobset.Client("127.0.0.1:1", timeout=5) as client:
            with self.assertRaises(jobset.UnavailableError) as caught:
                client.get("x")
        self.assertIn("127.0.0.1:1", str(caught.exception))

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


if __name__ == "__main__":
    unittest.main()
