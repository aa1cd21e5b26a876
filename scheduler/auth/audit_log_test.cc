#include "scheduler/auth/audit_log.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/server_context.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

const absl::Time kReceived =
    absl::FromUnixSeconds(1'700'000'000) + absl::Microseconds(250);
const absl::Time kDone = kReceived + absl::Milliseconds(3);

AuditRecord Alice(auth::Attributes attrs, bool allowed) {
  AuditRecord record;
  record.audit_id = "2c3f4a9e-7b1d-4e5f-8a6b-0c1d2e3f4a5b";
  record.authenticated = true;
  record.user = {.name = "alice", .groups = {"team-a", "system:authenticated"}};
  record.authn_method = "token";
  record.credential_id = "abcdef";
  record.attrs = std::move(attrs);
  record.allowed = allowed;
  if (allowed) {
    record.reason =
        "RBAC: allowed by RoleBinding \"alice/team-a\" of ClusterRole "
        "\"edit\" to User \"alice\"";
  }
  record.source_ip = "10.0.0.7";
  record.user_agent = "jobsetctl/v0.1 grpc-c++/1.46.3";
  record.received = kReceived;
  return record;
}

auth::Attributes JobSet(std::string verb, std::string ns, std::string name) {
  return {.verb = std::move(verb),
          .api_group = "jobset.x-k8s.io",
          .resource = "jobsets",
          .namespace_ = std::move(ns),
          .name = std::move(name)};
}

constexpr char kCreate[] = "/jobset.api.JobSetService/CreateJobSet";

TEST(AuditLogFormatTest, AnAllowedCreateIs201Created) {
  EXPECT_EQ(
      AuditLog::Format(Alice(JobSet("create", "team-a", "train"), true),
                       kCreate, grpc::Status::OK, kDone),
      R"json({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",)json"
      R"json("auditID":"2c3f4a9e-7b1d-4e5f-8a6b-0c1d2e3f4a5b","stage":"ResponseComplete",)json"
      R"json("requestURI":"/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-a/jobsets",)json"
      R"json("verb":"create","user":{"username":"alice","groups":["team-a","system:authenticated"],)json"
      R"json("extra":{"authentication.kubernetes.io/credential-id":["TokenID=abcdef"]}},)json"
      R"json("sourceIPs":["10.0.0.7"],"userAgent":"jobsetctl/v0.1 grpc-c++/1.46.3",)json"
      R"json("objectRef":{"resource":"jobsets","namespace":"team-a","name":"train",)json"
      R"json("apiGroup":"jobset.x-k8s.io","apiVersion":"v1alpha2"},)json"
      R"json("responseStatus":{"metadata":{},"code":201},)json"
      R"json("requestReceivedTimestamp":"2023-11-14T22:13:20.000250Z",)json"
      R"json("stageTimestamp":"2023-11-14T22:13:20.003250Z",)json"
      R"json("annotations":{"authorization.k8s.io/decision":"allow",)json"
      R"json("authorization.k8s.io/reason":"RBAC: allowed by RoleBinding \"alice/team-a\" of ClusterRole \"edit\" to User \"alice\"",)json"
      R"json("jobsetd.x-k8s.io/grpc-method":"/jobset.api.JobSetService/CreateJobSet"}})json");
}

TEST(AuditLogFormatTest, AForbiddenUpdateIs403Forbidden) {
  AuditRecord record = Alice(JobSet("update", "team-b", "train"), false);
  record.authn_method = "cert";
  record.credential_id = "5F3A";
  record.user_agent.clear();
  EXPECT_EQ(
      AuditLog::Format(
          record, "/jobset.api.JobSetService/UpdateJobSet",
          grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                       "jobsets.jobset.x-k8s.io \"train\" is forbidden: User "
                       "\"alice\" cannot update resource \"jobsets\" in API "
                       "group \"jobset.x-k8s.io\" in the namespace \"team-b\""),
          kDone),
      R"json({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",)json"
      R"json("auditID":"2c3f4a9e-7b1d-4e5f-8a6b-0c1d2e3f4a5b","stage":"ResponseComplete",)json"
      R"json("requestURI":"/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-b/jobsets/train",)json"
      R"json("verb":"update","user":{"username":"alice","groups":["team-a","system:authenticated"],)json"
      R"json("extra":{"authentication.kubernetes.io/credential-id":["X509SerialNumber=5F3A"]}},)json"
      R"json("sourceIPs":["10.0.0.7"],)json"
      R"json("objectRef":{"resource":"jobsets","namespace":"team-b","name":"train",)json"
      R"json("apiGroup":"jobset.x-k8s.io","apiVersion":"v1alpha2"},)json"
      R"json("responseStatus":{"metadata":{},"status":"Failure",)json"
      R"json("message":"jobsets.jobset.x-k8s.io \"train\" is forbidden: User \"alice\" cannot update resource \"jobsets\" in API group \"jobset.x-k8s.io\" in the namespace \"team-b\"",)json"
      R"json("reason":"Forbidden","details":{"name":"train","group":"jobset.x-k8s.io","kind":"jobsets"},"code":403},)json"
      R"json("requestReceivedTimestamp":"2023-11-14T22:13:20.000250Z",)json"
      R"json("stageTimestamp":"2023-11-14T22:13:20.003250Z",)json"
      R"json("annotations":{"authorization.k8s.io/decision":"forbid",)json"
      R"json("authorization.k8s.io/reason":"",)json"
      R"json("jobsetd.x-k8s.io/grpc-method":"/jobset.api.JobSetService/UpdateJobSet"}})json");
}

TEST(AuditLogFormatTest, AnInvalidCreateIs422Invalid) {
  AuditRecord record = Alice(JobSet("create", "team-a", "Bad_Name"), true);
  EXPECT_THAT(
      AuditLog::Format(
          record, kCreate,
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                       "metadata.name: Invalid value: \"Bad_Name\": a "
                       "lowercase RFC 1123 subdomain must consist of ..."),
          kDone),
      HasSubstr(
          R"json("responseStatus":{"metadata":{},"status":"Failure",)json"
          R"json("message":"metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of ...",)json"
          R"json("reason":"Invalid","details":{"name":"Bad_Name","group":"jobset.x-k8s.io","kind":"jobsets"},"code":422},)json"));
}

TEST(AuditLogFormatTest, AFailedAuthenticationIs401WithNoUserAndNoDecision) {
  AuditRecord record;
  record.audit_id = "0f0e0d0c-0b0a-4908-8706-050403020100";
  record.attrs = JobSet("create", "default", "x");
  record.source_ip = "::1";
  record.received = kReceived;
  EXPECT_EQ(
      AuditLog::Format(record, kCreate,
                       grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                    "no credentials: send a bearer token"),
                       kDone),
      R"json({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",)json"
      R"json("auditID":"0f0e0d0c-0b0a-4908-8706-050403020100","stage":"ResponseComplete",)json"
      R"json("requestURI":"/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets",)json"
      R"json("verb":"create","user":{},"sourceIPs":["::1"],)json"
      R"json("objectRef":{"resource":"jobsets","namespace":"default","name":"x",)json"
      R"json("apiGroup":"jobset.x-k8s.io","apiVersion":"v1alpha2"},)json"
      R"json("responseStatus":{"metadata":{},"status":"Failure",)json"
      R"json("message":"no credentials: send a bearer token","reason":"Unauthorized","code":401},)json"
      R"json("requestReceivedTimestamp":"2023-11-14T22:13:20.000250Z",)json"
      R"json("stageTimestamp":"2023-11-14T22:13:20.003250Z",)json"
      R"json("annotations":{"jobsetd.x-k8s.io/grpc-method":"/jobset.api.JobSetService/CreateJobSet"}})json");
}

TEST(AuditLogFormatTest, ACoreResourceHasNoApiGroup) {
  AuditRecord record =
      Alice({.verb = "list", .resource = "pods", .namespace_ = "team-a"}, true);
  std::string line = AuditLog::Format(
      record, "/jobset.api.JobSetService/ListPods", grpc::Status::OK, kDone);
  EXPECT_THAT(
      line,
      HasSubstr(R"json("requestURI":"/api/v1/namespaces/team-a/pods",)json"));
  EXPECT_THAT(
      line,
      HasSubstr(
          R"json("objectRef":{"resource":"pods","namespace":"team-a","apiVersion":"v1"},)json"
          R"json("responseStatus":{"metadata":{},"code":200},)json"));
}

TEST(AuditLogTest, RequestUriIsKubeApiserversPath) {
  EXPECT_EQ(AuditLog::RequestUri(JobSet("get", "team-a", "train")),
            "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-a/jobsets/train");
  EXPECT_EQ(AuditLog::RequestUri(JobSet("create", "team-a", "train")),
            "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-a/jobsets");
  EXPECT_EQ(AuditLog::RequestUri(JobSet("watch", "", "")),
            "/apis/jobset.x-k8s.io/v1alpha2/jobsets?watch=true");
  EXPECT_EQ(AuditLog::RequestUri({.verb = "get",
                                  .resource = "pods",
                                  .subresource = "log",
                                  .namespace_ = "default",
                                  .name = "train-workers-0-0"}),
            "/api/v1/namespaces/default/pods/train-workers-0-0/log");
  EXPECT_EQ(AuditLog::RequestUri(
                {.verb = "delete", .resource = "namespaces", .name = "team-a"}),
            "/api/v1/namespaces/team-a");
  EXPECT_EQ(AuditLog::RequestUri({.verb = "update",
                                  .api_group = "rbac.authorization.k8s.io",
                                  .resource = "clusterrolebindings",
                                  .name = "system:node/x"}),
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/"
            "system:node%2Fx");
  EXPECT_EQ(AuditLog::RequestUri({.verb = "update",
                                  .api_group = "kueue.x-k8s.io",
                                  .resource = "clusterqueues",
                                  .name = "research"}),
            "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/research");
  EXPECT_EQ(AuditLog::RequestUri({.verb = "watch",
                                  .api_group = "kueue.x-k8s.io",
                                  .resource = "localqueues",
                                  .namespace_ = "team-a"}),
            "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues?"
            "watch=true");
}

TEST(AuditLogTest, GrpcCodesMapToKubeApiserversHttpStatus) {
  struct Case {
    grpc::StatusCode code;
    const char* verb;
    int http;
    const char* reason;
  };
  for (const Case& c : std::vector<Case>{
           {grpc::StatusCode::OK, "create", 201, ""},
           {grpc::StatusCode::OK, "update", 200, ""},
           {grpc::StatusCode::OK, "get", 200, ""},
           {grpc::StatusCode::UNAUTHENTICATED, "get", 401, "Unauthorized"},
           {grpc::StatusCode::PERMISSION_DENIED, "get", 403, "Forbidden"},
           {grpc::StatusCode::NOT_FOUND, "get", 404, "NotFound"},
           {grpc::StatusCode::ALREADY_EXISTS, "create", 409, "AlreadyExists"},
           {grpc::StatusCode::ABORTED, "update", 409, "Conflict"},
           {grpc::StatusCode::INVALID_ARGUMENT, "create", 422, "Invalid"},
           {grpc::StatusCode::FAILED_PRECONDITION, "get", 400, "BadRequest"},
           {grpc::StatusCode::RESOURCE_EXHAUSTED, "get", 429,
            "TooManyRequests"},
           {grpc::StatusCode::INTERNAL, "get", 500, "InternalError"},
           {grpc::StatusCode::UNAVAILABLE, "get", 503, "ServiceUnavailable"},
           {grpc::StatusCode::DEADLINE_EXCEEDED, "get", 504, "Timeout"},
       }) {
    AuditLog::HttpStatus http = AuditLog::ToHttpStatus(c.code, c.verb);
    EXPECT_EQ(http.code, c.http) << c.code << " " << c.verb;
    EXPECT_EQ(http.reason, c.reason) << c.code << " " << c.verb;
  }
}

class AuditLogFileTest : public ::testing::Test {
 protected:
  std::unique_ptr<AuditLog> Open(bool audit_reads) {
    path_ = ::testing::TempDir() + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            ".log";
    std::remove(path_.c_str());
    absl::StatusOr<std::unique_ptr<AuditLog>> log =
        AuditLog::Open(path_, audit_reads, &clock_);
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? *std::move(log) : nullptr;
  }

  std::vector<std::string> Lines() {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return absl::StrSplit(text.str(), '\n', absl::SkipEmpty());
  }

  FakeClock clock_{kDone};
  std::string path_;
};

TEST_F(AuditLogFileTest, ANotFoundGetIsLoggedWithAuditReadsAs404) {
  std::unique_ptr<AuditLog> log = Open(/*audit_reads=*/true);
  grpc::ServerContext context;
  log->Begin(&context, Alice(JobSet("get", "team-a", "gone"), true));
  log->Finish(&context, "/jobset.api.JobSetService/GetJobSet",
              grpc::Status(grpc::StatusCode::NOT_FOUND,
                           "jobsets.jobset.x-k8s.io \"gone\" not found"));
  log.reset();
  EXPECT_THAT(
      Lines(),
      ElementsAre(
          R"json({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",)json"
          R"json("auditID":"2c3f4a9e-7b1d-4e5f-8a6b-0c1d2e3f4a5b","stage":"ResponseComplete",)json"
          R"json("requestURI":"/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-a/jobsets/gone",)json"
          R"json("verb":"get","user":{"username":"alice","groups":["team-a","system:authenticated"],)json"
          R"json("extra":{"authentication.kubernetes.io/credential-id":["TokenID=abcdef"]}},)json"
          R"json("sourceIPs":["10.0.0.7"],"userAgent":"jobsetctl/v0.1 grpc-c++/1.46.3",)json"
          R"json("objectRef":{"resource":"jobsets","namespace":"team-a","name":"gone",)json"
          R"json("apiGroup":"jobset.x-k8s.io","apiVersion":"v1alpha2"},)json"
          R"json("responseStatus":{"metadata":{},"status":"Failure",)json"
          R"json("message":"jobsets.jobset.x-k8s.io \"gone\" not found","reason":"NotFound",)json"
          R"json("details":{"name":"gone","group":"jobset.x-k8s.io","kind":"jobsets"},"code":404},)json"
          R"json("requestReceivedTimestamp":"2023-11-14T22:13:20.000250Z",)json"
          R"json("stageTimestamp":"2023-11-14T22:13:20.003250Z",)json"
          R"json("annotations":{"authorization.k8s.io/decision":"allow",)json"
          R"json("authorization.k8s.io/reason":"RBAC: allowed by RoleBinding \"alice/team-a\" of ClusterRole \"edit\" to User \"alice\"",)json"
          R"json("jobsetd.x-k8s.io/grpc-method":"/jobset.api.JobSetService/GetJobSet"}})json"));
}

// Without --audit_reads, allowed reads are not logged; refused ones (403
// and 401) always are: someone probing is a security signal.
TEST_F(AuditLogFileTest, WithoutAuditReadsOnlyRefusedReadsAreLogged) {
  std::unique_ptr<AuditLog> log = Open(/*audit_reads=*/false);
  grpc::ServerContext allowed, forbidden, unauthenticated, created;
  log->Begin(&allowed, Alice(JobSet("list", "team-a", ""), true));
  log->Begin(&forbidden, Alice(JobSet("get", "team-b", "x"), false));
  AuditRecord anonymous;
  anonymous.attrs = JobSet("watch", "team-b", "");
  log->Begin(&unauthenticated, anonymous);
  log->Begin(&created, Alice(JobSet("create", "team-a", "y"), true));
  log->Finish(&allowed, "/jobset.api.JobSetService/ListJobSets",
              grpc::Status::OK);
  log->Finish(&forbidden, "/jobset.api.JobSetService/GetJobSet",
              grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "forbidden"));
  log->Finish(&unauthenticated, "/jobset.api.JobSetService/WatchJobSets",
              grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no"));
  log->Finish(&created, kCreate, grpc::Status::OK);
  log.reset();
  std::vector<std::string> lines = Lines();
  ASSERT_THAT(lines, SizeIs(3));
  EXPECT_THAT(lines[0], HasSubstr(R"json("verb":"get")json"));
  EXPECT_THAT(lines[0], HasSubstr(R"json("code":403})json"));
  EXPECT_THAT(lines[1], HasSubstr(R"json("verb":"watch","user":{})json"));
  EXPECT_THAT(lines[1], HasSubstr(R"json("code":401})json"));
  EXPECT_THAT(lines[2], HasSubstr(R"json("verb":"create")json"));
  EXPECT_THAT(lines[2], HasSubstr(R"json("code":201})json"));
}

// An apply checks create, then update: one event, the last decision, the
// first check's auditID and received time.
TEST_F(AuditLogFileTest, ASecondCheckOfACallReplacesTheFirst) {
  std::unique_ptr<AuditLog> log = Open(/*audit_reads=*/false);
  grpc::ServerContext context;
  AuditRecord create = Alice(JobSet("create", "team-a", "cm"), true);
  create.audit_id.clear();
  log->Begin(&context, create);
  AuditRecord update = Alice(JobSet("update", "team-a", "cm"), false);
  update.audit_id.clear();
  update.received = kDone;
  log->Begin(&context, update);
  log->Finish(&context, "/jobset.api.JobSetService/ApplyConfigMap",
              grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "forbidden"));
  log->Finish(&context, "/jobset.api.JobSetService/ApplyConfigMap",
              grpc::Status::OK);  // Nothing is left to write.
  log.reset();
  std::vector<std::string> lines = Lines();
  ASSERT_THAT(lines, SizeIs(1));
  EXPECT_THAT(lines[0], HasSubstr(R"json("verb":"update")json"));
  EXPECT_THAT(lines[0], HasSubstr(R"json(/decision":"forbid")json"));
  EXPECT_THAT(
      lines[0],
      HasSubstr(
          R"json("requestReceivedTimestamp":"2023-11-14T22:13:20.000250Z")json"));
  EXPECT_THAT(lines[0], Not(HasSubstr(R"json("auditID":"")json")));
}

TEST_F(AuditLogFileTest, NothingIsWrittenForACallNeverBegun) {
  std::unique_ptr<AuditLog> log = Open(/*audit_reads=*/true);
  grpc::ServerContext context;
  log->Finish(&context, "/grpc.health.v1.Health/Check", grpc::Status::OK);
  log.reset();
  EXPECT_THAT(Lines(), IsEmpty());
}

}  // namespace
}  // namespace jobset::scheduler
