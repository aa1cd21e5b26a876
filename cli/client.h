#ifndef JOBSET_CLI_CLIENT_H_
#define JOBSET_CLI_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cli/kubeconfig.h"
#include "cli/retry.h"
#include "common/clock.h"
#include "common/replicas.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "proto/agent.grpc.pb.h"
#include "proto/auth.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "proto/kueue_service.grpc.pb.h"

namespace jobset::cli {

// jobsetd's JobSetService and NodeService for jobsetctl: every call has a
// deadline (`timeout` from the call, retries included), lists are read page
// by page and returned whole, and errors come back as absl::Status with
// jobsetd's code and message. A call that finds no leader (a failover) is
// sent again, as client-go does (cli/retry.h): at once at the leader a
// follower names or at the next replica, and once every replica failed in a
// row after a jittered back-off (100 ms doubling to 2 s, waited on the
// Clock), until the timeout. A request that may have reached jobsetd before
// its connection broke is sent again only when repeating it is harmless
// (Repeat). When jobsetd cannot be reached the status is kUnavailable (or
// kDeadlineExceeded) and its message names the address, the replicas tried
// and the last error. Thread-safe: calls may run at once from several
// threads (the stubs are thread-safe; the replica list locks); `apply -f`
// relies on it.
// The channel credentials for `connection` (TLS or plaintext); sets the
// server name override on `args` when the connection names one.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(
    const Connection& connection, grpc::ChannelArguments* args);

class Client {
 public:
  // Plaintext to `address` (jobsetd --insecure, or before issue 20).
  // The back-off between attempts waits on `clock` (not owned; outlives
  // the Client).
  Client(std::string address, absl::Duration timeout,
         Clock* clock = RealClock::Get());
  // As `connection` says: TLS with its CA, server name and client
  // certificate, and its bearer token (per-call credentials, over TLS
  // only: a plaintext connection never sends the token).
  Client(Connection connection, absl::Duration timeout,
         Clock* clock = RealClock::Get());

  // The replica calls go to now (the leader, once a call was redirected).
  std::string address() const;

  // A named JobSet's create is sent again after a failure that may have
  // followed its commit (jobsetd answers the repeat "created: false" when it
  // finds the same spec); `repeated`, when given, is set to whether that
  // happened, so that the caller can tell its own JobSet from another's. A
  // generateName create is not sent again (a repeat would make another).
  absl::StatusOr<api::CreateJobSetResponse> Create(
      const api::CreateJobSetRequest& request, bool* repeated = nullptr);
  absl::StatusOr<api::JobSet> Get(const api::GetJobSetRequest& request);
  absl::StatusOr<api::ListJobSetsResponse> List(
      const api::ListJobSetsRequest& request);
  absl::StatusOr<api::JobSet> Update(const api::UpdateJobSetRequest& request);
  absl::StatusOr<api::JobSet> Delete(const api::DeleteJobSetRequest& request);
  absl::StatusOr<api::JobSet> Suspend(const api::SuspendJobSetRequest& request);
  absl::StatusOr<api::JobSet> Resume(const api::ResumeJobSetRequest& request);
  absl::StatusOr<api::ListJobsResponse> ListJobs(
      const api::ListJobsRequest& request);
  absl::StatusOr<api::ListPodsResponse> ListPods(
      const api::ListPodsRequest& request);
  absl::StatusOr<api::ListEventsResponse> ListEvents(
      const api::ListEventsRequest& request);
  // jobsetd's version (JobSetService.GetVersion).
  absl::StatusOr<api::VersionInfo> GetVersion();
  // v1 Namespace objects (JobSetService).
  absl::StatusOr<api::ApplyNamespaceResponse> ApplyNamespace(
      const api::ApplyNamespaceRequest& request);
  absl::StatusOr<api::Namespace> GetNamespace(const std::string& name);
  absl::StatusOr<api::ListNamespacesResponse> ListNamespaces(
      const api::ListNamespacesRequest& request);
  absl::StatusOr<api::Namespace> DeleteNamespace(const std::string& name);
  // v1 Secret and ConfigMap objects (JobSetService).
  absl::StatusOr<api::ApplySecretResponse> ApplySecret(
      const api::ApplySecretRequest& request);
  absl::StatusOr<api::Secret> GetSecret(const std::string& ns,
                                        const std::string& name);
  absl::StatusOr<api::ListSecretsResponse> ListSecrets(
      const api::ListSecretsRequest& request);
  absl::StatusOr<api::Secret> DeleteSecret(const std::string& ns,
                                           const std::string& name);
  absl::StatusOr<api::ApplyConfigMapResponse> ApplyConfigMap(
      const api::ApplyConfigMapRequest& request);
  absl::StatusOr<api::ConfigMap> GetConfigMap(const std::string& ns,
                                              const std::string& name);
  absl::StatusOr<api::ListConfigMapsResponse> ListConfigMaps(
      const api::ListConfigMapsRequest& request);
  absl::StatusOr<api::ConfigMap> DeleteConfigMap(const std::string& ns,
                                                 const std::string& name);

  absl::StatusOr<api::ListNodesResponse> ListNodes();
  absl::StatusOr<api::Node> GetNode(const std::string& name);
  absl::StatusOr<api::Node> CordonNode(const std::string& name);
  absl::StatusOr<api::Node> UncordonNode(const std::string& name);
  absl::StatusOr<api::Node> DrainNode(const std::string& name);
  absl::StatusOr<api::Node> DeleteNode(const std::string& name);
  // label|taint node (NodeService.LabelNode, TaintNode). A label edit is
  // sent again after an ambiguous failure (setting and removing labels
  // twice is harmless); a taint edit is not (a repeat would fail "already
  // has" or "not found").
  absl::StatusOr<api::Node> LabelNode(const api::LabelNodeRequest& request);
  absl::StatusOr<api::Node> TaintNode(const api::TaintNodeRequest& request);

  // AccessService.
  absl::StatusOr<api::CreateTokenResponse> CreateToken(
      const api::CreateTokenRequest& request);
  absl::StatusOr<api::ListTokensResponse> ListTokens();
  absl::StatusOr<api::TokenInfo> DeleteToken(const std::string& name);
  absl::StatusOr<api::RotateJoinTokenResponse> RotateJoinToken(
      const api::RotateJoinTokenRequest& request);
  absl::StatusOr<api::RbacObject> ApplyRbac(const api::RbacObject& object);
  absl::StatusOr<api::RbacObject> DeleteRbac(const api::RbacObjectRef& ref);
  absl::StatusOr<api::ListRbacResponse> ListRbac(
      const api::ListRbacRequest& request);
  absl::StatusOr<api::AccessReviewResult> ReviewAccess(
      const api::AccessReview& review);

  // KueueService (proto/kueue_service.proto): Kueue's objects, the kind
  // named by its Kind. An apply is sent again after an ambiguous failure
  // unless create_only (a repeat would answer AlreadyExists for its own
  // object); a delete is not.
  absl::StatusOr<api::ApplyKueueObjectResponse> ApplyKueueObject(
      const api::ApplyKueueObjectRequest& request);
  absl::StatusOr<api::KueueObject> GetKueueObject(
      const api::KueueObjectRef& ref);
  absl::StatusOr<api::ListKueueObjectsResponse> ListKueueObjects(
      const api::ListKueueObjectsRequest& request);
  absl::StatusOr<api::KueueObject> DeleteKueueObject(
      const api::KueueObjectRef& ref);
  // Kueue's visibility API: the Workloads pending in a ClusterQueue, or in
  // a LocalQueue of a namespace, in the order they are offered, with their
  // positions (one page: the request's limit and offset).
  absl::StatusOr<api::PendingWorkloadsSummary> ListPendingWorkloads(
      const api::ListPendingWorkloadsRequest& request);
  // Streams WatchKueueObjects events as Watch streams JobSets'.
  absl::Status WatchKueueObjects(
      const api::WatchKueueObjectsRequest& request, absl::Time deadline,
      const std::function<bool(const api::KueueWatchEvent&)>& on_event);

  // Streams AccessService.SaveSnapshot's chunks to `on_chunk` until the
  // last one (or `on_chunk` returns false: then OK) or `deadline`.
  absl::Status SaveSnapshot(
      absl::Time deadline,
      const std::function<bool(const api::SnapshotChunk&)>& on_chunk);

  // Streams WatchJobSets events to `on_event` until it returns false (then
  // OK), the stream ends, or `deadline` passes (kDeadlineExceeded).
  absl::Status Watch(
      const api::WatchJobSetsRequest& request, absl::Time deadline,
      const std::function<bool(const api::WatchEvent&)>& on_event);

  // Streams pod output (PodLogService) to `on_data` until the stream ends.
  absl::Status Logs(const api::GetPodLogsRequest& request,
                    const std::function<void(const std::string&)>& on_data);

 private:
  // Runs `call` with a fresh context, at replicas until one answers, the
  // answer is not a failover's, or timeout_ passes (one deadline for the
  // attempts together). `repeat`: whether an attempt that may have reached
  // jobsetd may be followed by another; `repeated`, when given, is set to
  // whether one was.
  template <typename Response, typename Call>
  absl::StatusOr<Response> Unary(absl::string_view method, Call call,
                                 Repeat repeat = Repeat::kSafe,
                                 bool* repeated = nullptr);
  // Reads every page of a List (`call` with each page's request, from
  // `request`'s continue on), each page with its own deadline, and returns
  // the items together with the first page's resourceVersion. Starts over
  // (a few times) when jobsetd says the list's continue is too old.
  template <typename Response, typename Request, typename Call>
  absl::StatusOr<Response> ListAll(absl::string_view method,
                                   const Request& request, Call call);
  // Reads a server stream (`open` starts it on a replica's stubs) into
  // `on_item` until it ends or `on_item` returns false (then OK); opened
  // again at the leader (or the next replica) only while it gave nothing,
  // within timeout_ as a unary call. `address`: the replica that answered
  // last; `note`: what the attempts add to an error (Attempts::Note).
  template <typename Item, typename Open, typename OnItem>
  grpc::Status ReadStream(absl::string_view method, absl::Time deadline,
                          Open open, OnItem on_item, std::string* address,
                          std::string* note);
  // A watch: ReadStream until `deadline` (then kDeadlineExceeded, "watch
  // deadline passed") or an error, converted as a unary call's.
  template <typename Event, typename Open, typename OnEvent>
  absl::Status WatchStream(absl::string_view method, absl::Time deadline,
                           Open open, OnEvent on_event);
  // `note`: what the attempts tried, appended to a failover's error.
  absl::Status Convert(const grpc::Status& status, absl::string_view method,
                       absl::string_view address, absl::string_view note = "");
  // One replica's channel and stubs.
  struct Stubs {
    std::string address;
    std::unique_ptr<api::JobSetService::Stub> jobsets;
    std::unique_ptr<api::NodeService::Stub> nodes;
    std::unique_ptr<api::PodLogService::Stub> logs;
    std::unique_ptr<api::AccessService::Stub> access;
    std::unique_ptr<api::KueueService::Stub> kueue;
  };
  // The stubs for replicas_.current(), made when it changes.
  std::shared_ptr<const Stubs> CurrentStubs();
  // After an attempt at `address` ended with `status`: tells the replica
  // list, and whether to make it again (after the back-off `attempts`
  // waits, if any).
  bool TryAgain(const grpc::ClientContext& context, const grpc::Status& status,
                const std::string& address, Attempts* attempts);

  Connection connection_;
  absl::Duration timeout_;
  Clock* clock_;
  // connection_.address: one replica or several (an error if it is not a
  // list of HOST:PORT; every call then returns it).
  absl::StatusOr<Replicas> replicas_;
  absl::Mutex mu_;
  std::shared_ptr<const Stubs> stubs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CLIENT_H_
