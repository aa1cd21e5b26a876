// KueueService over real gRPC, in process: bearer tokens, RBAC with the
// built-in roles, the audit log, watches and their limits.
#include "scheduler/server/kueue_service.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/kueue_manifest.h"
#include "auth/rbac.h"
#include "auth/rbac_testing.h"
#include "common/clock.h"
#include "common/grpc_status.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/kueue_service.grpc.pb.h"
#include "scheduler/auth/access_store.h"
#include "scheduler/auth/audit_log.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/server/kueue_api.h"
#include "scheduler/server/stream_limiter.h"
#include "scheduler/server/stream_ticker.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kClusterQueue[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: research}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 8}]}]
)";

constexpr char kWorkload[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: a}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{name: c, image: i}]
)";

std::string LocalQueue(absl::string_view name, absl::string_view ns) {
  return absl::StrCat(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
      "metadata: {name: ",
      name, ns.empty() ? "" : absl::StrCat(", namespace: ", ns),
      "}\nspec: {clusterQueue: research}\n");
}

api::ApplyKueueObjectRequest Request(absl::string_view manifest) {
  absl::StatusOr<api::KueueObject> object = api::ParseKueueDocument(manifest);
  EXPECT_THAT(object.status(), IsOk()) << manifest;
  api::ApplyKueueObjectRequest request;
  *request.mutable_object() = object.value_or(api::KueueObject());
  return request;
}

api::KueueObjectRef Ref(absl::string_view kind, absl::string_view name,
                        absl::string_view ns = "") {
  api::KueueObjectRef ref;
  ref.set_kind(std::string(kind));
  ref.set_namespace_(std::string(ns));
  ref.set_name(std::string(name));
  return ref;
}

class KueueServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<AccessStore>> access =
        AccessStore::Load(&access_store_);
    ASSERT_THAT(access.status(), IsOk());
    access_ = *std::move(access);
    audit_path_ = absl::StrCat(
        ::testing::TempDir(), "/audit-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        ".log");
    std::remove(audit_path_.c_str());
    absl::StatusOr<std::unique_ptr<AuditLog>> audit =
        AuditLog::Open(audit_path_, /*audit_reads=*/false, &clock_);
    ASSERT_THAT(audit.status(), IsOk());
    audit_ = *std::move(audit);
    auth_ = std::make_unique<RequestAuth>(RequestAuth::Options{
        .access = access_.get(), .clock = &clock_, .audit = audit_.get()});
    service_ = std::make_unique<KueueServiceImpl>(&api_, auth_.get(), &ticker_,
                                                  &streams_);

    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(service_.get());
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(audit_->InterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = api::KueueService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));

    // root: cluster-admin.
    Bind(auth::testing::ClusterRoleBinding("root", "cluster-admin",
                                           {auth::testing::User("root")}));
    root_ = Token("root");
  }

  void TearDown() override {
    service_->Shutdown();
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  }

  std::string Token(const std::string& user,
                    std::vector<std::string> groups = {}) {
    api::CreateTokenRequest request;
    request.set_name(user);
    for (std::string& g : groups) request.add_groups(std::move(g));
    absl::StatusOr<api::CreateTokenResponse> created =
        access_->CreateToken(request, "root", clock_.Now());
    EXPECT_THAT(created.status(), IsOk());
    return created.ok() ? created->token() : "";
  }

  void Bind(const api::RbacObject& binding) {
    ASSERT_THAT(access_->PutRbac(binding).status(), IsOk());
  }

  // A context carrying `token` (none when empty).
  static std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) {
      context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
    }
    context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    return context;
  }

  absl::StatusOr<api::ApplyKueueObjectResponse> Apply(
      const std::string& token, const api::ApplyKueueObjectRequest& request) {
    api::ApplyKueueObjectResponse response;
    grpc::Status status =
        stub_->ApplyKueueObject(As(token).get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }
  absl::StatusOr<api::KueueObject> Get(const std::string& token,
                                       const api::KueueObjectRef& ref) {
    api::KueueObject response;
    grpc::Status status =
        stub_->GetKueueObject(As(token).get(), ref, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }
  absl::StatusOr<api::KueueObject> Delete(const std::string& token,
                                          const api::KueueObjectRef& ref) {
    api::KueueObject response;
    grpc::Status status =
        stub_->DeleteKueueObject(As(token).get(), ref, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }
  absl::StatusOr<std::vector<std::string>> List(const std::string& token,
                                                absl::string_view kind,
                                                absl::string_view ns = "",
                                                bool all = false) {
    api::ListKueueObjectsRequest request;
    request.set_kind(std::string(kind));
    request.set_namespace_(std::string(ns));
    request.set_all_namespaces(all);
    api::ListKueueObjectsResponse response;
    grpc::Status status =
        stub_->ListKueueObjects(As(token).get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    std::vector<std::string> names;
    for (const api::KueueObject& item : response.items()) {
      const api::ObjectMeta& meta = api::KueueObjectMeta(item);
      names.push_back(absl::StrCat(meta.namespace_(), "/", meta.name()));
    }
    return names;
  }

  std::string AuditText() {
    std::ifstream in(audit_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  FakeClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  store::MemoryStore access_store_;
  store::MemoryStore store_{/*history_events=*/1000};
  std::unique_ptr<AccessStore> access_;
  std::string audit_path_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<RequestAuth> auth_;
  KueueApi api_{&store_, &clock_};
  StreamLimiter streams_{1};
  StreamTicker ticker_{&store_};
  std::unique_ptr<KueueServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<api::KueueService::Stub> stub_;
  std::string root_;
};

// The service's attributes and the authorizer's table agree on every kind.
TEST(KueueKindsRbacTest, EachKindIsItsResourceInKueuesGroup) {
  EXPECT_EQ(auth::kKueueGroup, api::kKueueApiGroup);
  for (const api::KueueKind& kind : api::KueueKinds()) {
    EXPECT_EQ(auth::ApiGroupOf(kind.resource), api::kKueueApiGroup)
        << kind.kind;
    EXPECT_EQ(auth::IsClusterScoped(kind.resource), !kind.namespaced)
        << kind.kind;
  }
}

TEST_F(KueueServiceTest, ViewReadsButCannotApplyAClusterQueue) {
  Bind(auth::testing::ClusterRoleBinding("viewers", "view",
                                         {auth::testing::User("alice")}));
  const std::string alice = Token("alice");
  EXPECT_THAT(Apply(alice, Request(kClusterQueue)),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       "clusterqueues.kueue.x-k8s.io \"research\" is "
                       "forbidden: User \"alice\" cannot create resource "
                       "\"clusterqueues\" in API group \"kueue.x-k8s.io\" at "
                       "the cluster scope"));
  EXPECT_EQ(store_.CurrentRevision(), 0);
  // The refusal is audited as kube-apiserver would record it.
  EXPECT_THAT(
      AuditText(),
      AllOf(HasSubstr("\"requestURI\":\"/apis/kueue.x-k8s.io/v1beta1/"
                      "clusterqueues\""),
            HasSubstr("\"verb\":\"create\""),
            HasSubstr("\"username\":\"alice\""), HasSubstr("\"code\":403")));

  ASSERT_THAT(Apply(root_, Request(kClusterQueue)), IsOk());
  EXPECT_THAT(AuditText(), HasSubstr("\"username\":\"root\""));
  absl::StatusOr<api::KueueObject> got =
      Get(alice, Ref("ClusterQueue", "research"));
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->cluster_queue().spec().queueing_strategy(), "BestEffortFIFO");
  EXPECT_THAT(List(alice, "ClusterQueue"),
              IsOkAndHolds(ElementsAre("/research")));
  EXPECT_THAT(Delete(alice, Ref("ClusterQueue", "research")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("cannot delete resource \"clusterqueues\"")));
}

TEST_F(KueueServiceTest, AdminOfANamespaceAppliesItsLocalQueuesOnly) {
  Bind(auth::testing::RoleBinding("a", "bob-admin", "ClusterRole", "admin",
                                  {auth::testing::User("bob")}));
  const std::string bob = Token("bob");
  absl::StatusOr<api::ApplyKueueObjectResponse> applied =
      Apply(bob, Request(LocalQueue("lq", "a")));
  ASSERT_THAT(applied, IsOk());
  EXPECT_TRUE(applied->created());
  EXPECT_THAT(Apply(bob, Request(LocalQueue("lq", "b"))),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       "localqueues.kueue.x-k8s.io \"lq\" is forbidden: User "
                       "\"bob\" cannot create resource \"localqueues\" in API "
                       "group \"kueue.x-k8s.io\" in the namespace \"b\""));
  // No namespace is "default", which bob does not hold.
  EXPECT_THAT(Apply(bob, Request(LocalQueue("lq", ""))),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("in the namespace \"default\"")));
  EXPECT_THAT(List(bob, "LocalQueue", "a"), IsOkAndHolds(ElementsAre("a/lq")));
  EXPECT_THAT(List(bob, "LocalQueue", "", /*all=*/true),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("cannot list resource \"localqueues\" in API "
                                 "group \"kueue.x-k8s.io\" at the cluster "
                                 "scope")));
  // Quota is not a namespace admin's, whatever namespace the request names.
  api::ApplyKueueObjectRequest cq = Request(kClusterQueue);
  cq.mutable_object()
      ->mutable_cluster_queue()
      ->mutable_metadata()
      ->set_namespace_("a");
  EXPECT_THAT(Apply(bob, cq), StatusIs(absl::StatusCode::kPermissionDenied,
                                       HasSubstr("at the cluster scope")));
  EXPECT_THAT(Get(bob, Ref("ClusterQueue", "research", "a")),
              StatusIs(absl::StatusCode::kPermissionDenied));
  ASSERT_THAT(Delete(bob, Ref("LocalQueue", "lq", "a")), IsOk());
  EXPECT_THAT(List(root_, "LocalQueue", "", true), IsOkAndHolds(ElementsAre()));
}

TEST_F(KueueServiceTest, NobodyBelowClusterAdminAppliesAWorkload) {
  for (absl::string_view role : {"admin", "edit", "view"}) {
    Bind(auth::testing::ClusterRoleBinding(
        absl::StrCat("all-", role), role,
        {auth::testing::User(absl::StrCat("user-", role))}));
  }
  std::map<std::string, std::string> tokens;
  for (absl::string_view role : {"admin", "edit", "view"}) {
    tokens[std::string(role)] = Token(absl::StrCat("user-", role));
  }
  for (absl::string_view role : {"admin", "edit", "view"}) {
    EXPECT_THAT(Apply(tokens[std::string(role)], Request(kWorkload)),
                StatusIs(absl::StatusCode::kPermissionDenied,
                         HasSubstr("cannot create resource \"workloads\" in "
                                   "API group \"kueue.x-k8s.io\" in the "
                                   "namespace \"a\"")))
        << role;
  }
  EXPECT_EQ(store_.CurrentRevision(), 0);
  ASSERT_THAT(Apply(root_, Request(kWorkload)), IsOk());
  const std::string& viewer = tokens["view"];
  EXPECT_THAT(List(viewer, "Workload", "", true),
              IsOkAndHolds(ElementsAre("a/w")));
  EXPECT_THAT(Get(viewer, Ref("Workload", "w", "a")), IsOk());
  EXPECT_THAT(Delete(tokens["admin"], Ref("Workload", "w", "a")),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

// As ApplySecret: create_only needs "create" alone; an apply "update" too.
TEST_F(KueueServiceTest, CreateOnlyNeedsCreateAndApplyNeedsUpdateToo) {
  Bind(auth::testing::Role(
      "a", "lq-creator",
      {auth::testing::Rule({"create"}, {"kueue.x-k8s.io"}, {"localqueues"})}));
  Bind(auth::testing::RoleBinding("a", "carol", "Role", "lq-creator",
                                  {auth::testing::User("carol")}));
  const std::string carol = Token("carol");
  EXPECT_THAT(Apply(carol, Request(LocalQueue("lq", "a"))),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("cannot update resource \"localqueues\"")));
  api::ApplyKueueObjectRequest create_only = Request(LocalQueue("lq", "a"));
  create_only.set_create_only(true);
  EXPECT_THAT(Apply(carol, create_only), IsOk());
  EXPECT_THAT(Apply(carol, create_only),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST_F(KueueServiceTest, UnknownKindsAndStrangers) {
  EXPECT_THAT(Get("", Ref("ClusterQueue", "research")),
              StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(Get("", Ref("Queue", "research")),
              StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(Apply("", api::ApplyKueueObjectRequest()),
              StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(Apply("", Request(kClusterQueue)),
              StatusIs(absl::StatusCode::kUnauthenticated));
  // Known callers learn what is wrong with the request.
  const std::string dave = Token("dave");
  EXPECT_THAT(Get(dave, Ref("Queue", "research")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kind: Unsupported value: \"Queue\"")));
  EXPECT_THAT(List(dave, "Queue"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Apply(dave, api::ApplyKueueObjectRequest()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("object: Required value")));
  EXPECT_THAT(Get(dave, Ref("ClusterQueue", "research")),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // And a bad object is refused in Kueue's words, after RBAC.
  api::ApplyKueueObjectRequest bad = Request(kClusterQueue);
  bad.mutable_object()
      ->mutable_cluster_queue()
      ->mutable_spec()
      ->set_queueing_strategy("Fastest");
  EXPECT_THAT(Apply(root_, bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.queueingStrategy: Unsupported value: "
                                 "\"Fastest\"")));
}

// Reads the next event of `reader`: its type and object's name.
std::string NextEvent(grpc::ClientReader<api::KueueWatchEvent>* reader) {
  api::KueueWatchEvent event;
  if (!reader->Read(&event)) return "(ended)";
  const api::ObjectMeta& meta = api::KueueObjectMeta(event.object());
  return absl::StrCat(event.type(), " ", meta.namespace_(), "/", meta.name());
}

TEST_F(KueueServiceTest, WatchStreamsUntilTheTokenGoes) {
  Bind(auth::testing::ClusterRoleBinding("viewers", "view",
                                         {auth::testing::User("erin")}));
  const std::string erin = Token("erin");
  ASSERT_THAT(Apply(root_, Request(kClusterQueue)), IsOk());
  // From revision 0: the history replays the create.
  api::WatchKueueObjectsRequest request;
  request.set_kind("ClusterQueue");
  request.set_resource_version("0");
  std::unique_ptr<grpc::ClientContext> context = As(erin);
  std::unique_ptr<grpc::ClientReader<api::KueueWatchEvent>> reader =
      stub_->WatchKueueObjects(context.get(), request);
  EXPECT_EQ(NextEvent(reader.get()), "ADDED /research");

  // It holds erin's one stream.
  std::unique_ptr<grpc::ClientContext> again = As(erin);
  auto second = stub_->WatchKueueObjects(again.get(), request);
  EXPECT_EQ(NextEvent(second.get()), "(ended)");
  grpc::Status refused = second->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("user \"erin\" has 1 streams"));

  ASSERT_THAT(Apply(root_, Request(absl::StrCat(kClusterQueue,
                                                "  stopPolicy: Hold\n"))),
              IsOk());
  EXPECT_EQ(NextEvent(reader.get()), "MODIFIED /research");

  // The token goes: the watch ends within a poll.
  ASSERT_THAT(access_->DeleteToken("erin").status(), IsOk());
  EXPECT_EQ(NextEvent(reader.get()), "(ended)");
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // A watch needs "watch" where it looks.
  const std::string frank = Token("frank");
  std::unique_ptr<grpc::ClientContext> denied = As(frank);
  auto no = stub_->WatchKueueObjects(denied.get(), request);
  EXPECT_EQ(NextEvent(no.get()), "(ended)");
  EXPECT_EQ(no->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(KueueServiceTest, ShutdownEndsWatches) {
  ASSERT_THAT(Apply(root_, Request(LocalQueue("lq", "a"))), IsOk());
  api::WatchKueueObjectsRequest request;
  request.set_kind("LocalQueue");
  request.set_all_namespaces(true);
  request.set_resource_version("0");
  std::unique_ptr<grpc::ClientContext> context = As(root_);
  auto reader = stub_->WatchKueueObjects(context.get(), request);
  EXPECT_EQ(NextEvent(reader.get()), "ADDED a/lq");
  service_->Shutdown();
  EXPECT_EQ(NextEvent(reader.get()), "(ended)");
  EXPECT_TRUE(reader->Finish().ok());
}

// Kueue's visibility API: the pending Workloads of a ClusterQueue or a
// LocalQueue, by priority then creation, with both positions.
class PendingWorkloadsTest : public KueueServiceTest {
 protected:
  void SetUp() override {
    KueueServiceTest::SetUp();
    ASSERT_THAT(Apply(root_, Request(kClusterQueue)).status(), IsOk());
    for (const char* ns : {"a", "b"}) {
      ASSERT_THAT(Apply(root_, Request(LocalQueue("q", ns))).status(), IsOk());
    }
    AddWorkload("a", "first", 0);
    AddWorkload("b", "urgent", 100);
    AddWorkload("a", "second", 0);
    AddWorkload("b", "later", 0);
  }

  void AddWorkload(absl::string_view ns, absl::string_view name, int priority) {
    clock_.Advance(absl::Seconds(1));
    api::ApplyKueueObjectRequest request = Request(kWorkload);
    api::Workload* wl = request.mutable_object()->mutable_workload();
    wl->mutable_metadata()->set_namespace_(std::string(ns));
    wl->mutable_metadata()->set_name(std::string(name));
    wl->mutable_spec()->set_priority(priority);
    ASSERT_THAT(Apply(root_, request).status(), IsOk());
  }

  absl::StatusOr<std::vector<std::string>> Pending(
      const std::string& token, const api::ListPendingWorkloadsRequest& r) {
    api::PendingWorkloadsSummary response;
    grpc::Status status =
        stub_->ListPendingWorkloads(As(token).get(), r, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    std::vector<std::string> items;
    for (const api::PendingWorkload& p : response.items()) {
      EXPECT_EQ(p.cluster_queue(), "research");
      EXPECT_EQ(p.local_queue_name(), "q");
      items.push_back(absl::StrCat(
          p.metadata().namespace_(), "/", p.metadata().name(), " ",
          p.position_in_cluster_queue(), " ", p.position_in_local_queue()));
    }
    return items;
  }

  static api::ListPendingWorkloadsRequest OfClusterQueue(absl::string_view cq,
                                                         int64_t limit = 0,
                                                         int64_t offset = 0) {
    api::ListPendingWorkloadsRequest r;
    r.set_cluster_queue(std::string(cq));
    r.set_limit(limit);
    r.set_offset(offset);
    return r;
  }
  static api::ListPendingWorkloadsRequest OfLocalQueue(absl::string_view ns,
                                                       absl::string_view lq) {
    api::ListPendingWorkloadsRequest r;
    r.set_namespace_(std::string(ns));
    r.set_local_queue(std::string(lq));
    return r;
  }
};

TEST_F(PendingWorkloadsTest, InTheClusterQueuesOrderWithPositions) {
  EXPECT_THAT(Pending(root_, OfClusterQueue("research")),
              IsOkAndHolds(ElementsAre("b/urgent 0 0", "a/first 1 0",
                                       "a/second 2 1", "b/later 3 1")));
  EXPECT_THAT(Pending(root_, OfClusterQueue("research", 2, 1)),
              IsOkAndHolds(ElementsAre("a/first 1 0", "a/second 2 1")));
  EXPECT_THAT(Pending(root_, OfLocalQueue("a", "q")),
              IsOkAndHolds(ElementsAre("a/first 1 0", "a/second 2 1")));
  // Admitted, it no longer waits: the others move up.
  api::KueueObject first = *Get(root_, Ref("Workload", "first", "a"));
  first.mutable_workload()
      ->mutable_status()
      ->mutable_admission()
      ->set_cluster_queue("research");
  ASSERT_THAT(store_.Commit(store::Batch().Put(KueueObjectKey(first),
                                               EncodeKueueObject(first))),
              IsOk());
  EXPECT_THAT(Pending(root_, OfLocalQueue("a", "q")),
              IsOkAndHolds(ElementsAre("a/second 1 0")));
}

TEST_F(PendingWorkloadsTest, RefusesWhatItCannotAnswer) {
  api::ListPendingWorkloadsRequest both = OfClusterQueue("research");
  both.set_local_queue("q");
  EXPECT_THAT(Pending(root_, both),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "name exactly one of cluster_queue (\"research\") and "
                       "local_queue (\"q\")"));
  EXPECT_THAT(Pending(root_, api::ListPendingWorkloadsRequest()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Pending(root_, OfClusterQueue("research", 10001)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("limit: Invalid value: 10001")));
  EXPECT_THAT(Pending(root_, OfClusterQueue("research", 0, -1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("offset: Invalid value: -1")));
  EXPECT_THAT(Pending(root_, OfClusterQueue("nope")),
              StatusIs(absl::StatusCode::kNotFound,
                       "clusterqueues.kueue.x-k8s.io \"nope\" not found"));
  EXPECT_THAT(Pending(root_, OfLocalQueue("a", "nope")),
              StatusIs(absl::StatusCode::kNotFound,
                       "localqueues.kueue.x-k8s.io \"nope\" not found"));
}

TEST_F(PendingWorkloadsTest, ANamespacesViewerSeesItsLocalQueuesOnly) {
  Bind(auth::testing::RoleBinding("a", "alice-view", "ClusterRole", "view",
                                  {auth::testing::User("alice")}));
  const std::string alice = Token("alice");
  EXPECT_THAT(Pending(alice, OfLocalQueue("a", "q")),
              IsOkAndHolds(ElementsAre("a/first 1 0", "a/second 2 1")));
  EXPECT_THAT(Pending(alice, OfLocalQueue("b", "q")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("cannot get resource "
                                 "\"localqueues/pendingworkloads\" in API "
                                 "group \"visibility.kueue.x-k8s.io\" in the "
                                 "namespace \"b\"")));
  EXPECT_THAT(Pending(alice, OfClusterQueue("research")),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(AuditText(),
              HasSubstr("\"requestURI\":\"/apis/visibility.kueue.x-k8s.io/"
                        "v1beta1/clusterqueues/research/pendingworkloads\""));
  // Bound cluster-wide, view reads the ClusterQueue's list.
  Bind(auth::testing::ClusterRoleBinding("viewers", "view",
                                         {auth::testing::User("alice")}));
  EXPECT_THAT(Pending(alice, OfClusterQueue("research")),
              IsOkAndHolds(::testing::SizeIs(4)));
}

}  // namespace
}  // namespace jobset::scheduler
