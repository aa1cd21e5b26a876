"""Tests of jobset.config (the kubeconfig-shaped client file) and of
Client.from_config against in-process AccessService servers, plaintext and
TLS (certificates made with the openssl command)."""

import base64
import os
import shutil
import socket
import subprocess
import tempfile
import unittest
from concurrent import futures

import grpc

import jobset
from jobset import config
from proto import auth_pb2
from proto import auth_pb2_grpc

ADMIN_CONF = """apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: jobsetd
  cluster:
    server: https://10.0.0.5:7070
    certificate-authority-data: Q0EgUEVN
    tls-server-name: server.jobsetd
users:
- name: admin
  user: {token: abc.def}
- name: bob
  user: {tokenFile: bob-token}
contexts:
- name: admin@jobsetd
  context: {cluster: jobsetd, user: admin, namespace: default}
- name: bob@jobsetd
  context: {cluster: jobsetd, user: bob, namespace: team-b}
- name: lost
  context: {cluster: nowhere}
current-context: admin@jobsetd
"""


class ParseTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, text, mode=0o600):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def test_resolves_the_current_context(self):
        conn = config.resolve(config.parse(ADMIN_CONF, "/x/admin.conf"))
        self.assertEqual(conn.address, "10.0.0.5:7070")
        self.assertTrue(conn.tls)
        self.assertEqual(conn.ca_pem, b"CA PEM")
        self.assertEqual(conn.server_name, "server.jobsetd")
        self.assertEqual(conn.token, "abc.def")
        self.assertEqual(conn.namespace, "default")

    def test_token_file_is_relative_and_overrides_win(self):
        self.write("bob-token", "bob.secret\n")
        path = self.write("config", ADMIN_CONF)
        cfg = config.load([path], explicit=True)
        conn = config.resolve(cfg, context="bob@jobsetd")
        self.assertEqual(conn.token, "bob.secret")
        self.assertEqual(conn.namespace, "team-b")
        conn = config.resolve(cfg, context="bob@jobsetd", token="t.s",
                              namespace="ns", server="https://127.0.0.1:1")
        self.assertEqual((conn.token, conn.namespace, conn.address),
                         ("t.s", "ns", "127.0.0.1:1"))

    def test_errors_say_what_is_wrong(self):
        cfg = config.parse(ADMIN_CONF, "f.conf")
        with self.assertRaisesRegex(jobset.ConfigError,
                                    "context 'x' not found in f.conf"):
            config.resolve(cfg, context="x")
        with self.assertRaisesRegex(jobset.ConfigError,
                                    "cluster 'nowhere' .of context 'lost'. "
                                    "not found"):
            config.resolve(cfg, context="lost")
        cfg["current_context"] = ""
        with self.assertRaisesRegex(jobset.ConfigError, "no current-context"):
            config.resolve(cfg)
        bad = config.parse(
            "clusters:\n- name: c\n  cluster: {server: 'https://h:1', "
            "certificate-authority-data: '!!'}\ncontexts:\n"
            "- {name: x, context: {cluster: c}}\ncurrent-context: x\n", "f")
        with self.assertRaisesRegex(jobset.ConfigError,
                                    "certificate-authority-data of cluster "
                                    "'c' is not base64"):
            config.resolve(bad)
        for text, message in [("clusters: {a: b}", "must be a list"),
                              ("clusters:\n- cluster: {}", "has no name"),
                              ("users:\n- {name: u, user: {token: [1]}}",
                               'user "u".token: must be a string'),
                              ("a: [", "not valid YAML"),
                              ("kind: Pod", "kind must be Config")]:
            with self.assertRaisesRegex(jobset.ConfigError, message):
                config.parse(text, "f")

    def test_schemes(self):
        def one(server, ca="", skip=False):
            return {"files": ["f"], "current_context": "x",
                    "contexts": {"x": {"cluster": "c", "user": "",
                                       "namespace": ""}},
                    "users": {},
                    "clusters": {"c": {
                        "server": server, "certificate-authority": "",
                        "certificate-authority-data": ca,
                        "tls-server-name": "",
                        "insecure-skip-tls-verify": skip}}}
        self.assertFalse(config.resolve(one("http://127.0.0.1:1")).tls)
        with self.assertRaisesRegex(jobset.ConfigError, "loopback"):
            config.resolve(one("http://10.0.0.1:1"))
        self.assertTrue(config.resolve(one("h:1", ca="Q0E=")).tls)
        # No scheme means TLS, CA or not (the system's roots then).
        self.assertTrue(config.resolve(one("h:1")).tls)
        with self.assertRaisesRegex(jobset.ConfigError, "loopback"):
            config.resolve(one("https://h:1", skip=True))
        with self.assertRaisesRegex(jobset.ConfigError, "https:// or http://"):
            config.resolve(one("ftp://h:1"))

    def test_server_lists(self):
        def one(server):
            return {"files": ["f"], "current_context": "x",
                    "contexts": {"x": {"cluster": "c", "user": "",
                                       "namespace": ""}},
                    "users": {},
                    "clusters": {"c": {
                        "server": server, "certificate-authority": "",
                        "certificate-authority-data": "",
                        "tls-server-name": "",
                        "insecure-skip-tls-verify": False}}}
        conn = config.resolve(one("https://a:7070/,HTTPS://b:7070,c:7070/"))
        self.assertEqual(conn.address, "a:7070,b:7070,c:7070")
        self.assertTrue(conn.tls)
        conn = config.resolve(one("http://127.0.0.1:1,localhost:2,[::1]:3"))
        self.assertEqual(conn.address, "127.0.0.1:1,localhost:2,[::1]:3")
        self.assertFalse(conn.tls)
        with self.assertRaisesRegex(
                jobset.ConfigError,
                'server "https://a:1,http://b:1": every replica\'s address '
                "must use the first one's scheme .https."):
            config.resolve(one("https://a:1,http://b:1"))
        with self.assertRaisesRegex(jobset.ConfigError, "scheme .none."):
            config.resolve(one("a:1,https://b:1"))
        with self.assertRaisesRegex(jobset.ConfigError, "loopback"):
            config.resolve(one("http://127.0.0.1:1,10.0.0.1:2"))
        with self.assertRaisesRegex(
                jobset.ConfigError,
                'server=a:1,,b:2: entry 1 "" is empty'):
            config.resolve(one("https://a:1,,b:2"))
        with self.assertRaisesRegex(jobset.ConfigError,
                                    'entry 0 "a" is not HOST:PORT'):
            config.resolve(one("https://a"))
        # server= overrides, with and without a config file.
        conn = config.resolve(one("https://a:1"), server="https://b:1,c:1")
        self.assertEqual(conn.address, "b:1,c:1")
        conn = config.resolve(config.load([]),
                              server="http://127.0.0.1:1,localhost:2")
        self.assertEqual((conn.address, conn.tls),
                         ("127.0.0.1:1,localhost:2", False))
        with self.assertRaisesRegex(jobset.ConfigError, "loopback"):
            config.resolve(config.load([]),
                           server="http://127.0.0.1:1,10.0.0.1:2")
        with self.assertRaisesRegex(jobset.ConfigError, "first one's scheme"):
            config.resolve(config.load([]), server="http://127.0.0.1:1,"
                           "https://127.0.0.1:2")
        with self.assertRaisesRegex(jobset.ConfigError, "entry 1"):
            config.resolve(config.load([]), server="127.0.0.1:1,x:99999")

    def test_lookup_and_merge(self):
        a = self.write("a", "contexts:\n- {name: x, context: {cluster: a}}\n"
                       "current-context: x\n", mode=0o644)
        b = self.write("b", "contexts:\n- {name: x, context: {cluster: b}}\n"
                       "- {name: y, context: {cluster: b}}\n"
                       "current-context: y\n")
        files = config.config_files(
            environ={"JOBSETCONFIG": f"{a}::{b}:/nonexistent"})
        warnings = []
        cfg = config.load(files, warn=warnings.append)
        self.assertEqual(cfg["current_context"], "x")
        self.assertEqual(cfg["contexts"]["x"]["cluster"], "a")
        self.assertIn("y", cfg["contexts"])
        self.assertEqual(len(warnings), 1)
        self.assertIn(a, warnings[0])
        with self.assertRaisesRegex(jobset.ConfigError, "/nonexistent"):
            config.load(["/nonexistent"], explicit=True)
        self.assertEqual(config.config_files("p", {"JOBSETCONFIG": "q"}),
                         ["p"])
        self.assertEqual(config.config_files(environ={"HOME": self.dir}), [])

    def test_no_file_a_bare_server_is_tls(self):
        conn = config.resolve(config.load([]), server="127.0.0.1:5")
        self.assertTrue(conn.tls)
        self.assertEqual(conn.server_name, "server.jobsetd")
        self.assertEqual(conn.address, "127.0.0.1:5")
        self.assertTrue(config.resolve(config.load([])).tls)
        conn = config.resolve(config.load([]), server="http://127.0.0.1:5")
        self.assertFalse(conn.tls)
        with self.assertRaisesRegex(jobset.ConfigError, "loopback"):
            config.resolve(config.load([]), server="http://10.0.0.1:5")
        self.assertTrue(
            config.resolve(config.load([]), server="https://10.0.0.1:5").tls)

    def test_a_token_is_refused_in_plaintext(self):
        with self.assertRaisesRegex(
                jobset.ConfigError,
                "server 'http://127.0.0.1:5': a bearer token is only sent "
                "over TLS"):
            config.resolve(config.load([]), server="http://127.0.0.1:5",
                           token="t.s")
        cfg = config.parse(
            "clusters:\n- {name: c, cluster: {server: 'http://127.0.0.1:1'}}\n"
            "users:\n- {name: u, user: {token: t.s}}\n"
            "contexts:\n- {name: x, context: {cluster: c, user: u}}\n"
            "current-context: x\n", "/x/c.conf")
        with self.assertRaisesRegex(jobset.ConfigError, "only sent over TLS"):
            config.resolve(cfg)
        with self.assertRaisesRegex(jobset.ConfigError, "only sent over TLS"):
            config.resolve(cfg, token="other.token")
        # Over TLS the same token is fine.
        conn = config.resolve(cfg, server="127.0.0.1:1")
        self.assertTrue(conn.tls)
        self.assertEqual(conn.token, "t.s")
        # A Connection made by hand is refused by the Client too.
        with self.assertRaisesRegex(jobset.ConfigError, "only sent over TLS"):
            jobset.Client(connection=config.Connection("127.0.0.1:1",
                                                       token="t.s"))


class FakeAccess(auth_pb2_grpc.AccessServiceServicer):
    """Answers ReviewAccess with allowed = (verb == "get"), remembering the
    authorization metadata; refuses "Bearer bad.token" and "weak.token"."""

    def __init__(self):
        self.authorization = None
        self.review = None

    def ReviewAccess(self, request, context):
        self.authorization = dict(context.invocation_metadata()).get(
            "authorization")
        self.review = request
        if self.authorization == "Bearer bad.token":
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          "invalid bearer token")
        if self.authorization == "Bearer weak.token":
            context.abort(grpc.StatusCode.PERMISSION_DENIED,
                          'User "bob" cannot get resource "jobsets"')
        return auth_pb2.AccessReviewResult(allowed=request.verb == "get")

    def CreateToken(self, request, context):
        return auth_pb2.CreateTokenResponse(token="id.secret")


def serve(credentials=None):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    access = FakeAccess()
    auth_pb2_grpc.add_AccessServiceServicer_to_server(access, server)
    if credentials is None:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    return server, access, port


class FromConfigTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write_config(self, text):
        path = os.path.join(self.dir, "config")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o600)
        return path

    def test_plaintext_sends_no_token(self):
        server, access, port = serve()
        try:
            path = self.write_config(f"""
clusters:
- {{name: local, cluster: {{server: "http://127.0.0.1:{port}"}}}}
users:
- {{name: u, user: {{token: my.token}}}}
- {{name: nobody, user: {{}}}}
contexts:
- {{name: c, context: {{cluster: local, user: u, namespace: team}}}}
- {{name: n, context: {{cluster: local, user: nobody, namespace: team}}}}
current-context: c
""")
            with self.assertRaisesRegex(jobset.ConfigError,
                                        "only sent over TLS"):
                jobset.Client.from_config(path)
            self.assertIsNone(access.authorization)
            with jobset.Client.from_config(path, context="n") as client:
                self.assertTrue(client.can_i("get", "jobsets.jobset.x-k8s.io"))
                self.assertIsNone(access.authorization)
                self.assertEqual(access.review.namespace, "team")
                self.assertEqual(access.review.api_group, "jobset.x-k8s.io")
                self.assertFalse(client.can_i("delete", "pods/log",
                                              all_namespaces=True))
                self.assertEqual(access.review.resource, "pods/log")
                self.assertEqual(client.create_token("alice"), "id.secret")
            with self.assertRaisesRegex(jobset.ConfigError, "context 'x'"):
                jobset.Client.from_config(path, context="x")
        finally:
            server.stop(None)

    def test_a_server_list_passes_over_an_unreachable_replica(self):
        server, access, port = serve()
        try:
            with socket.socket() as s:  # A port nothing listens on.
                s.bind(("127.0.0.1", 0))
                closed = s.getsockname()[1]
            path = self.write_config(f"""
clusters:
- {{name: local, cluster: {{server: "http://127.0.0.1:{closed},127.0.0.1:{port}/"}}}}
contexts:
- {{name: c, context: {{cluster: local}}}}
current-context: c
""")
            with jobset.Client.from_config(path, timeout=5) as client:
                self.assertEqual(client.addresses,
                                 [f"127.0.0.1:{closed}", f"127.0.0.1:{port}"])
                self.assertTrue(client.can_i("get", "jobsets"))
                self.assertEqual(client.address, f"127.0.0.1:{port}")
        finally:
            server.stop(None)

    @unittest.skipUnless(shutil.which("openssl"), "needs openssl")
    def test_tls_with_ca_server_name_and_token(self):
        def run(*args):
            subprocess.run(["openssl", *args], cwd=self.dir, check=True,
                           capture_output=True)
        run("req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "1", "-subj", "/CN=test-ca")
        run("req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "other.key",
            "-out", "other.pem", "-days", "1", "-subj", "/CN=other-ca")
        run("req", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=server.jobsetd")
        with open(os.path.join(self.dir, "ext"), "w") as f:
            f.write("subjectAltName=DNS:server.jobsetd\n")
        run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey",
            "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "1",
            "-extfile", "ext")

        def read(name):
            with open(os.path.join(self.dir, name), "rb") as f:
                return f.read()
        creds = grpc.ssl_server_credentials(
            [(read("server.key"), read("server.pem"))])
        server, access, port = serve(creds)
        try:
            ca = base64.b64encode(read("ca.pem")).decode()
            path = self.write_config(f"""
clusters:
- name: tls
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority-data: {ca}
    tls-server-name: server.jobsetd
- name: wrong-ca
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority: other.pem
    tls-server-name: server.jobsetd
users:
- {{name: u, user: {{token: tls.token}}}}
contexts:
- {{name: c, context: {{cluster: tls, user: u}}}}
- {{name: w, context: {{cluster: wrong-ca, user: u}}}}
current-context: c
""")
            with jobset.Client.from_config(path) as client:
                self.assertTrue(client.connection.tls)
                self.assertTrue(client.can_i("get", "jobsets"))
                self.assertEqual(access.authorization, "Bearer tls.token")
            with jobset.Client.from_config(path, token="bad.token") as client:
                with self.assertRaisesRegex(jobset.Unauthenticated,
                                            "refused the credentials"):
                    client.can_i("get", "jobsets")
            with jobset.Client.from_config(path, token="weak.token") as client:
                with self.assertRaises(jobset.Forbidden) as e:
                    client.can_i("get", "jobsets")
                self.assertEqual(e.exception.message,
                                 'User "bob" cannot get resource "jobsets"')
            with jobset.Client.from_config(path, context="w",
                                           timeout=5) as client:
                with self.assertRaisesRegex(jobset.UnavailableError,
                                            "TLS handshake failed"):
                    client.can_i("get", "jobsets")
        finally:
            server.stop(None)


if __name__ == "__main__":
    unittest.main()
