// jobsetctl's commands against a fake JobSetService in this process: how
// lists are paged and how a watch that falls behind goes on.
#include "cli/commands.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/auth.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

api::JobSet NamedJobSet(const std::string& name, int64_t version) {
  api::JobSet jobset;
  jobset.mutable_metadata()->set_name(name);
  jobset.mutable_metadata()->set_namespace_("default");
  jobset.mutable_metadata()->set_resource_version(absl::StrCat(version));
  return jobset;
}

// Serves `jobsets` two per page, and watches as jobsetd would after falling
// behind: a watch from a resourceVersion sends one change and then ends with
// OUT_OF_RANGE; one without lists (ADDED) and sends one more change.
class FakeJobSets final : public api::JobSetService::Service {
 public:
  explicit FakeJobSets(int count) {
    for (int i = 0; i < count; ++i) {
      jobsets_.push_back(NamedJobSet(absl::StrCat("js-", i), 10 + i));
    }
  }

  grpc::Status ListJobSets(grpc::ServerContext*,
                           const api::ListJobSetsRequest* request,
                           api::ListJobSetsResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++list_calls_;
    last_list_ = *request;
    size_t start = 0;
    if (!request->continue_().empty()) start = std::stoul(request->continue_());
    for (size_t i = start; i < jobsets_.size() && i < start + 2; ++i) {
      *response->add_items() = jobsets_[i];
    }
    if (start + 2 < jobsets_.size()) {
      response->set_continue_(absl::StrCat(start + 2));
    }
    response->set_resource_version("100");
    return grpc::Status::OK;
  }

  grpc::Status WatchJobSets(
      grpc::ServerContext*, const api::WatchJobSetsRequest* request,
      grpc::ServerWriter<api::WatchEvent>* writer) override {
    api::WatchEvent event;
    if (!request->resource_version().empty()) {
      event.set_type("MODIFIED");
      *event.mutable_object() = NamedJobSet("js-0", 101);
      writer->Write(event);
      return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                          "revision 101 is compacted: list again");
    }
    // The relist: js-0 as last sent, js-1 unchanged, then a new change.
    for (const api::JobSet& jobset :
         {NamedJobSet("js-0", 101), NamedJobSet("js-1", 11)}) {
      event.set_type("ADDED");
      *event.mutable_object() = jobset;
      writer->Write(event);
    }
    event.set_type("MODIFIED");
    *event.mutable_object() = NamedJobSet("js-1", 102);
    writer->Write(event);
    return grpc::Status::OK;
  }

  grpc::Status DeleteJobSet(grpc::ServerContext*,
                            const api::DeleteJobSetRequest* request,
                            api::JobSet* response) override {
    absl::MutexLock lock(&mu_);
    deleted_.push_back(
        absl::StrCat(request->namespace_(), "/", request->name()));
    *response = NamedJobSet(request->name(), 1);
    return grpc::Status::OK;
  }

  grpc::Status GetVersion(grpc::ServerContext*, const api::GetVersionRequest*,
                          api::VersionInfo* response) override {
    response->set_git_version("v9.9.9");
    return grpc::Status::OK;
  }

  int list_calls() {
    absl::MutexLock lock(&mu_);
    return list_calls_;
  }
  api::ListJobSetsRequest last_list() {
    absl::MutexLock lock(&mu_);
    return last_list_;
  }
  std::vector<std::string> deleted() {
    absl::MutexLock lock(&mu_);
    return deleted_;
  }

 private:
  std::vector<api::JobSet> jobsets_;
  absl::Mutex mu_;
  int list_calls_ ABSL_GUARDED_BY(mu_) = 0;
  api::ListJobSetsRequest last_list_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> deleted_ ABSL_GUARDED_BY(mu_);
};

// AccessService as jobsetd would answer, recording what it was sent and
// the authorization metadata; refuses a token "bad.token".
class FakeAccess final : public api::AccessService::Service {
 public:
  grpc::Status CreateToken(grpc::ServerContext* context,
                           const api::CreateTokenRequest* request,
                           api::CreateTokenResponse* response) override {
    if (grpc::Status s = Check(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    last_token_request_ = *request;
    response->mutable_info()->set_name(request->name());
    response->set_token("abc123.secretsecret");
    return grpc::Status::OK;
  }
  grpc::Status ReviewAccess(grpc::ServerContext* context,
                            const api::AccessReview* review,
                            api::AccessReviewResult* result) override {
    if (grpc::Status s = Check(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    last_review_ = *review;
    result->set_allowed(review->verb() == "get");
    result->set_user("alice");
    result->add_groups("dev");
    if (!result->allowed()) result->set_reason("no RBAC policy matched");
    return grpc::Status::OK;
  }
  grpc::Status ApplyRbac(grpc::ServerContext* context,
                         const api::RbacObject* object,
                         api::RbacObject* response) override {
    if (grpc::Status s = Check(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    applied_.push_back(*object);
    *response = *object;
    return grpc::Status::OK;
  }
  grpc::Status ListRbac(grpc::ServerContext* context,
                        const api::ListRbacRequest* request,
                        api::ListRbacResponse* response) override {
    if (grpc::Status s = Check(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    last_list_ = *request;
    for (const api::RbacObject& o : applied_) {
      const std::string& kind =
          o.has_role() ? o.role().kind() : o.binding().kind();
      if (kind == request->kind()) *response->add_objects() = o;
    }
    return grpc::Status::OK;
  }

  api::CreateTokenRequest last_token_request() {
    absl::MutexLock lock(&mu_);
    return last_token_request_;
  }
  api::AccessReview last_review() {
    absl::MutexLock lock(&mu_);
    return last_review_;
  }
  api::ListRbacRequest last_list() {
    absl::MutexLock lock(&mu_);
    return last_list_;
  }
  std::vector<api::RbacObject> applied() {
    absl::MutexLock lock(&mu_);
    return applied_;
  }
  std::string authorization() {
    absl::MutexLock lock(&mu_);
    return authorization_;
  }
  // The client certificate's CN ("" without one).
  std::string peer_cn() {
    absl::MutexLock lock(&mu_);
    return peer_cn_;
  }

 private:
  grpc::Status Check(grpc::ServerContext* context) {
    auto it = context->client_metadata().find("authorization");
    absl::MutexLock lock(&mu_);
    authorization_ = it == context->client_metadata().end()
                         ? ""
                         : std::string(it->second.data(), it->second.size());
    peer_cn_.clear();
    if (std::shared_ptr<const grpc::AuthContext> auth =
            context->auth_context()) {
      for (const grpc::string_ref& cn :
           auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME)) {
        peer_cn_ = std::string(cn.data(), cn.size());
      }
    }
    if (authorization_ == "Bearer bad.token") {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "invalid bearer token");
    }
    if (authorization_ == "Bearer weak.token") {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "User \"bob\" cannot create resource \"tokens\"");
    }
    return grpc::Status::OK;
  }

  absl::Mutex mu_;
  api::CreateTokenRequest last_token_request_ ABSL_GUARDED_BY(mu_);
  api::AccessReview last_review_ ABSL_GUARDED_BY(mu_);
  api::ListRbacRequest last_list_ ABSL_GUARDED_BY(mu_);
  std::vector<api::RbacObject> applied_ ABSL_GUARDED_BY(mu_);
  std::string authorization_ ABSL_GUARDED_BY(mu_);
  std::string peer_cn_ ABSL_GUARDED_BY(mu_);
};

class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    builder.RegisterService(&access_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  void TearDown() override { server_->Shutdown(); }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), absl::StrCat("--server=", address_));
    return Main(args, nullptr, {.out = &out_, .err = &err_});
  }

  // Runs with `env` and no --server.
  int RunWith(std::vector<std::string> args, const Environment& env) {
    return Main(args, env, {.out = &out_, .err = &err_});
  }

  std::string WriteConfig(const std::string& name, const std::string& text) {
    const char* dir = std::getenv("TEST_TMPDIR");
    const std::string path =
        absl::StrCat(dir == nullptr ? "/tmp" : dir, "/", name);
    std::ofstream(path, std::ios::trunc) << text;
    return path;
  }

  void Clear() {
    out_.str("");
    err_.str("");
  }

  FakeJobSets service_{5};
  FakeAccess access_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::ostringstream out_, err_;
};

TEST_F(CommandsTest, GetSelectorsJsonPathAndAllNamespaces) {
  ASSERT_EQ(Run({"get", "jobsets", "-o", "jsonpath={.items[*].metadata.name}"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "js-0 js-1 js-2 js-3 js-4");
  Clear();
  ASSERT_EQ(Run({"get", "js", "-l", "app=x", "-A", "-o", "name"}), kExitOk)
      << err_.str();
  EXPECT_EQ(service_.last_list().label_selector(), "app=x");
  EXPECT_TRUE(service_.last_list().all_namespaces());
  Clear();
  ASSERT_EQ(Run({"get", "jobsets", "--field-selector=metadata.name!=js-0",
                 "--field-selector", "metadata.name==js-2", "-o", "name"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "jobset.jobset.x-k8s.io/js-2\n");
  Clear();
  ASSERT_EQ(Run({"get", "jobsets", "-A"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("NAMESPACE"));
  EXPECT_THAT(out_.str(), HasSubstr("default"));
  Clear();
  EXPECT_EQ(Run({"get", "pods", "--field-selector", "spec.foo=bar"}),
            kExitApiError);
  EXPECT_EQ(err_.str(), "error: field label not supported: spec.foo\n");
  Clear();
  EXPECT_EQ(Run({"get", "jobsets", "-o", "jsonpath={.items["}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("error parsing jsonpath {.items[, "
                                    "unclosed array expect ]"));
  Clear();
  EXPECT_EQ(Run({"get", "jobsets", "-o", "jsonpath={.items[9]}"}),
            kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("error executing jsonpath"));
  Clear();
  EXPECT_EQ(Run({"get", "jobsets", "js-0", "-l", "a=b"}), kExitUsage);
  EXPECT_THAT(err_.str(),
              HasSubstr("name cannot be provided when a selector is "
                        "specified"));
  Clear();
  EXPECT_EQ(Run({"get", "tokens", "-w"}), kExitUsage);
}

TEST_F(CommandsTest, DeleteAllAndBySelector) {
  ASSERT_EQ(Run({"delete", "jobsets", "--all"}), kExitOk) << err_.str();
  EXPECT_EQ(
      service_.deleted(),
      (std::vector<std::string>{"default/js-0", "default/js-1", "default/js-2",
                                "default/js-3", "default/js-4"}));
  EXPECT_THAT(out_.str(), HasSubstr("jobset.jobset.x-k8s.io \"js-4\" deleted"));
  EXPECT_FALSE(service_.last_list().all_namespaces());
  Clear();
  ASSERT_EQ(Run({"delete", "jobsets", "-l", "app=x", "-A"}), kExitOk);
  EXPECT_EQ(service_.last_list().label_selector(), "app=x");
  EXPECT_TRUE(service_.last_list().all_namespaces());
  Clear();
  EXPECT_EQ(Run({"delete", "jobsets", "--all", "-l", "a=b"}), kExitUsage);
  EXPECT_EQ(Run({"delete", "jobsets", "js-0", "--all"}), kExitUsage);
  EXPECT_EQ(Run({"delete", "pods", "--all"}), kExitUsage);
  Clear();
  EXPECT_EQ(Run({"delete", "jobsets"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("no name was specified"));
}

TEST_F(CommandsTest, VersionOfClientAndServer) {
  ASSERT_EQ(Run({"version"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "Client Version: v0.1.0\nServer Version: v9.9.9\n");
  Clear();
  ASSERT_EQ(Run({"version", "-o", "json"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\"clientVersion\": {"));
  EXPECT_THAT(out_.str(), HasSubstr("\"gitVersion\": \"v9.9.9\""));
  Clear();
  // --client needs no server.
  ASSERT_EQ(Main({"--server=127.0.0.1:1", "version", "--client"}, nullptr,
                 {.out = &out_, .err = &err_}),
            kExitOk);
  EXPECT_EQ(out_.str(), "Client Version: v0.1.0\n");
  Clear();
  EXPECT_EQ(Main({"--server=127.0.0.1:1", "--request-timeout=2s", "version"},
                 nullptr, {.out = &out_, .err = &err_}),
            kExitUnreachable);
  EXPECT_EQ(out_.str(), "Client Version: v0.1.0\n");
}

TEST_F(CommandsTest, GetPagesThroughTheList) {
  ASSERT_EQ(Run({"get", "jobsets", "-o", "name"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "jobset.jobset.x-k8s.io/js-0\njobset.jobset.x-k8s.io/js-1\n"
            "jobset.jobset.x-k8s.io/js-2\njobset.jobset.x-k8s.io/js-3\n"
            "jobset.jobset.x-k8s.io/js-4\n");
  EXPECT_EQ(service_.list_calls(), 3);
}

// A watch that falls behind is told OUT_OF_RANGE; `get -w` watches again
// from the current state and shows only what it has not shown.
TEST_F(CommandsTest, GetWatchRelistsAndGoesOn) {
  ASSERT_EQ(Run({"get", "jobsets", "-w", "--timeout=10s", "-o", "json"}),
            kExitOk)
      << err_.str();
  const std::string out = out_.str();
  // The list (five), js-0 at 101 once (not again after the relist), js-1 at
  // 11 once (listed first), then js-1 at 102.
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = out.find(text); at != std::string::npos;
         at = out.find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("\"resourceVersion\": \"101\""), 1u) << out;
  EXPECT_EQ(count("\"resourceVersion\": \"11\""), 1u) << out;
  EXPECT_EQ(count("\"resourceVersion\": \"102\""), 1u) << out;
  EXPECT_THAT(err_.str(), Not(HasSubstr("error")));
}

TEST_F(CommandsTest, CreateTokenPrintsOnlyTheTokenOnStdout) {
  ASSERT_EQ(Run({"create", "token", "alice", "--groups=dev,ops", "--ttl=24h",
                 "--token=admin.token"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "abc123.secretsecret\n");
  EXPECT_THAT(err_.str(), HasSubstr("cannot be shown again"));
  api::CreateTokenRequest sent = access_.last_token_request();
  EXPECT_EQ(sent.name(), "alice");
  ASSERT_EQ(sent.groups_size(), 2);
  EXPECT_EQ(sent.groups(1), "ops");
  EXPECT_EQ(sent.ttl().seconds(), 24 * 3600);
  // Plaintext: the token travels as metadata.
  EXPECT_EQ(access_.authorization(), "Bearer admin.token");
  EXPECT_EQ(Run({"create", "token"}), kExitUsage);
  EXPECT_EQ(Run({"create", "token", "x", "--ttl=soon"}), kExitUsage);
}

TEST_F(CommandsTest, CredentialErrorsAreExplained) {
  EXPECT_EQ(Run({"create", "token", "x", "--token=bad.token"}), kExitApiError);
  EXPECT_THAT(err_.str(),
              HasSubstr("jobsetd refused the credentials: invalid bearer "
                        "token (check the token or certificate in"));
  Clear();
  EXPECT_EQ(Run({"create", "token", "x", "--token=weak.token"}), kExitApiError);
  EXPECT_EQ(err_.str(),
            "error: User \"bob\" cannot create resource \"tokens\"\n");
}

TEST_F(CommandsTest, CanIPrintsYesOrNoWithTheExitCode) {
  EXPECT_EQ(
      Run({"auth", "can-i", "get", "jobsets.jobset.x-k8s.io", "-n", "team"}),
      kExitOk);
  EXPECT_EQ(out_.str(), "yes\n");
  api::AccessReview review = access_.last_review();
  EXPECT_EQ(review.resource(), "jobsets");
  EXPECT_EQ(review.api_group(), "jobset.x-k8s.io");
  EXPECT_EQ(review.namespace_(), "team");
  Clear();
  EXPECT_EQ(Run({"auth", "can-i", "delete", "po/log", "p-1", "-A"}),
            kExitApiError);
  EXPECT_EQ(out_.str(), "no\n");
  review = access_.last_review();
  EXPECT_EQ(review.resource(), "pods/log");
  EXPECT_EQ(review.name(), "p-1");
  EXPECT_EQ(review.namespace_(), "");
  Clear();
  EXPECT_EQ(Run({"auth", "whoami"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("alice"));
  EXPECT_EQ(Run({"auth", "can-i", "get"}), kExitUsage);
}

TEST_F(CommandsTest, ApplySendsRbacDocumentsWithTheJobSets) {
  const std::string file = WriteConfig("rbac.yaml", R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: editor}
rules:
- {apiGroups: [jobset.x-k8s.io], resources: [jobsets], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-view}
subjects: [{kind: User, name: alice}]
roleRef: {kind: ClusterRole, name: view}
)");
  ASSERT_EQ(Run({"apply", "-f", file, "-n", "team"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "role.rbac.authorization.k8s.io/editor created\n"
            "clusterrolebinding.rbac.authorization.k8s.io/alice-view "
            "created\n");
  std::vector<api::RbacObject> applied = access_.applied();
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[0].role().metadata().namespace_(), "team");
  EXPECT_EQ(applied[1].binding().metadata().namespace_(), "");
  Clear();
  ASSERT_EQ(Run({"apply", "-f", file, "-n", "team"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("editor configured"));
  Clear();
  EXPECT_EQ(Run({"create", "-f", file, "-n", "team"}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("already exists"));
  Clear();
  ASSERT_EQ(Run({"get", "roles", "-n", "team"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("editor"));
  EXPECT_EQ(access_.last_list().namespace_(), "team");
  Clear();
  ASSERT_EQ(Run({"get", "rolebindings", "-A"}), kExitOk) << err_.str();
  EXPECT_EQ(access_.last_list().namespace_(), "");
  ASSERT_EQ(Run({"get", "clusterrolebindings", "-o", "yaml"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("kind: ClusterRoleBinding"));
  EXPECT_EQ(Run({"get", "pods", "p-0", "-A"}), kExitUsage);

  const std::string bad = WriteConfig("bad-rbac.yaml", R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r}
rulez: []
)");
  Clear();
  EXPECT_EQ(Run({"apply", "-f", bad}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("manifest document 1"));
  EXPECT_THAT(err_.str(), HasSubstr("rulez"));
}

constexpr char kConfig[] = R"(apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "http://SERVER"}
users:
- name: admin
  user: {token: config.token}
contexts:
- name: admin@local
  context: {cluster: local, user: admin, namespace: team}
- name: other
  context: {cluster: missing}
current-context: admin@local
)";

TEST_F(CommandsTest, TheConfigFileGivesServerTokenAndNamespace) {
  std::string text = kConfig;
  text.replace(text.find("SERVER"), 6, address_);
  const std::string path = WriteConfig("client.conf", text);
  Environment env;
  env.config = path.c_str();
  ASSERT_EQ(RunWith({"auth", "can-i", "get", "jobsets"}, env), kExitOk)
      << err_.str();
  EXPECT_EQ(access_.authorization(), "Bearer config.token");
  EXPECT_EQ(access_.last_review().namespace_(), "team");
  EXPECT_EQ(RunWith({"--context=other", "auth", "whoami"}, env), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("cluster \"missing\" (of context "
                                    "\"other\") not found"));
  Clear();
  EXPECT_EQ(RunWith({"--config=/nonexistent", "auth", "whoami"}, env),
            kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("/nonexistent"));
}

TEST_F(CommandsTest, ConfigCommands) {
  const std::string path = WriteConfig("edit.conf", kConfig);
  Environment env;
  env.config = path.c_str();
  ASSERT_EQ(RunWith({"config", "view"}, env), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("token: REDACTED"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("config.token")));
  Clear();
  ASSERT_EQ(RunWith({"config", "view", "--raw", "--minify"}, env), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("config.token"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("name: other")));
  Clear();
  ASSERT_EQ(RunWith({"config", "current-context"}, env), kExitOk);
  EXPECT_EQ(out_.str(), "admin@local\n");
  Clear();
  ASSERT_EQ(RunWith({"config", "use-context", "other"}, env), kExitOk);
  EXPECT_EQ(out_.str(), "Switched to context \"other\".\n");
  EXPECT_EQ(RunWith({"config", "use-context", "nope"}, env), kExitApiError);
  Clear();
  ASSERT_EQ(RunWith({"config", "set-context", "--current", "-n", "ns2"}, env),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "Context \"other\" modified.\n");
  Clear();
  ASSERT_EQ(RunWith({"config", "set-context", "fresh", "--cluster=local",
                     "--user=admin"},
                    env),
            kExitOk);
  EXPECT_EQ(out_.str(), "Context \"fresh\" created.\n");
  Clear();
  ASSERT_EQ(RunWith({"config", "get-contexts"}, env), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("CURRENT   NAME"));
  EXPECT_THAT(out_.str(), HasSubstr("*         other"));
  EXPECT_THAT(out_.str(), HasSubstr("fresh"));
  EXPECT_THAT(out_.str(), HasSubstr("ns2"));
  EXPECT_EQ(RunWith({"config", "frobnicate"}, env), kExitUsage);
}

// Reads a whole file ("" when it cannot).
std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// jobsetctl over TLS: the CA and server name from the config, the token as
// call credentials. The certificates are made with the openssl command.
TEST(TlsTest, ConnectsWithTheConfigsCaNameAndToken) {
  if (std::system("openssl version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs the openssl command";
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/tls");
  const std::string script = absl::StrCat(
      "set -e; mkdir -p ", dir, "; cd ", dir,
      "; k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'"
      "; openssl req -x509 $k -keyout ca.key -out ca.pem -days 1 "
      "-subj /CN=ca 2>/dev/null"
      "; openssl req -x509 $k -keyout other.key -out other.pem -days 1 "
      "-subj /CN=other 2>/dev/null"
      "; openssl req $k -keyout server.key -out server.csr "
      "-subj /CN=server.jobsetd 2>/dev/null"
      "; echo subjectAltName=DNS:server.jobsetd > ext"
      "; openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -out server.pem -days 1 -extfile ext 2>/dev/null"
      "; openssl req $k -keyout alice.key -out alice.csr -subj /CN=alice "
      "2>/dev/null"
      "; openssl x509 -req -in alice.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -out alice.pem -days 1 2>/dev/null");
  ASSERT_EQ(std::system(script.c_str()), 0);
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {Slurp(dir + "/server.key"), Slurp(dir + "/server.pem")});
  // Client certificates are asked for and verified when sent.
  options.pem_root_certs = Slurp(dir + "/ca.pem");
  options.client_certificate_request =
      GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  FakeAccess access;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(options),
                           &port);
  builder.RegisterService(&access);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  const std::string config = absl::StrCat(
      "clusters:\n"
      "- name: tls\n  cluster:\n    server: https://127.0.0.1:",
      port, "\n    certificate-authority: ca.pem\n",
      "    tls-server-name: server.jobsetd\n"
      "- name: wrong\n  cluster:\n    server: https://127.0.0.1:",
      port, "\n    certificate-authority: other.pem\n",
      "    tls-server-name: server.jobsetd\n"
      "users:\n- {name: u, user: {token: tls.token}}\n"
      "- {name: alice, user: {client-certificate: alice.pem, client-key: "
      "alice.key}}\n"
      "contexts:\n- {name: c, context: {cluster: tls, user: u}}\n"
      "- {name: m, context: {cluster: tls, user: alice}}\n"
      "- {name: w, context: {cluster: wrong, user: u}}\n"
      "current-context: c\n");
  const std::string path = dir + "/config";
  std::ofstream(path, std::ios::trunc) << config;
  std::ostringstream out, err;
  Environment env;
  env.config = path.c_str();
  EXPECT_EQ(Main({"auth", "can-i", "get", "jobsets"}, env,
                 {.out = &out, .err = &err}),
            kExitOk)
      << err.str();
  EXPECT_EQ(out.str(), "yes\n");
  EXPECT_EQ(access.authorization(), "Bearer tls.token");
  EXPECT_EQ(access.peer_cn(), "");
  // A client certificate instead of a token.
  EXPECT_EQ(
      Main({"--context=m", "auth", "whoami"}, env, {.out = &out, .err = &err}),
      kExitOk)
      << err.str();
  EXPECT_EQ(access.peer_cn(), "alice");
  EXPECT_EQ(access.authorization(), "");
  err.str("");
  EXPECT_EQ(Main({"--context=w", "--request-timeout=5s", "auth", "whoami"}, env,
                 {.out = &out, .err = &err}),
            kExitUnreachable);
  EXPECT_THAT(err.str(), HasSubstr("TLS handshake failed?"));
  server->Shutdown();
}

}  // namespace
}  // namespace jobset::cli
