"""The client config file: kubeconfig's shape, as jobsetctl reads it.

Lookup: `path` (one file) > $JOBSETCONFIG (colon-separated, merged
first-wins per name, as KUBECONFIG) > ~/.config/jobset/config when it exists.
Unknown keys are ignored; paths are relative to the file's directory;
*-data fields are base64 PEM. See cli/README.md for the same rules in
jobsetctl.
"""

import base64
import binascii
import ipaddress
import os
import stat
import sys

import yaml

from jobset import replicas as _replicas
from jobset.errors import ConfigError

MAX_CONFIG_BYTES = 1 << 20
DEFAULT_SERVER = "127.0.0.1:7070"


class Connection:
    """How to reach jobsetd, resolved from the config and overrides.

    Attributes:
      address: "host:port" for gRPC, or the replicas' "host:port,host:port"
        (the client finds the one that leads).
      tls: whether to use TLS.
      ca_pem, cert_pem, key_pem: PEM bytes or None.
      server_name: the name to verify the server under (tls-server-name),
        or None.
      token: the bearer token, or "".
      namespace: the context's namespace, or "".
      config_path: the first config file read ("" when none).
    """

    def __init__(self, address, tls=False, ca_pem=None, server_name=None,
                 token="", cert_pem=None, key_pem=None, namespace="",
                 config_path=""):
        self.address = address
        self.tls = tls
        self.ca_pem = ca_pem
        self.server_name = server_name
        self.token = token
        self.cert_pem = cert_pem
        self.key_pem = key_pem
        self.namespace = namespace
        self.config_path = config_path

    def __repr__(self):
        return (f"Connection({self.address!r}, tls={self.tls}, "
                f"server_name={self.server_name!r})")


def config_files(path=None, environ=None):
    """Returns the files to read, first first (may be empty)."""
    environ = os.environ if environ is None else environ
    if path:
        return [path]
    env = environ.get("JOBSETCONFIG", "")
    if env:
        return [p for p in env.split(":") if p]
    home = environ.get("HOME", "")
    if home:
        default = os.path.join(home, ".config", "jobset", "config")
        if os.path.exists(default):
            return [default]
    return []


def _read_bounded(path, what):
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"cannot read {what} {path!r}: {e.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{what} {path!r} is larger than {MAX_CONFIG_BYTES} bytes")
    return data


def _string(body, key, where):
    value = body.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        raise ConfigError(f"{where}.{key}: must be a string")
    return str(value)


def _entries(root, key, body_key, path):
    """Yields (name, body, where) for the list `key`."""
    entries = root.get(key)
    if entries is None:
        return
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: {key} must be a list")
    for i, entry in enumerate(entries):
        where = f"{path}: {key}[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: must be a mapping")
        name = _string(entry, "name", where)
        if not name:
            raise ConfigError(f"{where}: has no name")
        body = entry.get(body_key)
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise ConfigError(f"{where}.{body_key}: must be a mapping")
        yield name, body, f'{path}: {key[:-1]} "{name}"'


def parse(text, path):
    """Parses one config file's text; `path` names it and is the base of
    relative paths. Returns a dict with clusters, users, contexts (dicts by
    name), current_context and files."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        root = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path} is not valid YAML: {e}") from None
    config = {"clusters": {}, "users": {}, "contexts": {},
              "current_context": "", "files": [path]}
    if root is None:
        return config
    if not isinstance(root, dict):
        raise ConfigError(f"{path}: must be a mapping (kind: Config)")
    kind = _string(root, "kind", path)
    if kind and kind != "Config":
        raise ConfigError(f'{path}: kind must be Config, got "{kind}"')
    config["current_context"] = _string(root, "current-context", path)
    base = os.path.dirname(path)

    def rel(p):
        return os.path.join(base, p) if p and not os.path.isabs(p) else p

    for name, body, where in _entries(root, "clusters", "cluster", path):
        skip = body.get("insecure-skip-tls-verify", False)
        if not isinstance(skip, bool):
            raise ConfigError(
                f"{where}.insecure-skip-tls-verify: must be true or false")
        config["clusters"].setdefault(name, {
            "server": _string(body, "server", where),
            "certificate-authority":
                rel(_string(body, "certificate-authority", where)),
            "certificate-authority-data":
                _string(body, "certificate-authority-data", where),
            "tls-server-name": _string(body, "tls-server-name", where),
            "insecure-skip-tls-verify": skip,
        })
    for name, body, where in _entries(root, "users", "user", path):
        config["users"].setdefault(name, {
            "token": _string(body, "token", where),
            "tokenFile": rel(_string(body, "tokenFile", where)),
            "client-certificate":
                rel(_string(body, "client-certificate", where)),
            "client-certificate-data":
                _string(body, "client-certificate-data", where),
            "client-key": rel(_string(body, "client-key", where)),
            "client-key-data": _string(body, "client-key-data", where),
        })
    for name, body, where in _entries(root, "contexts", "context", path):
        config["contexts"].setdefault(name, {
            "cluster": _string(body, "cluster", where),
            "user": _string(body, "user", where),
            "namespace": _string(body, "namespace", where),
        })
    return config


def load(files, explicit=False, warn=None):
    """Reads and merges `files` first-wins. With `explicit` (a path given),
    a missing file is an error; else missing files are skipped. `warn`
    (default: stderr) gets a line for each group/world-readable file."""
    warn = warn or (lambda line: print(line, file=sys.stderr))
    merged = {"clusters": {}, "users": {}, "contexts": {},
              "current_context": "", "files": []}
    for path in files:
        try:
            mode = os.stat(path).st_mode
        except OSError as e:
            if explicit:
                raise ConfigError(
                    f"cannot read config {path!r}: {e.strerror}") from None
            continue
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            warn(f"Warning: {path} is readable by group or others; it may "
                 "hold credentials (chmod 600 it)")
        one = parse(_read_bounded(path, "config").decode("utf-8", "replace"),
                    path)
        merged["files"].append(path)
        for key in ("clusters", "users", "contexts"):
            for name, value in one[key].items():
                merged[key].setdefault(name, value)
        if not merged["current_context"]:
            merged["current_context"] = one["current_context"]
    return merged


def _split_server(server):
    """Splits "https://host:port" into scheme ("" when none) and host:port. A
    list of replicas ("https://a:7070,https://b:7070", or
    "https://a:7070,b:7070") gives the addresses comma-separated; every entry
    must have the first one's scheme, or none. A trailing "/" is dropped."""
    scheme = ""
    addresses = []
    for i, entry in enumerate(server.split(",")):
        entry_scheme = ""
        if "://" in entry:
            entry_scheme, entry = entry.split("://", 1)
            entry_scheme = entry_scheme.lower()
        if i == 0:
            scheme = entry_scheme
        elif entry_scheme and entry_scheme != scheme:
            raise ConfigError(
                f'server "{server}": every replica\'s address must use the '
                f"first one's scheme ({scheme or 'none'})")
        addresses.append(entry.rstrip("/"))
    return scheme, ",".join(addresses)


def _all_loopback(addresses):
    """Whether every address of a comma-separated list is on this host."""
    return all(is_loopback(_host(a)) for a in addresses.split(","))


def _host(address):
    if address.startswith("["):
        return address[1:].split("]", 1)[0]
    if address.count(":") == 1:
        return address.split(":", 1)[0]
    return address


def is_loopback(host):
    """Whether `host` is a loopback address or "localhost"."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _decode(data, field, owner):
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{field} of {owner} is not base64") from None


def _data_or_file(data, path, field, owner):
    if data:
        return _decode(data, field, owner)
    if path:
        return _read_bounded(path, f"{field[:-len('-data')]} of {owner}")
    return None


def _refuse_token_in_plaintext(tls, token, server):
    """Refuses a bearer token over plaintext: read off the wire, it is the
    user. A plaintext jobsetd (--insecure, loopback only) takes every caller
    as cluster-admin and needs no token."""
    if token and not tls:
        raise ConfigError(
            f"server {server!r}: a bearer token is only sent over TLS; use "
            "https:// (or no scheme), or leave the token out for a plaintext "
            "jobsetd --insecure")


def resolve(config, context=None, server=None, token=None, namespace=None):
    """Returns the Connection of `context` (default: current-context), with
    the given overrides. With no config file read and no context, `server`
    (default 127.0.0.1:7070) is the server. A server without a scheme is TLS;
    http:// is plaintext, loopback only, and refused with a bearer token: a
    token is only ever sent over TLS."""
    if not config["files"] and context is None:
        server = server or DEFAULT_SERVER
        scheme, address = _split_server(server)
        if scheme == "http" and not _all_loopback(address):
            raise ConfigError(
                f"server {server!r}: http:// (plaintext) is only allowed to a "
                "loopback address (jobsetd --insecure); use https://")
        if scheme not in ("", "http", "https"):
            raise ConfigError(
                f"server {server!r}: the scheme must be https:// or http://")
        _replicas.parse("server", address)
        tls = scheme != "http"
        _refuse_token_in_plaintext(tls, token, server)
        return Connection(address, tls=tls,
                          server_name="server.jobsetd" if tls else None,
                          token=token or "", namespace=namespace or "")
    file = config["files"][0] if config["files"] else "the config"
    name = context or config["current_context"]
    if not name:
        raise ConfigError(f"no current-context in {file}; pass context=")
    ctx = config["contexts"].get(name)
    if ctx is None:
        raise ConfigError(f"context '{name}' not found in {file}")
    cluster = {}
    if ctx["cluster"]:
        cluster = config["clusters"].get(ctx["cluster"])
        if cluster is None:
            raise ConfigError(f"cluster '{ctx['cluster']}' (of context "
                              f"'{name}') not found in {file}")
    elif server is None:
        raise ConfigError(f"context '{name}' names no cluster in {file}")
    user = {}
    if ctx["user"]:
        user = config["users"].get(ctx["user"])
        if user is None:
            raise ConfigError(f"user '{ctx['user']}' (of context '{name}') "
                              f"not found in {file}")
    cluster_owner = f"cluster '{ctx['cluster']}'"
    user_owner = f"user '{ctx['user']}'"
    server = server or cluster.get("server", "")
    if not server:
        raise ConfigError(f"{cluster_owner} has no server in {file}")
    scheme, address = _split_server(server)
    if not address:
        raise ConfigError(f"server {server!r} has no host:port")
    _replicas.parse("server", address)
    loopback = _all_loopback(address)
    ca = _data_or_file(cluster.get("certificate-authority-data", ""),
                       cluster.get("certificate-authority", ""),
                       "certificate-authority-data", cluster_owner)
    if scheme == "https":
        tls = True
    elif scheme == "http":
        if not loopback:
            raise ConfigError(
                f"server {server!r}: http:// (plaintext) is only allowed to a "
                "loopback address (jobsetd --insecure); use https://")
        tls = False
    elif scheme == "":
        # As the issue asks (client-go would pick http:// without a CA): a
        # bare host:port is TLS, so a token never goes in plaintext.
        tls = True
    else:
        raise ConfigError(
            f"server {server!r}: the scheme must be https:// or http://")
    if cluster.get("insecure-skip-tls-verify"):
        if not loopback:
            raise ConfigError(
                f"insecure-skip-tls-verify of {cluster_owner} is only allowed "
                f"for a loopback server, not {server!r}")
        # python3-grpcio cannot skip verification; refuse rather than
        # pretend.
        raise ConfigError(
            f"insecure-skip-tls-verify of {cluster_owner} is not supported by "
            "the Python client; set certificate-authority-data")
    if token is None:
        token = user.get("token", "")
        if not token and user.get("tokenFile"):
            token = _read_bounded(user["tokenFile"],
                                  f"tokenFile of {user_owner}").decode().strip()
    _refuse_token_in_plaintext(tls, token, server)
    cert = _data_or_file(user.get("client-certificate-data", ""),
                         user.get("client-certificate", ""),
                         "client-certificate-data", user_owner)
    key = _data_or_file(user.get("client-key-data", ""),
                        user.get("client-key", ""), "client-key-data",
                        user_owner)
    if (cert is None) != (key is None):
        raise ConfigError(f"{user_owner} needs both a client certificate and "
                          "a client key, or neither")
    return Connection(address, tls=tls, ca_pem=ca,
                      server_name=cluster.get("tls-server-name") or None,
                      token=token or "", cert_pem=cert, key_pem=key,
                      namespace=namespace or ctx["namespace"],
                      config_path=config["files"][0] if config["files"] else "")
