"""Client: jobsetd's JobSet API for Python programs (training launchers)."""

import codecs
import collections
import logging
import os
import re
import threading
import time

import grpc
from google.protobuf import json_format

from google.protobuf import duration_pb2

from jobset import config as _config
from jobset import kueue as _kueue
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
from proto import kueue_service_pb2_grpc

DEFAULT_SERVER = "127.0.0.1:7070"
# Seconds a call may take, retries included. A failover takes up to the
# leader's lease (jobsetd --leader_lease, 5 s by default) to expire, then the
# next replica loads the store and serves, and etcd may first elect its own
# leader (up to about 2 s): 30 s rides that out with room to spare (so a
# create issued meanwhile lands), yet still ends a call to a cluster that is
# down. client-go and kubectl have no timeout by default (timeout=None).
DEFAULT_TIMEOUT = 30.0
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


class Client(_kueue.KueueCalls):
    """A connection to jobsetd.

    Every call has a deadline (`timeout` seconds, retries included; None:
    none) and raises ApiError (or a subclass: NotFoundError, InvalidError,
    UnavailableError) carrying the gRPC code and jobsetd's message. The list
    methods read every page (`page_size` items a request, at most 10,000)
    and return them together. Use as a context manager, or close().
    Thread-safe.

    The address may be a list of jobsetd's replicas ("a:7070,b:7070"): a
    call goes to the current one (at first the first). As client-go does, a
    call that finds no leader is sent again until its timeout: a follower's
    UNAVAILABLE naming the leader (trailing metadata `jobsetd-leader`) sends
    it there at once (len(list) + 1 times in a row, then after a back-off);
    a replica that cannot be reached, or a follower that knows no leader
    yet, passes it to the next, and once every replica failed in a row the
    call waits (100 ms doubling to 2 s, jittered) and goes round again. A
    request that may have reached jobsetd before the connection failed is
    sent again only when repeating it is harmless (reads, updates, a create
    of a named JobSet, which jobsetd answers "unchanged" when it finds the
    same JobSet); a delete, a generateName create or a token is not. A call
    that runs out of time is not repeated, but the next one goes to the
    next replica.

        with jobset.Client("127.0.0.1:7070") as client:
            client.apply("train.yaml")
            client.wait("train", "Completed", timeout=3600)
    """

    def __init__(self, address=None, namespace="default",
                 timeout=DEFAULT_TIMEOUT, page_size=_PAGE_SIZE,
                 connection=None):
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
        # The token goes as call credentials over TLS, never in plaintext.
        if connection.token and not connection.tls:
            raise _config.ConfigError(
                f"server {connection.address!r}: a bearer token is only sent "
                "over TLS")
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
                    timeout=DEFAULT_TIMEOUT, server=None, token=None,
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

    def _try_again(self, error, attempts, idempotent=True):
        """After a failed attempt (`error`, a grpc.RpcError) of the call
        `attempts` keeps: whether to send the call again, to the new
        current(). Waits the back-off first when there is one to wait;
        False when the call is out of time (or would be after the wait)."""
        attempts.count += 1
        code = error.code()
        leader = _replicas.redirected_leader(error)
        failure = _failure(error, leader)
        if failure is None:
            self._replicas.after(code, None)  # The next call: the next one.
            return False
        attempts.last = error
        at_once = self._replicas.after(code, leader)
        if failure == _TLS:
            # Not a failover: each of the others once, as before, no rounds.
            attempts.tls_failures += 1
            return attempts.tls_failures < len(self._replicas)
        if failure == _MAYBE_SENT and not idempotent:
            attempts.unsafe = True
            return False
        delay = 0.0 if at_once else attempts.backoff.next()
        remaining = _remaining(attempts.deadline)
        if remaining is not None and remaining <= delay:
            # The last wait: the rest of the time, and one more attempt
            # only if the next replica connects meanwhile.
            if self._wait_until_ready(remaining) and _remaining(
                    attempts.deadline):
                return True
            attempts.out_of_time = True
            return False
        if delay:
            self._wait_until_ready(delay)
        return True

    def _wait_until_ready(self, seconds):
        """Waits `seconds`, or less once the channel of current() connects;
        returns whether it did.

        gRPC Python makes progress on a channel's reconnection only while
        something waits on it, and a call made in between fails at once
        with the error it cached: without this wait a replica that came
        back would be missed for many seconds. A channel that is connected
        already (a follower's) is waited on the whole time."""
        if seconds <= 0:
            return False
        channel = self._current_stubs().channel
        seen = []
        ready = threading.Event()

        def on_state(state):  # The first is the state now.
            if seen and state == grpc.ChannelConnectivity.READY:
                ready.set()
            seen.append(state)

        # Without try_to_connect: gRPC's poller would call the channel
        # once more after a close() that follows at once.
        channel.subscribe(on_state)
        try:
            return ready.wait(seconds)
        finally:
            channel.unsubscribe(on_state)

    def _call(self, method, request, stub="jobsets", idempotent=True):
        """Sends unary `method` (on `stub`) until it is answered, a failure
        that is not worth repeating, or the timeout; `idempotent`: whether a
        request that may have reached jobsetd may be sent again."""
        # One deadline for the call, whichever replicas it takes to answer.
        attempts = _Attempts(self.timeout)
        while True:
            stubs = self._current_stubs()
            rpc = getattr(getattr(stubs, stub), method)
            try:
                response = rpc(request, timeout=_remaining(attempts.deadline))
            except grpc.RpcError as e:
                if self._try_again(e, attempts, idempotent):
                    continue
                raise self._error(e, method, stubs.address,
                                  attempts) from None
            self._replicas.reached()
            return response

    def _stream(self, method, request, stub, timeout, ends_at_timeout):
        """Yields the responses of server-streaming `method` (on `stub`),
        given `timeout` seconds (None: until jobsetd ends it); with
        `ends_at_timeout` the stream just ends then, else it is an error.
        Opening it is retried as _call retries, within the client's timeout
        too; once a response was delivered it is not (what was delivered
        would be delivered twice), and the error is raised."""
        attempts = _Attempts(_shorter(timeout, self.timeout))
        deadline = None if timeout is None else attempts.start + timeout
        while True:
            stubs = self._current_stubs()
            stream = getattr(getattr(stubs, stub), method)(
                request, timeout=_remaining(deadline))
            delivered = False
            try:
                for response in stream:
                    if not delivered:
                        delivered = True
                        self._replicas.reached()
                    yield response
                self._replicas.reached()
                return
            except grpc.RpcError as e:
                # The one deadline given to gRPC is the stream's.
                if (ends_at_timeout and
                        e.code() == grpc.StatusCode.DEADLINE_EXCEEDED):
                    return
                if not delivered and self._try_again(e, attempts):
                    continue
                raise self._error(e, method, stubs.address, attempts,
                                  timeout=timeout,
                                  delivered=delivered) from None
            finally:
                stream.cancel()

    def _error(self, error, method, address=None, attempts=None,
               timeout=None, delivered=False):
        note = ""
        if attempts is not None:
            note = self._retry_note(error, method, attempts, delivered)
            if timeout is None:
                timeout = attempts.timeout
        return from_rpc_error(error, address or self.address, method,
                              tls=self.connection.tls,
                              config_path=self.connection.config_path,
                              note=note, timeout=timeout)

    def _retry_note(self, error, method, attempts, delivered):
        """What the error of a call that `attempts` kept should add: the
        replicas it went round, how often and how long, and why it stopped
        there."""
        code = error.code()
        if code not in (grpc.StatusCode.UNAVAILABLE,
                        grpc.StatusCode.DEADLINE_EXCEEDED):
            return ""
        parts = []
        if delivered:
            parts.append(f"the {method} stream broke after it had delivered; "
                         "it is not resumed")
        elif attempts.unsafe:
            parts.append(f"not sent again: the request may have reached "
                         f"jobsetd, and {method} is not safe to repeat")
        count = max(attempts.count, 1)
        if len(self._replicas) > 1 or count > 1:
            tried = (f"{count} attempt{'s' if count != 1 else ''} in "
                     f"{time.monotonic() - attempts.start:.1f}s")
            if attempts.out_of_time and attempts.timeout is not None:
                tried += f", until the {attempts.timeout:g}s timeout"
            parts.append(f"replicas {self._replicas.all()}: {tried}")
        last = attempts.last
        if (code == grpc.StatusCode.DEADLINE_EXCEEDED and last is not None
                and last is not error):
            parts.append(f"before: {last.code().name}: {last.details()}")
        return f" ({'; '.join(parts)})" if parts else ""

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
            response = self._create(jobset, dry_run)
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
        """Creates a JobSet (a proto or a dict); returns it as stored. One
        that exists with the same spec is returned as it is (jobsetd's
        answer to a repeated create); with another spec, ApiError
        ALREADY_EXISTS."""
        if isinstance(jobset, dict):
            jobset, _ = _manifest.jobset_from_dict(jobset)
        if not jobset.metadata.namespace:
            jobset.metadata.namespace = self.namespace
        return self._create(jobset, dry_run).jobset

    def _create(self, jobset, dry_run):
        """Sends CreateJobSet; returns the CreateJobSetResponse.

        jobsetd answers a create of a JobSet it has with the same spec with
        that JobSet and created=False, and one with another spec
        ALREADY_EXISTS (a genuine conflict, raised). So a named create is
        sent again after a failure that may have followed its commit: it
        lands once, and the repeat reports it "unchanged", as kubectl apply
        run again would. A generateName create is not: a repeat would make a
        second JobSet."""
        return self._call(
            "CreateJobSet",
            service_pb2.CreateJobSetRequest(jobset=jobset, dry_run=dry_run),
            idempotent=bool(jobset.metadata.name))

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
            namespace=self._ns(namespace), name=name), idempotent=False)

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

    def get_job(self, name, namespace=None, jobset=None):
        """Returns the Job (a batch/v1 Job proto) named `name`. jobsetd has
        no GetJob: the namespace's Jobs are listed (only `jobset`'s when
        given, which is cheaper) and the one picked, as `jobsetctl get job
        NAME` does. NotFoundError 'jobs.batch "NAME" not found' when there
        is none."""
        return _named(self.list_jobs(jobset, namespace), name, "jobs.batch",
                      self.address)

    def get_pod(self, name, namespace=None, jobset=None):
        """Returns the Pod (a v1 Pod proto) named `name`, found as get_job
        finds a Job (`jobsetctl get pod NAME`). NotFoundError 'pods "NAME"
        not found' when there is none."""
        return _named(self.list_pods(jobset, namespace), name, "pods",
                      self.address)

    def logs(self, pod, namespace=None, container=None, follow=False,
             tail_lines=None, tail_bytes=None, limit_bytes=None,
             timeout=None, attempt=None, previous=False):
        """Returns a container's output as text (UTF-8, undecodable bytes
        replaced), read by jobsetd from the pod's agent (PodLogService, as
        `jobsetctl logs`); with `follow`, an iterator of its lines (each
        with its newline, but perhaps the last) that ends once the pod has
        finished and everything is sent (`jobsetctl logs -f`; its errors
        are raised as it is iterated).

        container: default the pod's first. tail_lines: only the last this
          many lines (kubectl --tail; counted here, jobsetd's API has no
          line count: the log is read whole, and with `follow` twice, once
          to count and once to follow from there). tail_bytes: only the
          last this many bytes (jobsetd's GetPodLogsRequest.limit_bytes;
          at most 64 MiB). limit_bytes: stop after this many bytes (kubectl
          --limit-bytes). timeout: seconds for the whole read (default: the
          client's; with `follow`, None: until the pod ends).
          attempt: read restart attempt `attempt` (0 is the first) of the
          pod's JobSet (`jobsetctl logs --attempt N`): `pod` is a current
          pod, whose Job and index pick that attempt's, or the earlier pod's
          own name; jobsetd keeps the last --attempt_history attempts, while
          the agent keeps the log. previous: the attempt before the current
          one (`jobsetctl logs -p`); not with `attempt`. An earlier
          attempt's pod has ended: `follow` gives what there is.

        NotFoundError for an unknown pod or container (or an earlier pod
        whose log its agent no longer has), ApiError FAILED_PRECONDITION for
        a pod not placed yet (or `previous` of a JobSet that never
        restarted), ApiError OUT_OF_RANGE for an attempt not run or no
        longer kept, UnavailableError when its node's agent is not
        connected. jobsetd keeps no timestamps and has no since: there are
        no such options.
        """
        for option, value in (("tail_lines", tail_lines),
                              ("tail_bytes", tail_bytes),
                              ("limit_bytes", limit_bytes),
                              ("attempt", attempt)):
            if value is not None and value < 0:
                raise ValueError(f"{option} must be at least 0, not {value}")
        if attempt is not None and previous:
            raise ValueError("attempt and previous are exclusive (previous "
                             "is the attempt before the current one)")
        if not follow and timeout is None:
            timeout = self.timeout
        request = agent_pb2.GetPodLogsRequest(
            namespace=self._ns(namespace), pod=pod, container=container or "",
            follow=follow, limit_bytes=int(tail_bytes or 0),
            previous=bool(previous))
        if attempt is not None:
            request.attempt = int(attempt)
        if not follow:
            data = self._log_bytes(request, timeout)
            if tail_lines is not None:
                data = _last_lines(data, tail_lines)
            if limit_bytes is not None:
                data = data[:limit_bytes]
            return data.decode("utf-8", "replace")
        return self._follow(request, tail_lines, limit_bytes, timeout)

    def _log_bytes(self, request, timeout):
        return b"".join(chunk.data for chunk in self._stream(
            "GetPodLogs", request, "logs", timeout, ends_at_timeout=False))

    def _follow(self, request, tail_lines, limit_bytes, timeout):
        """The lines of logs(follow=True)."""
        start = time.monotonic()
        skip, head = 0, b""
        request_attempt = (request.attempt if request.HasField("attempt")
                           else None)
        if tail_lines is not None:
            # What is there now, read whole: its length is where a stream
            # from the beginning catches up, and its last lines are shown.
            tail_bytes = request.limit_bytes
            request = agent_pb2.GetPodLogsRequest(
                namespace=request.namespace, pod=request.pod,
                container=request.container, previous=request.previous)
            if request_attempt is not None:
                request.attempt = request_attempt
            whole = self._log_bytes(request, _shorter(timeout, self.timeout))
            skip = len(whole)
            head = _last_lines(whole[-tail_bytes:] if tail_bytes else whole,
                               tail_lines)
            request.follow = True
            if timeout is not None:
                timeout = max(0.0, timeout - (time.monotonic() - start))
        left = limit_bytes
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""

        def lines(data, final=False):
            nonlocal pending
            pending += decoder.decode(data, final)
            *done, pending = pending.split("\n")
            for line in done:
                yield line + "\n"
            if final and pending:
                yield pending
                pending = ""

        def chunks():
            nonlocal skip
            yield head
            for chunk in self._stream("GetPodLogs", request, "logs",
                                      timeout, ends_at_timeout=True):
                data = chunk.data
                if skip:
                    cut = min(skip, len(data))
                    data, skip = data[cut:], skip - cut
                yield data

        source = chunks()
        try:
            for data in source:
                if left is not None:
                    data, left = data[:left], left - min(left, len(data))
                yield from lines(data)
                if left == 0:
                    break
        finally:
            source.close()  # Cancels the stream now, not at collection.
        yield from lines(b"", final=True)

    # ---- Namespaces, version ----

    def list_namespaces(self, label_selector=""):
        """Returns the v1 Namespace objects (a namespace needs none: one
        without an object is one with no labels)."""
        return list(self._call(
            "ListNamespaces", service_pb2.ListNamespacesRequest(
                label_selector=label_selector)).items)

    def get_namespace(self, name):
        """Returns the v1 Namespace object; NotFoundError when there is
        none."""
        return self._call("GetNamespace",
                          service_pb2.GetNamespaceRequest(name=name))

    def version(self):
        """Returns jobsetd's VersionInfo (major, minor, git_version,
        platform: Kubernetes' version.Info, as `jobsetctl version`)."""
        return self._call("GetVersion", service_pb2.GetVersionRequest())

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
            secret=secret, create_only=create_only, dry_run=dry_run),
            idempotent=not create_only)

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
            namespace=self._ns(namespace), name=name), idempotent=False)

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
            config_map=config_map, create_only=create_only, dry_run=dry_run),
            idempotent=not create_only)

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
            namespace=self._ns(namespace), name=name), idempotent=False)

    # ---- access ----

    def create_token(self, name, groups=(), ttl=None):
        """Creates a bearer token for user `name` in `groups`, valid for
        `ttl` seconds (None: jobsetd's default, 720h). Returns the token
        string: it cannot be read back later."""
        request = auth_pb2.CreateTokenRequest(name=name, groups=list(groups))
        if ttl is not None:
            request.ttl.CopyFrom(duration_pb2.Duration(seconds=int(ttl)))
        return self._call("CreateToken", request, stub="access",
                          idempotent=False).token

    def list_tokens(self):
        """Returns the TokenInfo of every user token (never the secrets)."""
        return list(self._call("ListTokens", auth_pb2.ListTokensRequest(),
                               stub="access").tokens)

    def delete_token(self, name):
        return self._call("DeleteToken", auth_pb2.DeleteTokenRequest(name=name),
                          stub="access", idempotent=False)

    def list_rbac(self, kind, namespace=None, all_namespaces=False):
        """Returns the RBAC objects of `kind` ("Role", "RoleBinding",
        "ClusterRole" or "ClusterRoleBinding") as Role or RoleBinding
        protos: a namespaced kind's of the namespace (every namespace's
        with `all_namespaces`), as `jobsetctl get roles` and the like."""
        scoped = not kind.startswith("Cluster") and not all_namespaces
        response = self._call("ListRbac", auth_pb2.ListRbacRequest(
            kind=kind, namespace=self._ns(namespace) if scoped else ""),
            stub="access")
        return [o.role if o.HasField("role") else o.binding
                for o in response.objects]

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
        as they happen. Ends after `timeout` seconds (None: never). Opening
        the stream is retried as every call is; a stream that breaks after
        it delivered raises (UnavailableError in a failover: watch again
        from the last resource_version, as wait() does).
        """
        request = service_pb2.WatchJobSetsRequest(
            namespace=self._ns(namespace), resource_version=resource_version)
        for event in self._stream("WatchJobSets", request, "jobsets",
                                  timeout, ends_at_timeout=True):
            if name and event.object.metadata.name != name:
                continue
            yield event.type, event.object

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
        unavailable = None  # The last failure to watch, for the timeout's.
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
                if e.code == grpc.StatusCode.OUT_OF_RANGE:
                    resource_version = ""  # History compacted: list again.
                elif e.code != grpc.StatusCode.UNAVAILABLE:
                    raise
                # UNAVAILABLE: the stream broke (a failover) or no replica
                # answered within the client's timeout; watch again from
                # where it was while time remains.
                unavailable = e
                continue
            unavailable = None
        if state is True:
            return jobset
        if state is False:
            raise ConditionNotMetError(
                f"jobset {name} ended without {condition_type}: "
                f"{jobset.status.terminal_state}", jobset)
        raise WaitTimeoutError(
            f"timed out after {timeout}s waiting for jobset {name} to be "
            f"{condition_type}" +
            (f" (the last watch failed: {unavailable})" if unavailable
             else ""))


class _Stubs:
    """One replica's channel and the stubs on it."""

    def __init__(self, address, channel):
        self.address = address
        self.channel = channel
        self.jobsets = service_grpc.JobSetServiceStub(channel)
        self.nodes = agent_pb2_grpc.NodeServiceStub(channel)
        self.access = auth_pb2_grpc.AccessServiceStub(channel)
        self.logs = agent_pb2_grpc.PodLogServiceStub(channel)
        self.kueue = kueue_service_pb2_grpc.KueueServiceStub(channel)


def _named(items, name, resource, address):
    """The item of `items` named `name`; NotFoundError, in Kubernetes'
    words, when there is none."""
    for item in items:
        if item.metadata.name == name:
            return item
    raise NotFoundError(grpc.StatusCode.NOT_FOUND,
                        f'{resource} "{name}" not found', address)


def _last_lines(data, n):
    """The last `n` lines of `data` (bytes; a last line without its newline
    counts)."""
    if n == 0:
        return b""
    pos = len(data) - 1 if data.endswith(b"\n") else len(data)
    for _ in range(n):
        pos = data.rfind(b"\n", 0, pos)
        if pos < 0:
            return data
    return data[pos + 1:]


# How a failed attempt ended, for _try_again (None: not retried).
_REDIRECT = "redirect"      # A follower named the leader: it did nothing.
_NOT_SENT = "not sent"      # No connection, or a follower without a leader.
_TLS = "tls"                # The TLS handshake failed: not a failover.
_MAYBE_SENT = "maybe sent"  # UNAVAILABLE once the request may have gone.
# gRPC's words when it had no connection to send on (the request never left).
_NO_CONNECTION = re.compile(
    r"^failed to connect to all addresses|connections to all backends failing")
# A TLS handshake that failed (a certificate refused, an SSL error). "Handshake
# read failed" is not one: the connection died during the handshake (a busy or
# departing jobsetd), so it is retried like a replica not reached.
_TLS_FAILURE = re.compile(r"handshake failed|certificate|SSL_ERROR", re.IGNORECASE)
# A follower's own words (scheduler/ha/follower_server.cc): it did nothing.
_FOLLOWER = "jobsetd: this replica is a follower"


def _failure(error, leader):
    """Classifies a failed attempt (a grpc.RpcError; `leader` the redirect
    it carried, or None) as one of the kinds above, or None."""
    if error.code() != grpc.StatusCode.UNAVAILABLE:
        return None
    if leader is not None and not _replicas.address_problem(leader):
        return _REDIRECT
    details = error.details() or ""
    if _NO_CONNECTION.search(details):
        return _TLS if _TLS_FAILURE.search(details) else _NOT_SENT
    if details.startswith(_FOLLOWER):
        return _NOT_SENT
    return _MAYBE_SENT


class _Attempts:
    """One call's attempts: its deadline, back-off and how they failed."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.start = time.monotonic()
        self.deadline = None if timeout is None else self.start + timeout
        self.backoff = _replicas.Backoff()
        self.count = 0             # Attempts that failed.
        self.tls_failures = 0
        self.last = None           # The last UNAVAILABLE, a grpc.RpcError.
        self.unsafe = False        # Stopped: maybe sent, not idempotent.
        self.out_of_time = False   # Stopped: no time left to back off.


def _shorter(a, b):
    """The shorter of two timeouts (None: none)."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _remaining(deadline):
    """Seconds left until `deadline` (time.monotonic()), None for none."""
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic())


def _channel(connection, address):
    options = [
        ("grpc.max_receive_message_length", 64 << 20),
        # gRPC's own reconnect back-off (1 s growing by 1.6 to 2 min) would
        # hide a replica that came back for many seconds: a call retried
        # meanwhile fails at once with the cached error. Kept short, as
        # EtcdStore keeps its own, so that the next leader is used within
        # about a second of serving; the calls' back-off paces the rest.
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
    ]
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
