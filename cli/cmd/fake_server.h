// Test doubles for the verbs' tests: JobSetService, AccessService and
// KueueService fakes served in the test's process, and a fixture that runs
// jobsetctl's Main against them.
#ifndef JOBSET_CLI_CMD_FAKE_SERVER_H_
#define JOBSET_CLI_CMD_FAKE_SERVER_H_

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "cli/commands.h"
#include "common/clock.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/auth.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "proto/kueue_service.grpc.pb.h"

namespace jobset::cli {

// When the fakes' JobSets were created (Unix seconds).
inline constexpr int64_t kCreated = 1'700'000'000;

inline api::JobSet NamedJobSet(const std::string& name, int64_t version) {
  api::JobSet jobset;
  jobset.mutable_metadata()->set_name(name);
  jobset.mutable_metadata()->set_namespace_("default");
  jobset.mutable_metadata()->set_resource_version(absl::StrCat(version));
  jobset.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
      kCreated);
  return jobset;
}

// Serves `jobsets` two per page, and watches as jobsetd would after falling
// behind: a watch from a resourceVersion sends one change and then ends with
// OUT_OF_RANGE; one without lists (ADDED) and sends one more change. A
// JobSet given to Put is what GetJobSet answers for its name, and its pods
// and events list empty (describe's calls); other lists of pods and events
// stay unimplemented.
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

  grpc::Status GetJobSet(grpc::ServerContext*,
                         const api::GetJobSetRequest* request,
                         api::JobSet* response) override {
    absl::MutexLock lock(&mu_);
    auto it = put_.find(request->name());
    *response =
        it == put_.end() ? NamedJobSet(request->name(), 10) : it->second;
    return grpc::Status::OK;
  }

  grpc::Status ListPods(grpc::ServerContext*,
                        const api::ListPodsRequest* request,
                        api::ListPodsResponse*) override {
    return Children(request->jobset());
  }

  grpc::Status ListEvents(grpc::ServerContext*,
                          const api::ListEventsRequest* request,
                          api::ListEventsResponse*) override {
    return Children(request->jobset());
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
  void Put(api::JobSet jobset) {
    absl::MutexLock lock(&mu_);
    put_[jobset.metadata().name()] = std::move(jobset);
  }

 private:
  grpc::Status Children(const std::string& jobset) {
    absl::MutexLock lock(&mu_);
    if (put_.contains(jobset)) return grpc::Status::OK;
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "not in the fake");
  }

  std::vector<api::JobSet> jobsets_;
  absl::Mutex mu_;
  int list_calls_ ABSL_GUARDED_BY(mu_) = 0;
  api::ListJobSetsRequest last_list_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> deleted_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, api::JobSet> put_ ABSL_GUARDED_BY(mu_);
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

// KueueService as jobsetd would answer, over a map: Apply creates, finds
// an object unchanged (the same labels, annotations and spec) or replaces
// it (status kept); a dry run stores nothing; an object named "bad-..." is
// refused as invalid; lists apply "key=value" label selectors. The first
// watch changes the first ClusterQueue (one more pending workload,
// resourceVersion 8), sends it MODIFIED and ends OUT_OF_RANGE, as jobsetd
// after falling behind; later ones send nothing. ListPendingWorkloads
// answers the entries SetPending gave of the queue asked for, after offset
// and up to limit (0: 1000). Fail makes a method answer a status instead.
class FakeKueue final : public api::KueueService::Service {
 public:
  grpc::Status ApplyKueueObject(
      grpc::ServerContext*, const api::ApplyKueueObjectRequest* request,
      api::ApplyKueueObjectResponse* response) override {
    api::KueueObject object = request->object();
    const std::string key = KeyOf(object);
    if (absl::StartsWith(Meta(object).name(), "bad-")) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "spec.resourceGroups[0].coveredResources: Required "
                          "value");
    }
    absl::MutexLock lock(&mu_);
    applied_.push_back(object);
    auto it = stored_.find(key);
    if (it != stored_.end() && request->create_only()) {
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                          absl::StrCat(key, " already exists"));
    }
    response->set_created(it == stored_.end());
    if (it != stored_.end()) {
      response->set_unchanged(Owned(it->second) == Owned(object));
      CopyStatus(it->second, &object);
    }
    if (!request->dry_run()) stored_[key] = object;
    *response->mutable_object() = object;
    return grpc::Status::OK;
  }

  grpc::Status GetKueueObject(grpc::ServerContext*,
                              const api::KueueObjectRef* ref,
                              api::KueueObject* response) override {
    absl::MutexLock lock(&mu_);
    auto it = stored_.find(KeyOf(*ref));
    if (it == stored_.end()) return NotFound(*ref);
    *response = it->second;
    return grpc::Status::OK;
  }

  grpc::Status ListKueueObjects(
      grpc::ServerContext*, const api::ListKueueObjectsRequest* request,
      api::ListKueueObjectsResponse* response) override {
    absl::MutexLock lock(&mu_);
    last_list_ = *request;
    if (auto it = failures_.find("ListKueueObjects"); it != failures_.end()) {
      return it->second;
    }
    for (const api::KueueObject& o : Matching(*request)) {
      *response->add_items() = o;
    }
    response->set_resource_version("7");
    return grpc::Status::OK;
  }

  grpc::Status DeleteKueueObject(grpc::ServerContext*,
                                 const api::KueueObjectRef* ref,
                                 api::KueueObject* response) override {
    absl::MutexLock lock(&mu_);
    auto it = stored_.find(KeyOf(*ref));
    if (it == stored_.end()) return NotFound(*ref);
    *response = it->second;
    stored_.erase(it);
    return grpc::Status::OK;
  }

  grpc::Status WatchKueueObjects(
      grpc::ServerContext*, const api::WatchKueueObjectsRequest* request,
      grpc::ServerWriter<api::KueueWatchEvent>* writer) override {
    absl::MutexLock lock(&mu_);
    if (changed_) return grpc::Status::OK;
    changed_ = true;
    for (auto& [key, o] : stored_) {
      if (Kind(o) != request->kind() || !o.has_cluster_queue()) continue;
      api::ClusterQueue* cq = o.mutable_cluster_queue();
      cq->mutable_metadata()->set_resource_version("8");
      cq->mutable_status()->set_pending_workloads(
          cq->status().pending_workloads() + 1);
      api::KueueWatchEvent event;
      event.set_type("MODIFIED");
      *event.mutable_object() = o;
      writer->Write(event);
      break;
    }
    return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                        "revision 7 is compacted: list again");
  }

  grpc::Status ListPendingWorkloads(
      grpc::ServerContext*, const api::ListPendingWorkloadsRequest* request,
      api::PendingWorkloadsSummary* response) override {
    absl::MutexLock lock(&mu_);
    pending_requests_.push_back(*request);
    if (auto it = failures_.find("ListPendingWorkloads");
        it != failures_.end()) {
      return it->second;
    }
    const int64_t limit = request->limit() == 0 ? 1000 : request->limit();
    int64_t skipped = 0;
    for (const api::PendingWorkload& w : pending_.items()) {
      const bool asked =
          request->cluster_queue().empty()
              ? w.local_queue_name() == request->local_queue() &&
                    w.metadata().namespace_() == request->namespace_()
              : w.cluster_queue() == request->cluster_queue();
      if (!asked || skipped++ < request->offset()) continue;
      if (response->items_size() == limit) break;
      *response->add_items() = w;
    }
    return grpc::Status::OK;
  }

  void Put(const api::KueueObject& object) {
    absl::MutexLock lock(&mu_);
    stored_[KeyOf(object)] = object;
  }
  void SetPending(const api::PendingWorkloadsSummary& pending) {
    absl::MutexLock lock(&mu_);
    pending_ = pending;
  }
  // Makes `method` answer `status`; OK makes it answer again.
  void Fail(const std::string& method, const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      failures_.erase(method);
    } else {
      failures_[method] = status;
    }
  }
  std::vector<api::ListPendingWorkloadsRequest> pending_requests() {
    absl::MutexLock lock(&mu_);
    return pending_requests_;
  }
  std::vector<api::KueueObject> applied() {
    absl::MutexLock lock(&mu_);
    return applied_;
  }
  api::ListKueueObjectsRequest last_list() {
    absl::MutexLock lock(&mu_);
    return last_list_;
  }
  size_t stored() {
    absl::MutexLock lock(&mu_);
    return stored_.size();
  }

 private:
  static const api::ObjectMeta& Meta(const api::KueueObject& o) {
    const google::protobuf::Message& m = o.GetReflection()->GetMessage(
        o, o.GetReflection()->GetOneofFieldDescriptor(
               o, o.GetDescriptor()->FindOneofByName("object")));
    return static_cast<const api::ObjectMeta&>(m.GetReflection()->GetMessage(
        m, m.GetDescriptor()->FindFieldByName("metadata")));
  }
  static std::string Kind(const api::KueueObject& o) {
    return o.GetReflection()
        ->GetOneofFieldDescriptor(o,
                                  o.GetDescriptor()->FindOneofByName("object"))
        ->message_type()
        ->name();
  }
  static std::string KeyOf(const api::KueueObject& o) {
    return absl::StrCat(Kind(o), "/", Meta(o).namespace_(), "/",
                        Meta(o).name());
  }
  static std::string KeyOf(const api::KueueObjectRef& ref) {
    return absl::StrCat(ref.kind(), "/", ref.namespace_(), "/", ref.name());
  }
  // What apply owns, comparable: the object less its status.
  static std::string Owned(api::KueueObject o) {
    if (o.has_cluster_queue()) o.mutable_cluster_queue()->clear_status();
    if (o.has_local_queue()) o.mutable_local_queue()->clear_status();
    return o.DebugString();
  }
  static void CopyStatus(const api::KueueObject& from, api::KueueObject* to) {
    if (from.has_cluster_queue() && to->has_cluster_queue()) {
      *to->mutable_cluster_queue()->mutable_status() =
          from.cluster_queue().status();
    }
  }
  // Whether `meta` has every "key=value" of `selector`.
  static bool HasLabels(const api::ObjectMeta& meta,
                        const std::string& selector) {
    for (absl::string_view pair :
         absl::StrSplit(selector, ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv =
          absl::StrSplit(pair, absl::MaxSplits('=', 1));
      auto it = meta.labels().find(kv.first);
      if (it == meta.labels().end() || it->second != kv.second) return false;
    }
    return true;
  }
  static grpc::Status NotFound(const api::KueueObjectRef& ref) {
    return grpc::Status(
        grpc::StatusCode::NOT_FOUND,
        absl::StrCat(absl::AsciiStrToLower(ref.kind()), "s.kueue.x-k8s.io \"",
                     ref.name(), "\" not found"));
  }
  std::vector<api::KueueObject> Matching(
      const api::ListKueueObjectsRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<api::KueueObject> out;
    for (const auto& [key, o] : stored_) {
      if (Kind(o) != request.kind()) continue;
      if (!request.all_namespaces() &&
          Meta(o).namespace_() != request.namespace_()) {
        continue;
      }
      if (!HasLabels(Meta(o), request.label_selector())) continue;
      out.push_back(o);
    }
    return out;
  }

  absl::Mutex mu_;
  std::map<std::string, api::KueueObject> stored_ ABSL_GUARDED_BY(mu_);
  std::vector<api::KueueObject> applied_ ABSL_GUARDED_BY(mu_);
  api::ListKueueObjectsRequest last_list_ ABSL_GUARDED_BY(mu_);
  bool changed_ ABSL_GUARDED_BY(mu_) = false;
  api::PendingWorkloadsSummary pending_ ABSL_GUARDED_BY(mu_);
  std::vector<api::ListPendingWorkloadsRequest> pending_requests_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, grpc::Status> failures_ ABSL_GUARDED_BY(mu_);
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
    builder.RegisterService(&kueue_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // Runs against the fakes in plaintext (http://: a bare host:port is TLS).
  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), absl::StrCat("--server=http://", address_));
    return Main(args, nullptr, {.out = &out_, .err = &err_});
  }

  // Runs with commands reading the time from `clock`.
  int RunAt(Clock& clock, std::vector<std::string> args) {
    args.insert(args.begin(), absl::StrCat("--server=http://", address_));
    return Main(args, Environment(), {.out = &out_, .err = &err_}, clock);
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
  FakeKueue kueue_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::ostringstream out_, err_;
};

// Writes a CA (ca.pem), server.jobsetd's key and certificate (server.key,
// server.pem), alice's client certificate (alice.key, alice.pem) and another
// CA (other.pem) into `dir` with the openssl command. Returns false when it
// cannot (no openssl command).
inline bool WriteTestCertificates(const std::string& dir) {
  if (std::system("openssl version > /dev/null 2>&1") != 0) return false;
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
  return std::system(script.c_str()) == 0;
}

// Reads a whole file ("" when it cannot).
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// The fakes over TLS (bearer tokens are only sent over TLS): Run() reaches
// them through a config file naming the CA and server name, with a bare
// host:port (which means TLS).
class TlsCommandsTest : public CommandsTest {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/fake_tls");
    if (!WriteTestCertificates(dir_)) GTEST_SKIP() << "needs openssl";
    grpc::SslServerCredentialsOptions options;
    options.pem_key_cert_pairs.push_back(
        {Slurp(dir_ + "/server.key"), Slurp(dir_ + "/server.pem")});
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(options),
                             &port);
    builder.RegisterService(&service_);
    builder.RegisterService(&access_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port);
    config_ = dir_ + "/config";
    std::ofstream(config_, std::ios::trunc) << absl::StrCat(
        "clusters:\n- name: tls\n  cluster:\n    server: ", address_,
        "\n    certificate-authority: ca.pem\n",
        "    tls-server-name: server.jobsetd\n",
        "contexts:\n- {name: c, context: {cluster: tls}}\n",
        "current-context: c\n");
    chmod(config_.c_str(), 0600);
  }

  int Run(std::vector<std::string> args) {
    Environment env;
    env.config = config_.c_str();
    return Main(args, env, {.out = &out_, .err = &err_});
  }

  std::string dir_;
  std::string config_;
};

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_FAKE_SERVER_H_
