"""Client: jobsetd's JobSet API for Python programs (training launchers)."""

import collections
import logging
import os
import threading
import time

import grpc
from google.protobuf import json_format

from google.protobuf import duration_pb2

from jobset import config as _config
from jobset import manifest as _manifest
from jobset import replicas as _replicas
from jobset.errors import (ApiError, ConditionNotMetError, NotFoundError,
                           WaitTimeoutError, from_rpc_error)
from proto import agent_pb2
from proto import agent_pb2_grpc
from proto import auth_pb2
from proto import auth_pb2_grpc
from proto import jobset_service_pb2 as service_pb2
from proto import jobset_service_pb2_grpc as service_grpc

DEFAULT_SERVER = "127.0.0.1:7070"
# Lists are read page by page (jobsetd sends at most 10,000 items, about
# 2 MiB, a page); the last two bound the loop whatever the server answers.
_PAGE_SIZE = 1000
_MAX_PAGES = 100_000
_MAX_RESTARTS = 3
# Channels kept open, by address (the replicas and the leaders they named);
# past this many the least recently used one is closed.
_MAX_CHANNELS = 2 * _replicas.MAX_ADDRESSES
_log = logging.getLogger("jobset")


class ApplyResult:
    """What apply() did with one JobSet of a manifest.

    Attributes:
      name: the JobSet's name.
      action: "created", "configured" or "unchanged".
      jobset: the JobSet as jobsetd stored it (or would, with dry_run).
      warnings: fields jobsetd accepted without acting on them, and the
        warnings jobsetd returned at create (a namespace's Pod Security warn
        level).
    """

    def __init__(self, name, action, jobset, warnings):
        self.name = name
        self.action = action
        self.jobset = jobset
        self.warnings = warnings

    def __repr__(self):
        return f"ApplyResult({self.name!r}, {self.action!r})"


def to_dict(message):
    """Returns a proto (a JobSet, Pod, ...) as a dict in upstream JSON shape."""
    return json_format.MessageToDict(message)


def condition(jobset, condition_type):
    """Returns the JobSet's condition of `condition_type`, or None."""
    for c in jobset.status.conditions:
        if c.type == condition_type:
            return c
    return None


class Client:
    """A connection to jobsetd.

    Every call has a deadline (`timeout` seconds) and raises ApiError (or a
    subclass: NotFoundError, InvalidError, UnavailableError) carrying the
    gRPC code and jobsetd's message. The list methods read every page
    (`page_size` items a request, at most 10,000) and return them together.
    Use as a context manager, or close(). Thread-safe.

    The address may be a list of jobsetd's replicas ("a:7070,b:7070"): a
    call goes to the current one (at first the first); when a follower
    answers UNAVAILABLE naming the leader (trailing metadata
    `jobsetd-leader`) the call is sent there at once (at most len(list) + 1
    redirects in a row), and when a replica cannot be reached the next one
    is tried (each once a call). A call that runs out of time is not
    repeated, but the next one goes to the next replica. `timeout` bounds
    the whole call, whichever replicas it takes.

        with jobset.Client("127.0.0.1:7070") as client:
            client.apply("train.yaml")
            client.wait("train", "Completed", timeout=3600)
    """

    def __init__(self, address=None, namespace="default", timeout=10.0,
                 page_size=_PAGE_SIZE, connection=None):
        if connection is None:
            # Plaintext, as before TLS (jobsetd --insecure).
            connection = _config.Connection(
                address or os.environ.get("JOBSET_SERVER") or DEFAULT_SERVER)
        self.connection = connection
        # ConfigError (a ValueError) unless "HOST:PORT[,HOST:PORT...]".
        self._replicas = _replicas.Replicas(
            _replicas.parse("server", connection.address))
        self.namespace = namespace
        self.timeout = timeout
        self.page_size = page_size
        # Plaintext carries the token as metadata; TLS as call credentials.
        self._metadata = None
        if connection.token and not connection.tls:
            self._metadata = (("authorization",
                               f"Bearer {connection.token}"),)
        self._lock = threading.Lock()
        self._stubs = collections.OrderedDict()  # address -> _Stubs
        self._closed = False
        self._current_stubs()

    @property
    def address(self):
        """The address calls go to now (the leader, once one answered)."""
        return self._replicas.current()

    @property
    def addresses(self):
        """Every replica's address, as given."""
        return list(self._replicas.addresses)

    @classmethod
    def from_config(cls, path=None, context=None, namespace=None,
                    timeout=10.0, server=None, token=None,
                    page_size=_PAGE_SIZE):
        """A Client as jobsetctl would connect: the config file `path` (else
        $JOBSETCONFIG, else ~/.config/jobset/config), its `context` (else
        current-context); `server`, `token` and `namespace` override the
        context's. With no config file found, `server` (else
        $JOBSET_SERVER, else 127.0.0.1:7070) in plaintext. Raises
        ConfigError when the config cannot be used."""
        files = _config.config_files(path)
        config = _config.load(files, explicit=bool(path))
        if server is None:
            server = os.environ.get("JOBSET_SERVER") or None
        connection = _config.resolve(config, context=context, server=server,
                                     token=token, namespace=namespace)
        return cls(namespace=connection.namespace or "default",
                   timeout=timeout, page_size=page_size,
                   connection=connection)

    def close(self):
        with self._lock:
            self._closed = True
            stubs, self._stubs = list(self._stubs.values()), \
                collections.OrderedDict()
        for s in stubs:
            s.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _current_stubs(self):
        """The stubs of the current address: its channel is made when the
        address becomes current, and kept for when it is again."""
        address = self._replicas.current()
        with self._lock:
            stubs = self._stubs.get(address)
            if stubs is not None:
                self._stubs.move_to_end(address)
                return stubs
            if self._closed:
                raise ValueError("the jobset.Client is closed")
            stubs = _Stubs(address, _channel(self.connection, address))
            self._stubs[address] = stubs
            retired = []
            while len(self._stubs) > _MAX_CHANNELS:
                retired.append(self._stubs.popitem(last=False)[1])
        for old in retired:
            old.channel.close()
        return stubs

    def _try_again(self, error, unreachable):
        """After a failed attempt (`error`, a grpc.RpcError; `unreachable` a
        one-item list counting the replicas that could not be reached this
        call): whether to send the call again, to the new current()."""
        code = error.code()
        outcome = self._replicas.after(code,
                                       _replicas.redirected_leader(error))
        if outcome == _replicas.REDIRECTED:
            return True  # A follower did nothing and named the leader.
        if outcome == _replicas.GIVE_UP:
            return False
        # A replica that could not be reached: each of the others once.
        if code != grpc.StatusCode.UNAVAILABLE:
            return False
        unreachable[0] += 1
        return unreachable[0] < len(self._replicas)

    def _call(self, method, request, stub="jobsets"):
        # One deadline for the call, whichever replicas it takes to answer.
        deadline = (None if self.timeout is None
                    else time.monotonic() + self.timeout)
        unreachable = [0]
        while True:
            stubs = self._current_stubs()
            rpc = getattr(getattr(stubs, stub), method)
            try:
                response = rpc(request, timeout=_remaining(deadline),
                               metadata=self._metadata)
            except grpc.RpcError as e:
                if self._try_again(e, unreachable):
                    continue
                raise self._error(e, method, stubs.address) from None
            self._replicas.reached()
            return response

    def _error(self, error, method, address=None):
        return from_rpc_error(error, address or self.address, method,
                              tls=self.connection.tls,
                              config_path=self.connection.config_path)

    def _ns(self, namespace):
        return namespace or self.namespace

    # ---- JobSets ----

    def apply(self, manifest, namespace=None, dry_run=False):
        """Creates or updates the JobSets of `manifest`.

        `manifest` is a dict (an upstream JobSet), a list of them, YAML or
        JSON text (several documents allowed) or a file path. A JobSet that
        exists is updated (labels, annotations, spec). Returns a list of
        ApplyResult; raises ManifestError before anything is sent when the
        manifest cannot be read, ApiError when jobsetd refuses a JobSet.
        """
        results = []
        for jobset, warnings in _manifest.load(manifest):
            for warning in warnings:
                _log.warning("jobset %s: %s", jobset.metadata.name, warning)
            if not jobset.metadata.namespace:
                jobset.metadata.namespace = self._ns(namespace)
            results.append(self._apply_one(jobset, warnings, dry_run))
        return results

    def _apply_one(self, jobset, warnings, dry_run):
        existing = None
        if jobset.metadata.name:
            try:
                existing = self.get(jobset.metadata.name,
                                    jobset.metadata.namespace)
            except NotFoundError:
                pass
        if existing is None:
            response = self._call("CreateJobSet", service_pb2.CreateJobSetRequest(
                jobset=jobset, dry_run=dry_run))
            # jobsetd's own warnings (a namespace's Pod Security warn level).
            for warning in response.warnings:
                _log.warning("jobset %s: %s", response.jobset.metadata.name,
                             warning)
            warnings = list(warnings) + list(response.warnings)
            return ApplyResult(response.jobset.metadata.name,
                               "created" if response.created else "unchanged",
                               response.jobset, warnings)
        updated = self._call("UpdateJobSet", service_pb2.UpdateJobSetRequest(
            jobset=jobset, dry_run=dry_run))
        # What apply owns: labels, annotations and spec (the controller may
        # have written status meanwhile).
        same = (updated.spec == existing.spec and
                dict(updated.metadata.labels) == dict(existing.metadata.labels) and
                dict(updated.metadata.annotations) ==
                dict(existing.metadata.annotations))
        action = "unchanged" if same else "configured"
        return ApplyResult(updated.metadata.name, action, updated, warnings)

    def create(self, jobset, dry_run=False):
        """Creates a JobSet (a proto or a dict); returns it as stored."""
        if isinstance(jobset, dict):
            jobset, _ = _manifest.jobset_from_dict(jobset)
        if not jobset.metadata.namespace:
            jobset.metadata.namespace = self.namespace
        return self._call("CreateJobSet", service_pb2.CreateJobSetRequest(
            jobset=jobset, dry_run=dry_run)).jobset

    def get(self, name, namespace=None):
        """Returns the JobSet proto; NotFoundError when there is none."""
        return self._call("GetJobSet", service_pb2.GetJobSetRequest(
            namespace=self._ns(namespace), name=name))

    def list(self, namespace=None, label_selector="", all_namespaces=False):
        """Returns the JobSets of a namespace (every page)."""
        return self._list_all("ListJobSets", lambda token: (
            service_pb2.ListJobSetsRequest(
                namespace=self._ns(namespace), all_namespaces=all_namespaces,
                label_selector=label_selector, limit=self.page_size,
                **{"continue": token})))

    def _list_all(self, method, request_for):
        """Returns the items of every page of List `method`; `request_for`
        builds the request of a page from its continue token. Starts over
        (a few times) when jobsetd answers that the token is too old
        (OUT_OF_RANGE, Kubernetes' 410 Gone)."""
        items = []
        token = ""
        restarts = 0
        for _ in range(_MAX_PAGES):
            try:
                response = self._call(method, request_for(token))
            except ApiError as e:
                if (e.code != grpc.StatusCode.OUT_OF_RANGE or not token
                        or restarts >= _MAX_RESTARTS):
                    raise
                restarts += 1
                items, token = [], ""
                continue
            items.extend(response.items)
            token = getattr(response, "continue")
            if not token:
                return items
        raise ApiError(grpc.StatusCode.INTERNAL,
                       f"jobsetd at {self.address} kept returning continue "
                       f"tokens for {method} after {_MAX_PAGES} pages")

    def delete(self, name, namespace=None):
        """Deletes a JobSet; returns its last state."""
        return self._call("DeleteJobSet", service_pb2.DeleteJobSetRequest(
            namespace=self._ns(namespace), name=name))

    def suspend(self, name, namespace=None):
        return self._call("SuspendJobSet", service_pb2.SuspendJobSetRequest(
            namespace=self._ns(namespace), name=name))

    def resume(self, name, namespace=None):
        return self._call("ResumeJobSet", service_pb2.ResumeJobSetRequest(
            namespace=self._ns(namespace), name=name))

    def list_jobs(self, jobset=None, namespace=None):
        """Returns every item (all pages) of a namespace or one JobSet."""
        return self._list_all("ListJobs", lambda token: service_pb2.ListJobsRequest(
            namespace=self._ns(namespace), jobset=jobset or "",
            limit=self.page_size, **{"continue": token}))

    def list_pods(self, jobset=None, namespace=None):
        """Returns every item (all pages) of a namespace or one JobSet."""
        return self._list_all("ListPods", lambda token: service_pb2.ListPodsRequest(
            namespace=self._ns(namespace), jobset=jobset or "",
            limit=self.page_size, **{"continue": token}))

    def list_events(self, jobset=None, namespace=None):
        """Returns every item (all pages) of a namespace or one JobSet."""
        return self._list_all("ListEvents", lambda token: service_pb2.ListEventsRequest(
            namespace=self._ns(namespace), jobset=jobset or "",
            limit=self.page_size, **{"continue": token}))

    def list_nodes(self):
        """Returns every node as a Kubernetes v1 Node proto (metadata, spec,
        status; `jobset.to_dict` gives kubectl's JSON shape)."""
        return list(self._call("ListNodes", agent_pb2.ListNodesRequest(),
                               stub="nodes").items)

    def get_node(self, name):
        """Returns the node as a v1 Node proto; NotFoundError when there is
        none."""
        return self._call("GetNode", agent_pb2.GetNodeRequest(name=name),
                          stub="nodes")

    # ---- Secrets and ConfigMaps ----

    def apply_secret(self, name, data=None, type="Opaque", namespace=None,
                     labels=None, create_only=False, dry_run=False):
        """Creates or updates a v1 Secret (`kubectl create secret generic`
        or, with type "kubernetes.io/dockerconfigjson" and data
        {".dockerconfigjson": ...}, `docker-registry`). `data` maps keys to
        bytes or str (UTF-8). Returns the ApplySecretResponse: `secret` as
        stored, without its data, and whether it was `created` or
        `unchanged`. Pods that name it get its values; clients only with the
        right to get secrets."""
        secret = service_pb2.Secret(type=type)
        secret.metadata.name = name
        secret.metadata.namespace = self._ns(namespace)
        secret.metadata.labels.update(labels or {})
        for key, value in (data or {}).items():
            secret.data[key] = (value.encode() if isinstance(value, str)
                                else bytes(value))
        return self._call("ApplySecret", service_pb2.ApplySecretRequest(
            secret=secret, create_only=create_only, dry_run=dry_run))

    def get_secret(self, name, namespace=None):
        """Returns the Secret (its data needs the right to get secrets);
        NotFoundError when there is none."""
        return self._call("GetSecret", service_pb2.GetSecretRequest(
            namespace=self._ns(namespace), name=name))

    def list_secrets(self, namespace=None, label_selector=""):
        """Returns the namespace's Secrets."""
        return list(self._call("ListSecrets", service_pb2.ListSecretsRequest(
            namespace=self._ns(namespace),
            label_selector=label_selector)).items)

    def delete_secret(self, name, namespace=None):
        """Deletes the Secret; returns it as it was, without its data."""
        return self._call("DeleteSecret", service_pb2.DeleteSecretRequest(
            namespace=self._ns(namespace), name=name))

    def apply_config_map(self, name, data=None, binary_data=None,
                         namespace=None, labels=None, create_only=False,
                         dry_run=False):
        """Creates or updates a v1 ConfigMap (`kubectl create configmap`):
        `data` maps keys to str, `binary_data` to bytes. Returns the
        ApplyConfigMapResponse (`config_map`, `created`, `unchanged`)."""
        config_map = service_pb2.ConfigMap()
        config_map.metadata.name = name
        config_map.metadata.namespace = self._ns(namespace)
        config_map.metadata.labels.update(labels or {})
        config_map.data.update(data or {})
        for key, value in (binary_data or {}).items():
            config_map.binary_data[key] = bytes(value)
        return self._call("ApplyConfigMap", service_pb2.ApplyConfigMapRequest(
            config_map=config_map, create_only=create_only, dry_run=dry_run))

    def get_config_map(self, name, namespace=None):
        """Returns the ConfigMap; NotFoundError when there is none."""
        return self._call("GetConfigMap", service_pb2.GetConfigMapRequest(
            namespace=self._ns(namespace), name=name))

    def list_config_maps(self, namespace=None, label_selector=""):
        """Returns the namespace's ConfigMaps."""
        return list(self._call(
            "ListConfigMaps", service_pb2.ListConfigMapsRequest(
                namespace=self._ns(namespace),
                label_selector=label_selector)).items)

    def delete_config_map(self, name, namespace=None):
        """Deletes the ConfigMap; returns it as it was."""
        return self._call("DeleteConfigMap", service_pb2.DeleteConfigMapRequest(
            namespace=self._ns(namespace), name=name))

    # ---- access ----

    def create_token(self, name, groups=(), ttl=None):
        """Creates a bearer token for user `name` in `groups`, valid for
        `ttl` seconds (None: jobsetd's default, 720h). Returns the token
        string: it cannot be read back later."""
        request = auth_pb2.CreateTokenRequest(name=name, groups=list(groups))
        if ttl is not None:
            request.ttl.CopyFrom(duration_pb2.Duration(seconds=int(ttl)))
        return self._call("CreateToken", request, stub="access").token

    def list_tokens(self):
        """Returns the TokenInfo of every user token (never the secrets)."""
        return list(self._call("ListTokens", auth_pb2.ListTokensRequest(),
                               stub="access").tokens)

    def delete_token(self, name):
        return self._call("DeleteToken", auth_pb2.DeleteTokenRequest(name=name),
                          stub="access")

    def can_i(self, verb, resource, name="", namespace=None,
              all_namespaces=False):
        """Whether the caller may do `verb` on `resource` ("jobsets",
        "pods/log", "jobsets.jobset.x-k8s.io", ...)."""
        group = ""
        base, slash, sub = resource.partition("/")
        if "." in base:
            base, group = base.split(".", 1)
        review = auth_pb2.AccessReview(
            verb=verb, resource=base + slash + sub, api_group=group,
            name=name,
            namespace="" if all_namespaces else self._ns(namespace))
        return self._call("ReviewAccess", review, stub="access").allowed

    def watch(self, name=None, namespace=None, resource_version="",
              timeout=None):
        """Yields (event type, JobSet) for the JobSets of a namespace (or
        one JobSet): first the current ones as "ADDED" (when no
        resource_version is given), then "ADDED", "MODIFIED" and "DELETED"
        as they happen. Ends after `timeout` seconds (None: never).
        """
        request = service_pb2.WatchJobSetsRequest(
            namespace=self._ns(namespace), resource_version=resource_version)
        deadline = None if timeout is None else time.monotonic() + timeout
        unreachable = [0]
        while True:
            stubs = self._current_stubs()
            stream = stubs.jobsets.WatchJobSets(
                request, timeout=_remaining(deadline),
                metadata=self._metadata)
            delivered = False
            try:
                for event in stream:
                    if not delivered:
                        delivered = True
                        self._replicas.reached()
                    if name and event.object.metadata.name != name:
                        continue
                    yield event.type, event.object
                return
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED and timeout:
                    return
                # What was delivered is not delivered twice: only a stream
                # that gave nothing is opened again elsewhere.
                if not delivered and self._try_again(e, unreachable):
                    continue
                raise self._error(e, "WatchJobSets", stubs.address) from None
            finally:
                stream.cancel()

    def wait(self, name, condition_type="Completed", timeout=60.0,
             namespace=None):
        """Waits until the JobSet's `condition_type` condition is True and
        returns the JobSet.

        Raises WaitTimeoutError after `timeout` seconds, and
        ConditionNotMetError when the JobSet ends otherwise (it Failed while
        waiting for Completed, or the reverse) or is deleted.
        """
        deadline = time.monotonic() + timeout
        jobset = self.get(name, namespace)
        state = _evaluate(jobset, condition_type)
        resource_version = jobset.metadata.resource_version
        while state is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                for event_type, obj in self.watch(
                        name, namespace, resource_version, timeout=remaining):
                    if event_type == "DELETED":
                        raise ConditionNotMetError(
                            f"jobset {name} was deleted while waiting for "
                            f"{condition_type}")
                    jobset = obj
                    state = _evaluate(jobset, condition_type)
                    resource_version = jobset.metadata.resource_version
                    if state is not None:
                        break
                # A stream that ended (deadline, server restart) is watched
                # again while time remains.
            except ApiError as e:
                if e.code != grpc.StatusCode.OUT_OF_RANGE:
                    raise
                resource_version = ""  # History compacted: list again.
        if state is True:
            return jobset
        if state is False:
            raise ConditionNotMetError(
                f"jobset {name} ended without {condition_type}: "
                f"{jobset.status.terminal_state}", jobset)
        raise WaitTimeoutError(
            f"timed out after {timeout}s waiting for jobset {name} to be "
            f"{condition_type}")


class _Stubs:
    """One replica's channel and the stubs on it."""

    def __init__(self, address, channel):
        self.address = address
        self.channel = channel
        self.jobsets = service_grpc.JobSetServiceStub(channel)
        self.nodes = agent_pb2_grpc.NodeServiceStub(channel)
        self.access = auth_pb2_grpc.AccessServiceStub(channel)


def _remaining(deadline):
    """Seconds left until `deadline` (time.monotonic()), None for none."""
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic())


def _channel(connection, address):
    options = [("grpc.max_receive_message_length", 64 << 20)]
    if not connection.tls:
        return grpc.insecure_channel(address, options=options)
    creds = grpc.ssl_channel_credentials(
        root_certificates=connection.ca_pem,
        private_key=connection.key_pem,
        certificate_chain=connection.cert_pem)
    if connection.token:
        creds = grpc.composite_channel_credentials(
            creds, grpc.access_token_call_credentials(connection.token))
    if connection.server_name:
        options.append(("grpc.ssl_target_name_override",
                        connection.server_name))
    return grpc.secure_channel(address, creds, options=options)


def _evaluate(jobset, condition_type):
    """True: condition met; False: it cannot be; None: not yet."""
    for c in jobset.status.conditions:
        if c.type == condition_type and c.status == "True":
            return True
    for c in jobset.status.conditions:
        if c.type in ("Completed", "Failed") and c.status == "True":
            return False
    return None
