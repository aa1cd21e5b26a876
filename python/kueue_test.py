"""Tests of jobset.kueue: Kueue's manifests (kueue-semantics.md §8's, and
v1beta2's names) read into protos, and the Client's KueueService calls
against an in-process fake on 127.0.0.1."""

import os
import threading
import unittest
from concurrent import futures

import grpc

import jobset
from jobset import kueue
from proto import kueue_pb2
from proto import kueue_service_pb2
from proto import kueue_service_pb2_grpc


class ManifestTest(unittest.TestCase):

    def test_section_8_manifests_load_unchanged(self):
        loaded = {}
        for name in ("flavors.yaml", "cluster-queue.yaml",
                     "local-queue-and-priority-classes.yaml"):
            for obj, warnings in jobset.load_kueue_manifest(
                    os.path.join(os.environ["KUEUE_MANIFESTS"], name)):
                self.assertEqual(warnings, [])
                message = kueue.unwrap(obj)
                loaded[message.metadata.name] = message
        self.assertEqual(sorted(loaded), [
            "experiment", "flagship", "gpu-h100", "on-demand",
            "research", "research-queue", "spot"])
        cq = loaded["research"]
        self.assertEqual(cq.api_version, "kueue.x-k8s.io/v1beta1")
        self.assertEqual(cq.spec.cohort, "ml-org")
        self.assertEqual(cq.spec.resource_groups[0].flavors[0]
                         .resources[2].borrowing_limit, "8")
        self.assertEqual(cq.spec.resource_groups[0].flavors[0]
                         .resources[1].nominal_quota, "1536Gi")
        self.assertEqual(loaded["flagship"].value, 10000)
        self.assertEqual(loaded["research-queue"].metadata.namespace,
                         "research")
        self.assertEqual(loaded["spot"].spec.node_taints[0].effect,
                         "NoSchedule")

    def test_v1beta2_names_fold_into_v1beta1s(self):
        obj, _ = kueue.object_from_dict({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {"cohortName": "org",
                     "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"}}})
        self.assertEqual(obj.cluster_queue.spec.cohort, "org")
        self.assertFalse(obj.cluster_queue.spec.HasField("cohort_name"))
        self.assertEqual(obj.cluster_queue.api_version,
                         "kueue.x-k8s.io/v1beta1")
        obj, _ = kueue.object_from_dict({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "w"},
            "spec": {"queueName": "q", "priorityClassRef": {
                "group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                "name": "flagship"}},
            "status": {"accumulatedPastExecutionTimeSeconds": 5}})
        spec = obj.workload.spec
        self.assertEqual(spec.priority_class_name, "flagship")
        self.assertEqual(spec.priority_class_source,
                         "kueue.x-k8s.io/workloadpriorityclass")
        self.assertFalse(spec.HasField("priority_class_ref"))
        self.assertEqual(
            obj.workload.status.accumulated_past_exexcution_time_seconds, 5)
        # v1beta1's Borrow is MayStopSearch, as Kueue converts it.
        obj, _ = kueue.object_from_dict({
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {"flavorFungibility": {"whenCanBorrow": "Borrow"}}})
        self.assertEqual(
            obj.cluster_queue.spec.flavor_fungibility.when_can_borrow,
            "MayStopSearch")

    def test_errors_name_the_field(self):
        cases = [
            ({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
              "metadata": {"name": "x"}, "spec": {"cohortName": "o"}},
             'spec.cohortName: unknown field (did you mean "cohort"?)'),
            ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
              "metadata": {"name": "x"}, "spec": {"cohort": "o"}},
             'spec.cohort: unknown field (did you mean "cohortName"?)'),
            ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
              "metadata": {"name": "x"},
              "spec": {"flavorFungibility": {"whenCanPreempt": "Preempt"}}},
             "spec.flavorFungibility.whenCanPreempt: Unsupported value"),
            ({"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "Cohort"},
             "apiVersion: Unsupported value"),
            ({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Queue"},
             "kind: Unsupported value"),
            ({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
              "metadata": {"name": "q"}, "spec": {"clusterQueues": "x"}},
             "spec.clusterQueues: unknown field"),
        ]
        for document, message in cases:
            with self.subTest(message):
                with self.assertRaises(jobset.ManifestError) as caught:
                    kueue.object_from_dict(document)
                self.assertIn(message, str(caught.exception))
        with self.assertRaises(jobset.ManifestError) as caught:
            jobset.load_kueue_manifest(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\n"
                "metadata: {name: a}\n---\n"
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n")
        self.assertIn("manifest document 2", str(caught.exception))

    def test_ignored_fields_warn(self):
        _, warnings = kueue.object_from_dict({
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": "cq"}, "spec": {"admissionChecks": ["p"]}})
        self.assertEqual(warnings, ["spec.admissionChecks: ignored by jobsetd"])

    def test_kind_names_as_kubectl_takes_them(self):
        self.assertEqual(kueue.kind_of("cq"), "ClusterQueue")
        self.assertEqual(kueue.kind_of("LocalQueue"), "LocalQueue")
        self.assertEqual(kueue.kind_of("queues"), "LocalQueue")
        self.assertEqual(kueue.kind_of("rf"), "ResourceFlavor")
        self.assertEqual(kueue.kind_of("wpc"), "WorkloadPriorityClass")
        self.assertEqual(kueue.kind_of("kwl"), "Workload")
        self.assertEqual(kueue.kind_of("clusterqueues.kueue.x-k8s.io"),
                         "ClusterQueue")
        with self.assertRaises(ValueError):
            kueue.kind_of("jobsets")


class FakeKueue(kueue_service_pb2_grpc.KueueServiceServicer):
    """KueueService over a dict, recording requests."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stored = {}
        self.requests = []

    @staticmethod
    def _key(kind, namespace, name):
        return (kind, namespace, name)

    def ApplyKueueObject(self, request, context):
        message = kueue.unwrap(request.object)
        key = self._key(message.DESCRIPTOR.name, message.metadata.namespace,
                        message.metadata.name)
        with self.lock:
            self.requests.append(request)
            created = key not in self.stored
            if not created and request.create_only:
                context.abort(grpc.StatusCode.ALREADY_EXISTS,
                              f"{key[2]} already exists")
            if not request.dry_run:
                self.stored[key] = request.object
        return kueue_service_pb2.ApplyKueueObjectResponse(
            object=request.object, created=created)

    def GetKueueObject(self, request, context):
        with self.lock:
            self.requests.append(request)
            obj = self.stored.get(self._key(request.kind, request.namespace,
                                            request.name))
        if obj is None:
            context.abort(grpc.StatusCode.NOT_FOUND,
                          f'{request.kind.lower()}s.kueue.x-k8s.io '
                          f'"{request.name}" not found')
        return obj

    def ListKueueObjects(self, request, context):
        with self.lock:
            self.requests.append(request)
            items = [o for (kind, ns, _), o in sorted(self.stored.items())
                     if kind == request.kind and
                     (request.all_namespaces or ns == request.namespace)]
        return kueue_service_pb2.ListKueueObjectsResponse(
            items=items, resource_version="3")

    def DeleteKueueObject(self, request, context):
        with self.lock:
            self.requests.append(request)
            obj = self.stored.pop(self._key(request.kind, request.namespace,
                                            request.name), None)
        if obj is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "not found")
        return obj

    def ListPendingWorkloads(self, request, context):
        with self.lock:
            self.requests.append(request)
        if request.cluster_queue == "missing":
            context.abort(grpc.StatusCode.NOT_FOUND,
                          'clusterqueues.kueue.x-k8s.io "missing" not found')
        return kueue_service_pb2.PendingWorkloadsSummary(items=[
            kueue_service_pb2.PendingWorkload(
                local_queue_name="team-b-queue", cluster_queue="team-b",
                position_in_cluster_queue=i, position_in_local_queue=i,
                reason="Pending")
            for i in range(2)])

    def WatchKueueObjects(self, request, context):
        with self.lock:
            self.requests.append(request)
            items = [o for (kind, _, _), o in sorted(self.stored.items())
                     if kind == request.kind]
        for obj in items:
            yield kueue_service_pb2.KueueWatchEvent(type="ADDED", object=obj)


class ClientTest(unittest.TestCase):

    def setUp(self):
        self.fake = FakeKueue()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        kueue_service_pb2_grpc.add_KueueServiceServicer_to_server(
            self.fake, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.client = jobset.Client(f"127.0.0.1:{port}", namespace="team",
                                    timeout=10)

    def tearDown(self):
        self.client.close()
        self.server.stop(None)

    def test_apply_defaults_the_namespace_of_namespaced_kinds_only(self):
        applied = self.client.apply_kueue_object({
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": "research"}})
        self.assertTrue(applied.created)
        self.assertEqual(applied.object.local_queue.metadata.namespace, "team")
        cq = kueue_pb2.ClusterQueue()
        cq.metadata.name = "research"
        cq.metadata.namespace = "ignored"
        applied = self.client.apply_kueue_object(cq, dry_run=True)
        self.assertEqual(applied.object.cluster_queue.metadata.namespace, "")
        self.assertTrue(self.fake.requests[-1].dry_run)
        self.assertEqual(self.client.list_kueue_objects("ClusterQueue"), [])
        self.client.apply_kueue_object(cq)
        with self.assertRaises(jobset.ApiError) as caught:
            self.client.apply_kueue_object(kueue.wrap(cq), create_only=True)
        self.assertEqual(caught.exception.code,
                         grpc.StatusCode.ALREADY_EXISTS)

    def test_get_list_watch_delete(self):
        for name, ns in (("a", "team"), ("b", "other")):
            self.client.apply_kueue_object({
                "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"clusterQueue": "research"}})
        got = self.client.get_kueue_object("lq", "a")
        self.assertIsInstance(got, kueue_pb2.LocalQueue)
        self.assertEqual(got.spec.cluster_queue, "research")
        self.assertEqual(self.fake.requests[-1].namespace, "team")
        self.assertEqual([q.metadata.name for q in
                          self.client.list_kueue_objects("LocalQueue")], ["a"])
        self.assertEqual(sorted(q.metadata.name for q in
                                self.client.list_kueue_objects(
                                    "localqueues", all_namespaces=True)),
                         ["a", "b"])
        # Listed first (the namespace's), then watched from the list's
        # revision.
        self.assertEqual(
            [(t, q.metadata.name) for t, q in
             self.client.watch_kueue_objects("LocalQueue", timeout=5)],
            [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "a")])
        self.assertEqual(self.fake.requests[-1].resource_version, "3")
        deleted = self.client.delete_kueue_object("LocalQueue", "a")
        self.assertEqual(deleted.metadata.name, "a")
        with self.assertRaises(jobset.NotFoundError) as caught:
            self.client.get_kueue_object("LocalQueue", "a")
        self.assertEqual(caught.exception.message,
                         'localqueues.kueue.x-k8s.io "a" not found')
        # A cluster-scoped kind is asked for without a namespace.
        with self.assertRaises(jobset.NotFoundError):
            self.client.get_kueue_object("cq", "none", namespace="x")
        self.assertEqual(self.fake.requests[-1].namespace, "")


    def test_list_pending_workloads_of_a_cluster_or_local_queue(self):
        items = self.client.list_pending_workloads("team-b")
        self.assertEqual([(w.position_in_cluster_queue, w.cluster_queue)
                          for w in items], [(0, "team-b"), (1, "team-b")])
        self.assertIsInstance(items[0], kueue_service_pb2.PendingWorkload)
        sent = self.fake.requests[-1]
        self.assertEqual((sent.cluster_queue, sent.local_queue,
                          sent.namespace, sent.limit, sent.offset),
                         ("team-b", "", "", 0, 0))
        self.client.list_pending_workloads(local_queue="team-b-queue",
                                           limit=10, offset=5)
        sent = self.fake.requests[-1]
        # The LocalQueue of the client's namespace, unless one is given.
        self.assertEqual((sent.cluster_queue, sent.local_queue,
                          sent.namespace, sent.limit, sent.offset),
                         ("", "team-b-queue", "team", 10, 5))
        self.client.list_pending_workloads(local_queue="q",
                                           namespace="team-b")
        self.assertEqual(self.fake.requests[-1].namespace, "team-b")
        with self.assertRaises(jobset.NotFoundError):
            self.client.list_pending_workloads("missing")

    def test_list_pending_workloads_checks_its_arguments(self):
        cases = [
            ({}, "exactly one of cluster_queue and local_queue"),
            ({"cluster_queue": "cq", "local_queue": "lq"},
             "exactly one of cluster_queue and local_queue"),
            ({"cluster_queue": "", "local_queue": ""},
             "exactly one of cluster_queue and local_queue"),
            ({"cluster_queue": "cq", "namespace": "team"},
             "namespace applies to local_queue only"),
            ({"cluster_queue": "cq", "limit": -1},
             "limit must be a whole number, 0 or more; got -1"),
            ({"local_queue": "lq", "offset": "5"},
             "offset must be a whole number, 0 or more; got '5'"),
        ]
        for kwargs, message in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(ValueError) as caught:
                    self.client.list_pending_workloads(**kwargs)
                self.assertIn(message, str(caught.exception))
        # local_queue is keyword-only: a second positional is refused.
        with self.assertRaises(TypeError):
            self.client.list_pending_workloads("cq", "lq")
        self.assertEqual(self.fake.requests, [])


if __name__ == "__main__":
    unittest.main()
