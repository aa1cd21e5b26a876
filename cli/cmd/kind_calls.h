#ifndef JOBSET_CLI_CMD_KIND_CALLS_H_
#define JOBSET_CLI_CMD_KIND_CALLS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cli/client.h"
#include "cli/cmd/kinds.h"
#include "cli/describe.h"
#include "cli/output.h"
#include "google/protobuf/message.h"

// The Client calls the kinds table (kinds.cc) points at, by kind, with the
// shapes of KindCalls. Internal to the table: verbs call them through it.
namespace jobset::cli {

// A created/unchanged answer (an Apply<Kind>Response) as an Applied.
template <typename Response>
absl::StatusOr<Applied> AppliedOf(const absl::StatusOr<Response>& response,
                                  const std::string& name) {
  if (!response.ok()) return response.status();
  Applied applied;
  applied.outcome = response->created()     ? Applied::kCreated
                    : response->unchanged() ? Applied::kUnchanged
                                            : Applied::kConfigured;
  applied.name = name;
  return applied;
}

// JobSets (JobSetService). ApplyJobSet replaces labels, annotations and
// spec of one that exists (apply's "configure"); create_only creates.
absl::StatusOr<Object> GetJobSet(Client& client, const std::string& ns,
                                 const std::string& name);
absl::StatusOr<ListResult> ListJobSets(Client& client,
                                       const ListOptions& options);
absl::Status WatchJobSets(
    Client& client, const ListOptions& options,
    const std::string& resource_version, absl::Time deadline,
    const std::function<bool(const std::string&, const Object&)>& on_event);
absl::StatusOr<Applied> ApplyJobSet(Client& client,
                                    const google::protobuf::Message& message,
                                    const ApplyOptions& options);
absl::Status DeleteJobSet(Client& client, const std::string& ns,
                          const std::string& name);
absl::StatusOr<std::string> DescribeJobSetNamed(Client& client,
                                                const std::string& ns,
                                                const std::string& name,
                                                absl::Time now);

// A JobSet's jobs, pods and events: in options' namespace, or with
// all_namespaces in each namespace that holds a JobSet.
absl::StatusOr<ListResult> ListJobs(Client& client, const ListOptions& options);
absl::StatusOr<ListResult> ListPods(Client& client, const ListOptions& options);
absl::StatusOr<ListResult> ListEvents(Client& client,
                                      const ListOptions& options);

// Nodes (NodeService); cluster-scoped, so `ns` is ignored.
absl::StatusOr<Object> GetNode(Client& client, const std::string& ns,
                               const std::string& name);
absl::StatusOr<ListResult> ListNodes(Client& client,
                                     const ListOptions& options);
absl::Status DeleteNode(Client& client, const std::string& ns,
                        const std::string& name);
absl::StatusOr<std::string> DescribeNodeNamed(Client& client,
                                              const std::string& ns,
                                              const std::string& name,
                                              absl::Time now);

// v1 Namespace, Secret and ConfigMap objects (JobSetService).
absl::StatusOr<Object> GetNamespace(Client& client, const std::string& ns,
                                    const std::string& name);
absl::StatusOr<ListResult> ListNamespaces(Client& client,
                                          const ListOptions& options);
absl::StatusOr<Applied> ApplyNamespace(Client& client,
                                       const google::protobuf::Message& message,
                                       const ApplyOptions& options);
absl::Status DeleteNamespace(Client& client, const std::string& ns,
                             const std::string& name);
absl::StatusOr<Object> GetSecret(Client& client, const std::string& ns,
                                 const std::string& name);
absl::StatusOr<ListResult> ListSecrets(Client& client,
                                       const ListOptions& options);
absl::StatusOr<Applied> ApplySecret(Client& client,
                                    const google::protobuf::Message& message,
                                    const ApplyOptions& options);
absl::Status DeleteSecret(Client& client, const std::string& ns,
                          const std::string& name);
absl::StatusOr<std::string> DescribeSecretNamed(Client& client,
                                                const std::string& ns,
                                                const std::string& name,
                                                absl::Time now);
absl::StatusOr<Object> GetConfigMap(Client& client, const std::string& ns,
                                    const std::string& name);
absl::StatusOr<ListResult> ListConfigMaps(Client& client,
                                          const ListOptions& options);
absl::StatusOr<Applied> ApplyConfigMap(Client& client,
                                       const google::protobuf::Message& message,
                                       const ApplyOptions& options);
absl::Status DeleteConfigMap(Client& client, const std::string& ns,
                             const std::string& name);
absl::StatusOr<std::string> DescribeConfigMapNamed(Client& client,
                                                   const std::string& ns,
                                                   const std::string& name,
                                                   absl::Time now);

// Users' tokens (AccessService).
absl::StatusOr<ListResult> ListTokens(Client& client,
                                      const ListOptions& options);
absl::Status DeleteToken(Client& client, const std::string& ns,
                         const std::string& name);

// RBAC objects (AccessService). ApplyRbacObject takes an api::RbacObject of
// any of the four kinds; AccessService has no server-side dry run, so a dry
// run only reads whether it exists.
absl::StatusOr<Applied> ApplyRbacObject(
    Client& client, const google::protobuf::Message& message,
    const ApplyOptions& options);
absl::StatusOr<ListResult> ListRoles(Client& client,
                                     const ListOptions& options);
absl::StatusOr<ListResult> ListClusterRoles(Client& client,
                                            const ListOptions& options);
absl::StatusOr<ListResult> ListRoleBindings(Client& client,
                                            const ListOptions& options);
absl::StatusOr<ListResult> ListClusterRoleBindings(Client& client,
                                                   const ListOptions& options);
absl::Status DeleteRole(Client& client, const std::string& ns,
                        const std::string& name);
absl::Status DeleteClusterRole(Client& client, const std::string& ns,
                               const std::string& name);
absl::Status DeleteRoleBinding(Client& client, const std::string& ns,
                               const std::string& name);
absl::Status DeleteClusterRoleBinding(Client& client, const std::string& ns,
                                      const std::string& name);
// Roles' and bindings' table: NAME AGE.
std::vector<Row> RoleRows(const std::vector<Object>& objects, absl::Time now,
                          bool wide);
std::vector<Row> RoleBindingRows(const std::vector<Object>& objects,
                                 absl::Time now, bool wide);

// Kueue's objects (KueueService; kueue_calls.cc). ApplyKueueObject takes an
// api::KueueObject of any of the six kinds (a cluster-scoped one's
// namespace dropped, as the API server drops it); KueueCalls gives the
// calls of the kind whose Kind is `kind` ("ClusterQueue"; none for another
// word). describe prints the object as kubectl's generic describer does,
// with the events of its namespace ("default" when cluster-scoped) that
// regard it.
absl::StatusOr<Applied> ApplyKueueObject(
    Client& client, const google::protobuf::Message& message,
    const ApplyOptions& options);
KindCalls KueueCalls(absl::string_view kind);

// How Kueue holds a JobSet or a Workload, for describe (kueue_lookup.cc).
// LookUpKueue reads the JobSet's queue-name label, the Workload labelled
// kueue.x-k8s.io/job-uid=<its uid> in its namespace and, when that waits for
// quota, FindPendingPosition: its entry among its LocalQueue's pending
// Workloads (ListPendingWorkloads in the LocalQueue form, page by page).
// Neither fails: a call that does (PERMISSION_DENIED, UNIMPLEMENTED from an
// older jobsetd, ...) is recorded in what they return.
KueueLookup LookUpKueue(Client& client, const api::JobSet& jobset);
PendingPosition FindPendingPosition(Client& client,
                                    const api::Workload& workload);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_KIND_CALLS_H_
