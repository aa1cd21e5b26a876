#ifndef JOBSET_CLI_OUTPUT_H_
#define JOBSET_CLI_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "google/protobuf/timestamp.pb.h"
#include "proto/agent.pb.h"
#include "proto/auth.pb.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "proto/jobset_service.pb.h"

// What jobsetctl prints: kubectl-style tables and the objects as JSON or
// YAML in Kubernetes' shape. Pure functions of their inputs (`now` is passed
// in).
namespace jobset::cli {

using Row = std::vector<std::string>;

// Formats `rows` (the first is the header) as kubectl does: left-aligned
// columns separated by three spaces, no trailing blanks; one line per row.
std::string FormatTable(const std::vector<Row>& rows);

// Formats an age as kubectl's HumanDuration: "45s", "3m12s", "25m", "5h10m",
// "2d3h", "120d", "3y". "<unknown>" for a zero (unset) `since`.
std::string FormatAge(absl::Time since, absl::Time now);

// Returns the time a Timestamp holds; absl::InfinitePast() when unset.
absl::Time ToTime(const google::protobuf::Timestamp& timestamp);

// The tables of `get`. Each starts with its header row.
std::vector<Row> JobSetRows(const std::vector<api::JobSet>& jobsets,
                            absl::Time now);
std::vector<Row> JobRows(const std::vector<api::Job>& jobs, absl::Time now);
// kubectl's pod columns: NAME READY STATUS RESTARTS AGE; `wide` (-o wide)
// adds IP (status.podIP, else the node's address: pods share their node's
// network) NODE NOMINATED NODE READINESS GATES.
std::vector<Row> PodRows(const std::vector<api::Pod>& pods, absl::Time now,
                         bool wide = false);
// kubectl's node columns: NAME STATUS ROLES AGE VERSION; `wide` adds
// INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME.
std::vector<Row> NodeRows(const std::vector<api::Node>& nodes, absl::Time now,
                          bool wide = false);

// Returns a node's STATUS column as kubectl prints it: "Ready" or
// "NotReady" (the Ready condition True or not; "Unknown" without one), with
// ",SchedulingDisabled" when spec.unschedulable.
std::string NodeStatusText(const api::Node& node);
// Returns a node's ROLES column: the roles its node-role.kubernetes.io/<role>
// and kubernetes.io/role labels name, sorted and comma-separated; "<none>".
std::string NodeRolesText(const api::Node& node);
std::vector<Row> EventRows(const std::vector<api::Event>& events,
                           absl::Time now);

// Users' tokens: NAME ID GROUPS AGE EXPIRES ("<never>" when unset; "in 3d"
// or "expired").
std::vector<Row> TokenRows(const std::vector<api::TokenInfo>& tokens,
                           absl::Time now);
// Roles and bindings: NAME AGE, with NAMESPACE first when `namespaces`.
std::vector<Row> RbacRows(const std::vector<api::RbacObject>& objects,
                          bool namespaces, absl::Time now);

// Namespace objects: NAME STATUS AGE (STATUS is always "Active": jobsetd
// deletes a Namespace object at once).
std::vector<Row> NamespaceRows(const std::vector<api::Namespace>& namespaces,
                               absl::Time now);

// Secrets: NAME TYPE DATA AGE (DATA: how many keys); ConfigMaps: NAME DATA
// AGE (keys of data and binaryData), as kubectl prints them.
std::vector<Row> SecretRows(const std::vector<api::Secret>& secrets,
                            absl::Time now);
std::vector<Row> ConfigMapRows(const std::vector<api::ConfigMap>& config_maps,
                               absl::Time now);

// Returns a pod's STATUS column: the reason of a waiting or failed container
// ("OOMKilled", "Error"), the pod's reason, else its phase; ",Straggler"
// after it while jobsetd flags the pod a straggler (our addition).
std::string PodStatusText(const api::Pod& pod);

// Returns the `message` in Kubernetes' JSON shape: protobuf's JSON mapping
// with the fields' json names (camelCase, as upstream), with "apiVersion" and
// "kind" first when `api_version` and `kind` are non-empty and the message
// has none of its own. Indented by 4 spaces, as kubectl -o json.
std::string ToJson(const google::protobuf::Message& message,
                   absl::string_view api_version = "",
                   absl::string_view kind = "");

// As ToJson, but YAML (block style, 2 spaces, strings quoted where YAML
// would read them as another type).
std::string ToYaml(const google::protobuf::Message& message,
                   absl::string_view api_version = "",
                   absl::string_view kind = "");

// Returns the messages as a Kubernetes List
// ({"apiVersion": "v1", "kind": "List", "items": [...]}), each item with
// `api_version` and `kind` as in ToJson; as JSON or, if `yaml`, YAML.
std::string ToList(const std::vector<const google::protobuf::Message*>& items,
                   absl::string_view api_version, absl::string_view kind,
                   bool yaml);

// Returns the JSON object `json` as ToJson (`yaml` false) or ToYaml lay an
// object out, its keys in the order `json` has them: for documents that are
// no one message (Kueue's PendingWorkloadsSummary). `json` must be valid
// JSON (text the caller wrote).
std::string FormatJsonDocument(absl::string_view json, bool yaml);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_OUTPUT_H_
