"""Kueue's objects: manifests read into protos, and the Client's calls.

ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass and
Workload (proto/kueue.proto), over jobsetd's KueueService. Documents of
apiVersion kueue.x-k8s.io/v1beta1 or v1beta2 are read as api/kueue_manifest.h
reads them: each into v1beta1's form (v1beta2's cohortName, priorityClassRef,
flavorsUsage and accumulatedPastExecutionTimeSeconds folded into v1beta1's
names; v1beta1's Borrow and Preempt become MayStopSearch), a version's
document may use only its own names, fields jobsetd ignores warn.
"""

import copy
import logging

from jobset import manifest as _manifest
from jobset.errors import ManifestError
from proto import kueue_pb2
from proto import kueue_service_pb2

GROUP = "kueue.x-k8s.io"
API_VERSION = "kueue.x-k8s.io/v1beta1"
API_VERSION_V1BETA2 = "kueue.x-k8s.io/v1beta2"

# Kind -> (KueueObject's field, namespaced, kubectl's names for it).
KINDS = {
    "ResourceFlavor": ("resource_flavor", False,
                       ("resourceflavors", "resourceflavor", "flavor",
                        "flavors", "rf")),
    "ClusterQueue": ("cluster_queue", False,
                     ("clusterqueues", "clusterqueue", "cq")),
    "Cohort": ("cohort", False, ("cohorts", "cohort", "co")),
    "LocalQueue": ("local_queue", True,
                   ("localqueues", "localqueue", "queue", "queues", "lq")),
    "WorkloadPriorityClass": ("workload_priority_class", False,
                              ("workloadpriorityclasses",
                               "workloadpriorityclass", "wpc")),
    "Workload": ("workload", True,
                 ("workloads", "workload", "kwl", "kueueworkload",
                  "kueueworkloads")),
}

_log = logging.getLogger("jobset")

_PRIORITY_SOURCES = {
    ("kueue.x-k8s.io", "WorkloadPriorityClass"):
        "kueue.x-k8s.io/workloadpriorityclass",
    ("scheduling.k8s.io", "PriorityClass"): "scheduling.k8s.io/priorityclass",
}


def kind_of(name):
    """Kueue's Kind for `name`: the Kind itself ("ClusterQueue") or a name
    kubectl takes for it ("clusterqueues", "cq", "lq", ...). ValueError for
    another."""
    if name in KINDS:
        return name
    lower = name.lower()
    for kind, (_, _, names) in KINDS.items():
        if lower in names or lower == f"{names[0]}.{GROUP}":
            return kind
    raise ValueError(f"{name!r} is not one of Kueue's kinds: "
                     f"{', '.join(KINDS)}")


def namespaced(kind):
    """Whether objects of Kueue's `kind` are namespaced."""
    return KINDS[kind_of(kind)][1]


def unwrap(obj):
    """The object a KueueObject holds (a ClusterQueue, ...), or None."""
    field = obj.WhichOneof("object")
    return getattr(obj, field) if field else None


def wrap(message):
    """A KueueObject holding `message` (a ClusterQueue, ...)."""
    kind = message.DESCRIPTOR.name
    if kind not in KINDS:
        raise TypeError(f"not one of Kueue's objects: {kind}")
    obj = kueue_pb2.KueueObject()
    getattr(obj, KINDS[kind][0]).CopyFrom(message)
    return obj


def is_kueue_document(document):
    """Whether `document` (a dict) is one of Kueue's objects by its kind and
    API group."""
    return (isinstance(document, dict) and document.get("kind") in KINDS and
            str(document.get("apiVersion", "")).startswith(GROUP + "/"))


def _unknown(path, instead, errors):
    errors.append(f'{path}: unknown field (did you mean "{instead}"?)')


def _fold_versions(document, v1beta2, errors):
    """Moves v1beta2's names in `document` (a copy) to v1beta1's, and
    refuses the other version's names, as api/kueue_manifest.cc does."""
    kind = document.get("kind")
    spec = document.get("spec")
    status = document.get("status")
    spec = spec if isinstance(spec, dict) else {}
    status = status if isinstance(status, dict) else {}
    if kind == "ClusterQueue":
        if not v1beta2 and "cohortName" in spec:
            _unknown("spec.cohortName", "cohort", errors)
        if v1beta2:
            if spec.get("cohort"):
                _unknown("spec.cohort", "cohortName", errors)
            if "cohortName" in spec:
                spec["cohort"] = spec.pop("cohortName")
        fungibility = spec.get("flavorFungibility")
        if isinstance(fungibility, dict):
            for key, old in (("whenCanBorrow", "Borrow"),
                             ("whenCanPreempt", "Preempt")):
                if fungibility.get(key) != old:
                    continue
                if v1beta2:
                    errors.append(
                        f'spec.flavorFungibility.{key}: Unsupported value: '
                        f'"{old}": supported values: "MayStopSearch", '
                        '"TryNextFlavor"')
                else:
                    fungibility[key] = "MayStopSearch"
    elif kind == "LocalQueue":
        if not v1beta2 and status.get("flavorsUsage"):
            _unknown("status.flavorsUsage", "flavorUsage", errors)
        if v1beta2:
            if status.get("flavorUsage"):
                _unknown("status.flavorUsage", "flavorsUsage", errors)
            if "flavorsUsage" in status:
                status["flavorUsage"] = status.pop("flavorsUsage")
    elif kind == "Workload":
        if not v1beta2 and "priorityClassRef" in spec:
            _unknown("spec.priorityClassRef", "priorityClassName", errors)
        if v1beta2:
            for old in ("priorityClassName", "priorityClassSource"):
                if spec.get(old):
                    _unknown(f"spec.{old}", "priorityClassRef", errors)
            ref = spec.pop("priorityClassRef", None)
            if isinstance(ref, dict):
                key = (ref.get("group"), ref.get("kind"))
                if key not in _PRIORITY_SOURCES:
                    errors.append(
                        f"spec.priorityClassRef: Invalid value: {key}: "
                        "group and kind must be kueue.x-k8s.io "
                        "WorkloadPriorityClass or scheduling.k8s.io "
                        "PriorityClass")
                elif not ref.get("name"):
                    errors.append("spec.priorityClassRef.name: Required value")
                else:
                    spec["priorityClassName"] = ref["name"]
                    spec["priorityClassSource"] = _PRIORITY_SOURCES[key]
        fixed, sic = ("accumulatedPastExecutionTimeSeconds",
                      "accumulatedPastExexcutionTimeSeconds")
        if not v1beta2 and fixed in status:
            _unknown(f"status.{fixed}", sic, errors)
        if v1beta2:
            if sic in status:
                _unknown(f"status.{sic}", fixed, errors)
            if fixed in status:
                status[sic] = status.pop(fixed)


def object_from_dict(document, what="manifest"):
    """Returns (KueueObject, warnings) for one of Kueue's documents (a dict
    of apiVersion kueue.x-k8s.io/v1beta1 or v1beta2). Raises ManifestError
    naming every bad field path."""
    if not isinstance(document, dict):
        raise ManifestError(f"{what} is invalid: expected an object")
    kind = document.get("kind")
    if kind not in KINDS:
        supported = ", ".join(f'"{k}"' for k in KINDS)
        raise ManifestError(f"{what} is invalid: kind: Unsupported value: "
                            f"{kind!r}: supported values: {supported}")
    version = document.get("apiVersion")
    if version not in (API_VERSION, API_VERSION_V1BETA2):
        raise ManifestError(
            f"{what} is invalid: apiVersion: Unsupported value: {version!r}:"
            f' supported values: "{API_VERSION}", "{API_VERSION_V1BETA2}"')
    document = copy.deepcopy(document)
    errors = []
    _fold_versions(document, version == API_VERSION_V1BETA2, errors)
    document["apiVersion"] = API_VERSION
    obj = kueue_pb2.KueueObject()
    warnings = _manifest.fill(getattr(obj, KINDS[kind][0]), document, what,
                              errors)
    return obj, warnings


def load(manifest):
    """Reads Kueue's objects from `manifest`: a dict, a list of dicts,
    YAML/JSON text (several documents allowed) or the path of a file
    holding it. Returns a list of (KueueObject, warnings); raises
    ManifestError (a document of another kind included)."""
    documents = _manifest.documents(manifest)
    return [object_from_dict(d, f"manifest document {i}")
            for i, d in enumerate(documents, start=1) if d is not None]


class KueueCalls:
    """The Client's calls for Kueue's objects (KueueService); mixed into
    jobset.Client, whose _call, _stream, _ns and namespace they use. `kind`
    is Kueue's Kind ("ClusterQueue") or a name kubectl takes for it
    ("clusterqueues", "cq"); `namespace` applies to LocalQueues and
    Workloads only (default: the client's)."""

    def apply_kueue_object(self, obj, namespace=None, create_only=False,
                           dry_run=False):
        """Creates or updates one of Kueue's objects: a KueueObject, the
        object itself (a ClusterQueue proto, ...) or an upstream dict
        (v1beta1 or v1beta2; fields jobsetd ignores are logged as
        warnings). jobsetd defaults and validates it and stores its
        metadata and spec (status is jobsetd's). Returns the
        ApplyKueueObjectResponse: `object` as stored, `created`,
        `unchanged`. Raises ManifestError for a dict that does not read,
        InvalidError (Kueue's field paths and messages) for an object
        jobsetd refuses, ApiError ALREADY_EXISTS with `create_only`."""
        if isinstance(obj, dict):
            obj, warnings = object_from_dict(obj)
            for warning in warnings:
                _log_warning(obj, warning)
        elif not isinstance(obj, kueue_pb2.KueueObject):
            obj = wrap(obj)
        else:
            obj = copy.deepcopy(obj)
        message = unwrap(obj)
        if message is None:
            raise ValueError("the KueueObject holds no object")
        if namespaced(message.DESCRIPTOR.name):
            if not message.metadata.namespace:
                message.metadata.namespace = self._ns(namespace)
        else:
            # As the API server does with a cluster-scoped object's.
            message.metadata.namespace = ""
        return self._call("ApplyKueueObject",
                          kueue_service_pb2.ApplyKueueObjectRequest(
                              object=obj, create_only=create_only,
                              dry_run=dry_run),
                          stub="kueue", idempotent=not create_only)

    def _kueue_ref(self, kind, name, namespace):
        kind = kind_of(kind)
        return kueue_service_pb2.KueueObjectRef(
            kind=kind, name=name,
            namespace=self._ns(namespace) if namespaced(kind) else "")

    def get_kueue_object(self, kind, name, namespace=None):
        """Returns the object (a ClusterQueue proto, ...); NotFoundError
        when there is none."""
        return unwrap(self._call("GetKueueObject",
                                 self._kueue_ref(kind, name, namespace),
                                 stub="kueue"))

    def list_kueue_objects(self, kind, namespace=None, all_namespaces=False,
                           label_selector=""):
        """Returns the objects of `kind` (those of a namespace, or of all
        with `all_namespaces`, for namespaced kinds), by namespace then
        name."""
        return [unwrap(o) for o in self._list_kueue(
            kind, namespace, all_namespaces, label_selector).items]

    def _list_kueue(self, kind, namespace, all_namespaces, label_selector):
        """The ListKueueObjectsResponse (items and resource_version)."""
        kind = kind_of(kind)
        request = kueue_service_pb2.ListKueueObjectsRequest(
            kind=kind, label_selector=label_selector)
        if namespaced(kind):
            request.namespace = self._ns(namespace)
            request.all_namespaces = all_namespaces
        return self._call("ListKueueObjects", request, stub="kueue")

    def delete_kueue_object(self, kind, name, namespace=None):
        """Deletes the object; returns its last state. Not sent again after
        a failure that may have followed it (NotFoundError then says it
        went)."""
        return unwrap(self._call("DeleteKueueObject",
                                 self._kueue_ref(kind, name, namespace),
                                 stub="kueue", idempotent=False))

    def list_pending_workloads(self, cluster_queue=None, *, local_queue=None,
                               namespace=None, limit=0, offset=0):
        """Kueue's visibility API (visibility.kueue.x-k8s.io/v1beta1): the
        Workloads waiting for quota in `cluster_queue`, or in `local_queue`
        of `namespace` (default: the client's), in the order the
        ClusterQueue offers them. Returns PendingWorkload protos: metadata,
        priority, local_queue_name, position_in_cluster_queue and
        position_in_local_queue (0-based, as Kueue's), and jobsetd's
        cluster_queue, reason and message (why each waits); at most `limit`
        (0: Kueue's default, 1000; jobsetd allows 10000) after skipping
        `offset`. ValueError unless exactly one of cluster_queue and
        local_queue is given, for a namespace with cluster_queue, or a
        limit or offset that is not a whole number, 0 or more."""
        if bool(cluster_queue) == bool(local_queue):
            raise ValueError(
                "give exactly one of cluster_queue and local_queue")
        if cluster_queue and namespace:
            raise ValueError("namespace applies to local_queue only: a "
                             "ClusterQueue is cluster-scoped")
        for name, value in (("limit", limit), ("offset", offset)):
            if (not isinstance(value, int) or isinstance(value, bool) or
                    value < 0):
                raise ValueError(
                    f"{name} must be a whole number, 0 or more; got {value!r}")
        request = kueue_service_pb2.ListPendingWorkloadsRequest(
            limit=limit, offset=offset)
        if cluster_queue:
            request.cluster_queue = cluster_queue
        else:
            request.local_queue = local_queue
            request.namespace = self._ns(namespace)
        return list(self._call("ListPendingWorkloads", request,
                               stub="kueue").items)

    def watch_kueue_objects(self, kind, namespace=None, all_namespaces=False,
                            label_selector="", resource_version="",
                            timeout=None):
        """Yields (event type, object) for the objects of `kind`: first the
        current ones as "ADDED" (when no resource_version is given: they
        are listed, and watched from the list's revision), then "ADDED",
        "MODIFIED" and "DELETED" as they happen, as watch() does for
        JobSets. Ends after `timeout` seconds (None: never); OUT_OF_RANGE
        (ApiError) when resource_version left jobsetd's history."""
        kind = kind_of(kind)
        if not resource_version:
            listed = self._list_kueue(kind, namespace, all_namespaces,
                                      label_selector)
            for obj in listed.items:
                yield "ADDED", unwrap(obj)
            resource_version = listed.resource_version
        request = kueue_service_pb2.WatchKueueObjectsRequest(
            kind=kind, label_selector=label_selector,
            resource_version=resource_version)
        if namespaced(kind):
            request.namespace = self._ns(namespace)
            request.all_namespaces = all_namespaces
        for event in self._stream("WatchKueueObjects", request, "kueue",
                                  timeout, ends_at_timeout=True):
            yield event.type, unwrap(event.object)


def _log_warning(obj, warning):
    message = unwrap(obj)
    _log.warning("%s %s: %s", message.DESCRIPTOR.name.lower(),
                 message.metadata.name, warning)
