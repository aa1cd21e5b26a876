#ifndef JOBSET_STORE_KEYS_H_
#define JOBSET_STORE_KEYS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

// The key schema: every key jobsetd writes, in one place (store/README.md
// describes it). Namespaces and names are DNS labels and subdomains, so they
// never contain '/', and a prefix never matches a longer sibling.
namespace jobset::store::keys {

// JobSets: "jobsets/<namespace>/<name>" -> jobset::api::JobSet (binary
// protobuf, metadata.resourceVersion left empty: it is the key's revision).
inline constexpr absl::string_view kJobSets = "jobsets/";

// Returns the prefix of every JobSet in `ns`.
inline std::string JobSetPrefix(absl::string_view ns) {
  return absl::StrCat(kJobSets, ns, "/");
}

// Returns the key of JobSet `ns`/`name`.
inline std::string JobSetKey(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(kJobSets, ns, "/", name);
}

// Child Jobs: "jobs/<namespace>/<jobset>/<job>" -> jobset::api::Job.
inline constexpr absl::string_view kJobs = "jobs/";
// Pods: "pods/<namespace>/<jobset>/<job>" -> jobset::api::JobPods, the
// records of one Job's pods (the full Pod is built from the Job and its
// record: scheduler/controller/pods.h).
inline constexpr absl::string_view kPods = "pods/";

// Returns the key of child Job `job` of JobSet `ns`/`jobset`.
inline std::string JobKey(absl::string_view ns, absl::string_view jobset,
                          absl::string_view job) {
  return absl::StrCat(kJobs, ns, "/", jobset, "/", job);
}

// Returns the key of the pods of child Job `job` of JobSet `ns`/`jobset`.
inline std::string JobPodsKey(absl::string_view ns, absl::string_view jobset,
                              absl::string_view job) {
  return absl::StrCat(kPods, ns, "/", jobset, "/", job);
}

// Events: "events/<namespace>/<jobset>/<seq>" -> jobset::api::Event, where
// <seq> is a 20-digit zero-padded number that grows with time (the event's
// unix nanoseconds, bumped to stay unique), so a prefix scan lists a JobSet's
// events oldest first. The controller writes them and keeps a bounded number
// per JobSet; they go with their JobSet.
inline constexpr absl::string_view kEvents = "events/";

// Returns the prefix of the events of JobSet `ns`/`jobset`.
inline std::string EventPrefix(absl::string_view ns, absl::string_view jobset) {
  return absl::StrCat(kEvents, ns, "/", jobset, "/");
}

// Returns the key of event `seq` of JobSet `ns`/`jobset`.
inline std::string EventKey(absl::string_view ns, absl::string_view jobset,
                            uint64_t seq) {
  return absl::StrCat(EventPrefix(ns, jobset),
                      absl::Dec(seq, absl::kZeroPad20));
}

// Earlier attempts' pods (jobsetd's addition, docs/resilience.md), so that
// their logs can be found after a restart renamed the pods:
// "attemptpods/<namespace>/<jobset>/<attempt>/<part>" ->
// jobset::api::AttemptPods, <attempt> a 10-digit zero-padded number (so a
// prefix scan lists a JobSet's attempts oldest first), and
// "attempts/<namespace>/<jobset>" -> jobset::api::AttemptHistory, which of
// them are stored. The controller writes both (the last --attempt_history
// attempts) and deletes them with their JobSet.
inline constexpr absl::string_view kAttempts = "attempts/";
inline constexpr absl::string_view kAttemptPods = "attemptpods/";

// Returns the key of the attempt history of JobSet `ns`/`jobset`.
inline std::string AttemptHistoryKey(absl::string_view ns,
                                     absl::string_view jobset) {
  return absl::StrCat(kAttempts, ns, "/", jobset);
}

// Returns the prefix of the pods of attempt `attempt` of JobSet
// `ns`/`jobset` (every part's key; with attempt < 0, every attempt's).
inline std::string AttemptPodsPrefix(absl::string_view ns,
                                     absl::string_view jobset,
                                     int attempt = -1) {
  if (attempt < 0) return absl::StrCat(kAttemptPods, ns, "/", jobset, "/");
  return absl::StrCat(kAttemptPods, ns, "/", jobset, "/",
                      absl::Dec(attempt, absl::kZeroPad10), "/");
}

// Returns the key of part `part` of the pods of attempt `attempt` of JobSet
// `ns`/`jobset`.
inline std::string AttemptPodsKey(absl::string_view ns,
                                  absl::string_view jobset, int attempt,
                                  int part) {
  return absl::StrCat(AttemptPodsPrefix(ns, jobset, attempt), part);
}

// Journaled commits: "journal/<id>" -> jobset::api::JournalCommit and
// "journal/<id>/<part>" -> jobset::api::JournalPart, a commit of the
// controller too large for one transaction while it is being applied
// (scheduler/controller/pass_journal.h). Empty between commits.
inline constexpr absl::string_view kJournal = "journal/";

// Leader election on etcd: "leader/<lease id>" -> the candidate's address,
// each key bound to its etcd lease (scheduler/ha/leader_election.h). Left
// out of snapshots: the leases do not outlive the cluster they were made in.
inline constexpr absl::string_view kLeader = "leader/";

// The cluster CA shared by replicas: "auth/ca" -> jobset::api::SharedCa,
// its key sealed with the cluster secret (scheduler/auth/shared_ca.h).
// Written once, by the first jobsetd started with --cluster_secret_file.
inline constexpr absl::string_view kSharedCa = "auth/ca";

// Nodes: "nodes/<name>" -> jobset::api::Node (the registration and whether
// it is cordoned; liveness is not stored).
inline constexpr absl::string_view kNodes = "nodes/";

// Returns the key of node `name`.
inline std::string NodeKey(absl::string_view name) {
  return absl::StrCat(kNodes, name);
}

// Node quarantine (jobsetd's addition, docs/resilience.md):
// "quarantine/<node>" -> jobset::api::NodeFaultRecord (the failures
// attributed to the node within the window, and whether it is quarantined).
inline constexpr absl::string_view kQuarantine = "quarantine/";

// Returns the key of node `name`'s quarantine record.
inline std::string QuarantineKey(absl::string_view name) {
  return absl::StrCat(kQuarantine, name);
}

// Namespaces: "namespaces/<name>" -> jobset::api::Namespace (a v1 Namespace
// object: its labels set the namespace's Pod Security level; a namespace
// needs none to hold JobSets).
inline constexpr absl::string_view kNamespaces = "namespaces/";

// Returns the key of Namespace `name`.
inline std::string NamespaceKey(absl::string_view name) {
  return absl::StrCat(kNamespaces, name);
}

// Secrets: "secrets/<namespace>/<name>" -> jobset::api::Secret (a v1
// Secret as stored: stringData folded into data, resourceVersion left
// empty). ConfigMaps: "configmaps/<namespace>/<name>" ->
// jobset::api::ConfigMap. Both stay when their namespace's Namespace object
// is deleted, as JobSets do.
inline constexpr absl::string_view kSecrets = "secrets/";
inline constexpr absl::string_view kConfigMaps = "configmaps/";

// Returns the prefix of every Secret in `ns`.
inline std::string SecretPrefix(absl::string_view ns) {
  return absl::StrCat(kSecrets, ns, "/");
}

// Returns the key of Secret `ns`/`name`.
inline std::string SecretKey(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(kSecrets, ns, "/", name);
}

// Returns the prefix of every ConfigMap in `ns`.
inline std::string ConfigMapPrefix(absl::string_view ns) {
  return absl::StrCat(kConfigMaps, ns, "/");
}

// Returns the key of ConfigMap `ns`/`name`.
inline std::string ConfigMapKey(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(kConfigMaps, ns, "/", name);
}

// Kueue's objects: "kueue/<plural>/<name>" for the cluster-scoped kinds
// (resourceflavors, clusterqueues, cohorts, workloadpriorityclasses) and
// "kueue/<plural>/<namespace>/<name>" for the namespaced ones (localqueues,
// workloads) -> jobset::api::KueueObject (proto/kueue.proto), resourceVersion
// left empty. `plural` is the RBAC resource name.
inline constexpr absl::string_view kKueue = "kueue/";

// Returns the prefix of every object of `plural` (in `ns` when it is not
// empty: a namespaced kind's one namespace).
inline std::string KueuePrefix(absl::string_view plural, absl::string_view ns) {
  if (ns.empty()) return absl::StrCat(kKueue, plural, "/");
  return absl::StrCat(kKueue, plural, "/", ns, "/");
}

// Returns the key of object `name` of `plural` (`ns` empty for a
// cluster-scoped kind).
inline std::string KueueKey(absl::string_view plural, absl::string_view ns,
                            absl::string_view name) {
  return absl::StrCat(KueuePrefix(plural, ns), name);
}

}  // namespace jobset::store::keys

#endif  // JOBSET_STORE_KEYS_H_
