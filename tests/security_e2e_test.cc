// jobsetd's identity and authorization against a real jobsetd process, with
// real gRPC clients over the network (127.0.0.1): the attacks of
// security-model.md §3 (the S-series) each refused with its code, and the
// positive paths (the admin.conf credential, tokens, RBAC, a node joining,
// renewing and being revoked).
#include "tests/security_e2e_test_fixture.h"

namespace jobset::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

TEST_F(SecurityE2eTest, TheAdminConfCredentialWorksAndIsPrivate) {
  EXPECT_TRUE(CreateJobSet(Admin(), "default", "train").ok());
  EXPECT_EQ(CountJobSets("default"), 1);
  struct stat st;
  for (const char* file : {"/data/admin.conf", "/data/join-token",
                           "/data/pki/ca.key", "/data/pki/server.key"}) {
    ASSERT_EQ(stat((dir_ + file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, 0600) << file;
  }
  EXPECT_THAT(credentials_.join_token, ::testing::StartsWith("JS1"));
}

// S1: a plaintext client never reaches the API.
TEST_F(SecurityE2eTest, S1PlaintextIsRefusedAtConnect) {
  auto channel = grpc::CreateChannel(jobsetd_->address(),
                                     grpc::InsecureChannelCredentials());
  grpc::Status status = CreateJobSet(channel, "default", "plain");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(CountJobSets("default"), 0);
}

// S2: a client that trusts another CA refuses jobsetd (and sends nothing).
TEST_F(SecurityE2eTest, S2AClientTrustingAnotherCaRefusesTheServer) {
  absl::StatusOr<auth::KeyAndCert> other = auth::CreateCa("other", absl::Now());
  ASSERT_TRUE(other.ok());
  auto channel = SecureChannel(jobsetd_->address(), other->cert_pem,
                               credentials_.admin_token);
  EXPECT_EQ(CreateJobSet(channel, "default", "x").error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(CountJobSets("default"), 0);
}

// S3, S4: client certificates from another CA, or expired, fail the
// handshake.
TEST_F(SecurityE2eTest, S3S4ForeignAndExpiredCertificatesFailTheHandshake) {
  absl::StatusOr<auth::KeyAndCert> other = auth::CreateCa("other", absl::Now());
  ASSERT_TRUE(other.ok());
  auth::LeafRequest leaf{.common_name = "system:node:n1",
                         .organizations = {"system:nodes"},
                         .client_auth = true};
  absl::StatusOr<auth::KeyAndCert> foreign =
      auth::IssueKeyAndCertificate(*other, leaf, absl::Now());
  ASSERT_TRUE(foreign.ok());
  auth::KeyAndCert ca{.key_pem = credentials_.ca_key_pem,
                      .cert_pem = credentials_.ca_pem};
  leaf.validity = absl::Hours(1);
  absl::StatusOr<auth::KeyAndCert> expired =
      auth::IssueKeyAndCertificate(ca, leaf, absl::Now() - absl::Hours(3));
  ASSERT_TRUE(expired.ok());
  for (const auth::KeyAndCert* cert : {&*foreign, &*expired}) {
    auto channel = SecureChannel(jobsetd_->address(), credentials_.ca_pem, "",
                                 cert->cert_pem, cert->key_pem);
    EXPECT_EQ(Hello(channel, "n1").error_code(), grpc::StatusCode::UNAVAILABLE);
  }
}

// S11 (ShadowRay) and S19: no credentials, or a bad token.
TEST_F(SecurityE2eTest, S11S19AnonymousAndBadTokensAreUnauthenticated) {
  grpc::Status anonymous = CreateJobSet(As(""), "default", "shadow");
  EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(anonymous.error_message(), HasSubstr("no credentials"));
  std::string alice = Token("alice");
  api::DeleteTokenRequest del;
  del.set_name("alice");
  api::TokenInfo deleted;
  ASSERT_TRUE(api::AccessService::NewStub(Admin())
                  ->DeleteToken(Context().get(), del, &deleted)
                  .ok());
  std::string wrong_secret = credentials_.admin_token;
  wrong_secret.back() = wrong_secret.back() == 'a' ? 'b' : 'a';
  for (const std::string& token :
       {alice, wrong_secret, std::string("garbage")}) {
    grpc::Status status = CreateJobSet(As(token), "default", "x");
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(status.error_message(), "invalid or expired token");
  }
  EXPECT_EQ(CountJobSets("default"), 0);
}

// S25: guessing is slowed: after 100 unknown tokens in a minute the
// address is refused for them; after 100 bad secrets of one token id, that
// id from that address. Whoever sends a valid credential of another is not
// (other addresses neither: the limiter's unit test).
TEST_F(SecurityE2eTest, S25ManyBadTokensFromOneAddressAreRefusedForAWhile) {
  auto guess = As("aaaaaaaa.0123456789abcdefghijklmnopqrstuv");
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(CreateJobSet(guess, "default", "x").error_code(),
              grpc::StatusCode::UNAUTHENTICATED)
        << "attempt " << i;
  }
  grpc::Status limited = CreateJobSet(guess, "default", "x");
  EXPECT_EQ(limited.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(limited.error_message(),
              HasSubstr("too many failed authentications from 127.0.0.1"));
  EXPECT_TRUE(CreateJobSet(Admin(), "default", "x").ok());
  EXPECT_TRUE(Join("n1", JoinCredential()).ok());

  std::string wrong_secret = credentials_.admin_token;
  wrong_secret.back() = wrong_secret.back() == 'a' ? 'b' : 'a';
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(CreateJobSet(As(wrong_secret), "default", "y").error_code(),
              grpc::StatusCode::UNAUTHENTICATED)
        << "attempt " << i;
  }
  grpc::Status id_limited = CreateJobSet(Admin(), "default", "y");
  EXPECT_EQ(id_limited.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(id_limited.error_message(),
              HasSubstr("from 127.0.0.1 for token "));
}

// S13, S14, S15: view and edit users confined to what their bindings say,
// refused in Kubernetes' words.
TEST_F(SecurityE2eTest, S13S14S15RbacConfinesUsers) {
  std::string viewer = Token("v");
  std::string editor = Token("e");
  ASSERT_TRUE(Bind(Admin(), "team-a", "v-view", "view", "v").ok());
  ASSERT_TRUE(Bind(Admin(), "team-a", "e-edit", "edit", "e").ok());

  grpc::Status create = CreateJobSet(As(viewer), "team-a", "t");
  EXPECT_EQ(create.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(create.error_message(),
            "jobsets.jobset.x-k8s.io \"t\" is forbidden: User \"v\" cannot "
            "create resource \"jobsets\" in API group \"jobset.x-k8s.io\" in "
            "the namespace \"team-a\"");
  EXPECT_TRUE(CreateJobSet(As(editor), "team-a", "t").ok());
  EXPECT_EQ(CreateJobSet(As(editor), "team-b", "t").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  auto stub = api::JobSetService::NewStub(As(viewer));
  api::ListJobSetsRequest list;
  list.set_namespace_("team-a");
  api::ListJobSetsResponse listed;
  EXPECT_TRUE(stub->ListJobSets(Context().get(), list, &listed).ok());
  EXPECT_EQ(listed.items_size(), 1);
  list.set_namespace_("team-b");
  EXPECT_EQ(stub->ListJobSets(Context().get(), list, &listed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  list.set_all_namespaces(true);
  EXPECT_EQ(stub->ListJobSets(Context().get(), list, &listed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  api::WatchJobSetsRequest watch;
  watch.set_namespace_("team-b");
  auto context = Context();
  auto stream = stub->WatchJobSets(context.get(), watch);
  api::WatchEvent event;
  EXPECT_FALSE(stream->Read(&event));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);

  api::GetPodLogsRequest logs;
  logs.set_namespace_("team-b");
  logs.set_pod("p");
  auto log_context = Context();
  auto log_stream = api::PodLogService::NewStub(As(viewer))
                        ->GetPodLogs(log_context.get(), logs);
  api::PodLogs chunk;
  EXPECT_FALSE(log_stream->Read(&chunk));
  grpc::Status log_status = log_stream->Finish();
  EXPECT_EQ(log_status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(log_status.error_message(),
              HasSubstr("cannot get resource \"pods/log\" in API group \"\" "
                        "in the namespace \"team-b\""));

  // Nodes are not in view/edit: cordoning needs a ClusterRole.
  api::GetNodeRequest cordon;
  cordon.set_name("n1");
  api::Node node;
  grpc::Status cordoned = api::NodeService::NewStub(As(editor))
                              ->CordonNode(Context().get(), cordon, &node);
  EXPECT_EQ(cordoned.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(cordoned.error_message(), HasSubstr("at the cluster scope"));
}

// Secrets: view may not read them (PERMISSION_DENIED before anything is
// read), edit may; view reads ConfigMaps. No value reaches the audit log
// or jobsetd's output.
TEST_F(SecurityE2eTest, OnlyThoseWhoMayGetSecretsSeeTheirValues) {
  std::string viewer = Token("v");
  std::string editor = Token("e");
  ASSERT_TRUE(Bind(Admin(), "team-a", "v-view", "view", "v").ok());
  ASSERT_TRUE(Bind(Admin(), "team-a", "e-edit", "edit", "e").ok());
  const std::string value = "s3cr3t-value-7f2a";

  api::ApplySecretRequest apply;
  apply.mutable_secret()->mutable_metadata()->set_name("db");
  apply.mutable_secret()->mutable_metadata()->set_namespace_("team-a");
  (*apply.mutable_secret()->mutable_string_data())["password"] = value;
  api::ApplySecretResponse applied;
  grpc::Status status = api::JobSetService::NewStub(As(viewer))
                            ->ApplySecret(Context().get(), apply, &applied);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(api::JobSetService::NewStub(As(editor))
                  ->ApplySecret(Context().get(), apply, &applied)
                  .ok());
  EXPECT_TRUE(applied.secret().data().empty());

  api::GetSecretRequest get;
  get.set_namespace_("team-a");
  get.set_name("db");
  api::Secret secret;
  status = api::JobSetService::NewStub(As(viewer))
               ->GetSecret(Context().get(), get, &secret);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(),
            "secrets \"db\" is forbidden: User \"v\" cannot get resource "
            "\"secrets\" in API group \"\" in the namespace \"team-a\"");
  api::ListSecretsRequest list;
  list.set_namespace_("team-a");
  api::ListSecretsResponse listed;
  EXPECT_EQ(api::JobSetService::NewStub(As(viewer))
                ->ListSecrets(Context().get(), list, &listed)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(api::JobSetService::NewStub(As(editor))
                  ->GetSecret(Context().get(), get, &secret)
                  .ok());
  EXPECT_EQ(secret.data().at("password"), value);

  api::ApplyConfigMapRequest cm;
  cm.mutable_config_map()->mutable_metadata()->set_name("settings");
  cm.mutable_config_map()->mutable_metadata()->set_namespace_("team-a");
  api::ApplyConfigMapResponse cm_applied;
  EXPECT_EQ(api::JobSetService::NewStub(As(viewer))
                ->ApplyConfigMap(Context().get(), cm, &cm_applied)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(api::JobSetService::NewStub(As(editor))
                  ->ApplyConfigMap(Context().get(), cm, &cm_applied)
                  .ok());
  api::ListConfigMapsRequest cm_list;
  cm_list.set_namespace_("team-a");
  api::ListConfigMapsResponse cm_listed;
  ASSERT_TRUE(api::JobSetService::NewStub(As(viewer))
                  ->ListConfigMaps(Context().get(), cm_list, &cm_listed)
                  .ok());
  EXPECT_EQ(cm_listed.items_size(), 1);
  // Other namespaces are closed to both.
  cm_list.set_namespace_("team-b");
  EXPECT_EQ(api::JobSetService::NewStub(As(editor))
                ->ListConfigMaps(Context().get(), cm_list, &cm_listed)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  (void)jobsetd_->Kill(SIGTERM);
  (void)jobsetd_->Wait();
  jobsetd_.reset();
  EXPECT_THAT(ReadFile(audit_), Not(HasSubstr(value)));
  EXPECT_THAT(ReadFile(dir_ + "/jobsetd.stderr"), Not(HasSubstr(value)));
}

// S17: no one grants what they do not hold.
TEST_F(SecurityE2eTest, S17AnEditorCannotBindClusterAdmin) {
  std::string editor = Token("e");
  ASSERT_TRUE(Bind(Admin(), "team-a", "e-admin", "admin", "e").ok());
  grpc::Status escalate =
      Bind(As(editor), "team-a", "mine", "cluster-admin", "e");
  EXPECT_EQ(escalate.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // In kube-apiserver's words, with every permission not held (one line each).
  EXPECT_THAT(escalate.error_message(),
              ::testing::StartsWith(
                  "rolebindings.rbac.authorization.k8s.io \"mine\" is "
                  "forbidden: user \"e\" (groups="));
  EXPECT_THAT(escalate.error_message(),
              HasSubstr("attempting to grant RBAC permissions not currently "
                        "held:\n{"));
  EXPECT_THAT(escalate.error_message(),
              HasSubstr("{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}"));
  // An admin of team-a may hand out edit in team-a.
  Token("f");
  EXPECT_TRUE(Bind(As(editor), "team-a", "f-edit", "edit", "f").ok());
}

TEST_F(SecurityE2eTest, AuthCanIAnswersForTheCaller) {
  std::string viewer = Token("v");
  ASSERT_TRUE(Bind(Admin(), "team-a", "v-view", "view", "v").ok());
  auto stub = api::AccessService::NewStub(As(viewer));
  api::AccessReview review;
  review.set_verb("list");
  review.set_resource("pods");
  review.set_namespace_("team-a");
  api::AccessReviewResult result;
  ASSERT_TRUE(stub->ReviewAccess(Context().get(), review, &result).ok());
  EXPECT_TRUE(result.allowed());
  EXPECT_EQ(result.user(), "v");
  review.set_verb("delete");
  review.set_resource("jobsets");
  ASSERT_TRUE(stub->ReviewAccess(Context().get(), review, &result).ok());
  EXPECT_FALSE(result.allowed());
}

// The positive path: join, then connect as the node; S6, S9, S10, S21.
TEST_F(SecurityE2eTest, ANodeJoinsAndIsItsCertificate) {
  absl::StatusOr<Node> n1 = Join("n1", JoinCredential());
  ASSERT_TRUE(n1.ok()) << n1.status();
  absl::StatusOr<auth::CertificateInfo> cert =
      auth::ParseCertificate(n1->cert_pem);
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(cert->common_name, "system:node:n1");
  EXPECT_FALSE(cert->is_ca);
  EXPECT_FALSE(cert->server_auth);

  EXPECT_TRUE(Hello(AsNode(*n1), "n1").ok());
  grpc::Status other = Hello(AsNode(*n1), "n2");  // S6
  EXPECT_EQ(other.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(other.error_message(),
            "node \"n1\" cannot register as node \"n2\"");
  grpc::Status token = Hello(Admin(), "n1");  // S9
  EXPECT_EQ(token.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(token.error_message(), HasSubstr("requires a node certificate"));
  grpc::Status create = CreateJobSet(AsNode(*n1), "default", "x");  // S10
  EXPECT_EQ(create.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(create.error_message(),
              HasSubstr("User \"system:node:n1\" cannot create resource "
                        "\"jobsets\""));
  // S21: the name is taken by a node with another secret.
  absl::Status taken = Join("n1", JoinCredential()).status();
  EXPECT_EQ(taken.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(taken.message(), HasSubstr("node name \"n1\" is already"));
  // The same node may join again (a lost certificate).
  EXPECT_TRUE(Join("n1", JoinCredential(), n1->secret).ok());
}

// S20: a wrong secret, and the token from before a rotation.
TEST_F(SecurityE2eTest, S20RotatedAndWrongJoinTokensAreRefused) {
  const std::string old = JoinCredential();
  absl::StatusOr<auth::TokenParts> parts = auth::ParseToken(old);
  ASSERT_TRUE(parts.ok());
  parts->secret.back() = parts->secret.back() == 'a' ? 'b' : 'a';
  absl::Status wrong = Join("n1", auth::FormatToken(*parts)).status();
  EXPECT_EQ(wrong.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong.message(), "join token is invalid or expired");

  api::RotateJoinTokenRequest rotate;
  api::RotateJoinTokenResponse rotated;
  ASSERT_TRUE(api::AccessService::NewStub(Admin())
                  ->RotateJoinToken(Context().get(), rotate, &rotated)
                  .ok());
  EXPECT_EQ(Join("n2", old).status().code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<auth::JoinToken> fresh =
      auth::ParseJoinToken(rotated.join_token());
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(Join("n2", auth::FormatToken(fresh->credential)).ok());
  EXPECT_EQ(ReadFile(dir_ + "/data/join-token"),
            absl::StrCat(rotated.join_token(), "\n"));
}

// S23, S24: renewal signs only the caller's own name, nothing a CSR adds.
TEST_F(SecurityE2eTest, S23S24RenewalSignsOnlyTheCallersName) {
  absl::StatusOr<Node> n1 = Join("n1", JoinCredential());
  ASSERT_TRUE(n1.ok()) << n1.status();
  absl::StatusOr<std::string> key = auth::GeneratePrivateKey();
  ASSERT_TRUE(key.ok());
  absl::StatusOr<std::string> csr =
      auth::CreateCsr(*key, "system:node:n2", "system:masters");
  ASSERT_TRUE(csr.ok());
  api::RenewNodeCertificateRequest request;
  request.set_csr_pem(*csr);
  api::NodeCertificate renewed;
  ASSERT_TRUE(api::IdentityService::NewStub(AsNode(*n1))
                  ->RenewNodeCertificate(Context().get(), request, &renewed)
                  .ok());
  absl::StatusOr<auth::CertificateInfo> cert =
      auth::ParseCertificate(renewed.cert_pem());
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(cert->common_name, "system:node:n1");
  EXPECT_THAT(cert->organizations, ::testing::ElementsAre("system:nodes"));
  // A user cannot renew anything.
  EXPECT_EQ(api::IdentityService::NewStub(Admin())
                ->RenewNodeCertificate(Context().get(), request, &renewed)
                .error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

// S18: deleting a node revokes its certificate and ends its stream.
TEST_F(SecurityE2eTest, S18ADeletedNodeIsRevoked) {
  absl::StatusOr<Node> n1 = Join("n1", JoinCredential());
  ASSERT_TRUE(n1.ok()) << n1.status();
  auto channel = AsNode(*n1);
  auto stub = api::AgentService::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(20));
  auto stream = stub->Connect(&context);
  api::AgentMessage hello;
  hello.mutable_hello()->mutable_node()->set_name("n1");
  hello.mutable_hello()->mutable_node()->set_address("127.0.0.1");
  ASSERT_TRUE(stream->Write(hello));
  api::SchedulerMessage msg;
  ASSERT_TRUE(stream->Read(&msg));

  api::GetNodeRequest del;
  del.set_name("n1");
  api::Node deleted;
  ASSERT_TRUE(api::NodeService::NewStub(Admin())
                  ->DeleteNode(Context().get(), del, &deleted)
                  .ok());
  const absl::Time start = absl::Now();
  while (stream->Read(&msg)) {
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  grpc::Status again = Hello(AsNode(*n1), "n1");
  EXPECT_EQ(again.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(again.error_message(),
              HasSubstr("certificate has been revoked: node \"n1\" was "
                        "deleted"));
}

// S12: no plaintext on a non-loopback address.
TEST_F(SecurityE2eTest, S12InsecureIsRefusedOffLoopback) {
  auto insecure =
      JobsetdProcess::Start({.binary = JobsetdProcess::DefaultBinary(),
                             .args = {"--listen=0.0.0.0:0", "--insecure",
                                      "--data_dir=" + dir_ + "/insecure"},
                             .stderr_path = dir_ + "/insecure.stderr",
                             .startup_timeout = absl::Seconds(10)});
  EXPECT_FALSE(insecure.ok());
  EXPECT_THAT(ReadFile(dir_ + "/insecure.stderr"),
              HasSubstr("refusing to serve without TLS on 0.0.0.0:0"));
}

// S26 and the audit log: Kubernetes audit events (audit.k8s.io/v1, level
// Metadata), one per line, for what changes something and for every
// refusal, reads included; allowed reads only with --audit_reads. Decisions
// are there, secrets are not.
TEST_F(SecurityE2eTest, S26TheAuditLogRecordsDecisionsAndNoSecrets) {
  std::string alice = Token("alice");
  (void)CreateJobSet(As(alice), "default", "denied");
  (void)CreateJobSet(As(""), "default", "anonymous");
  api::GetJobSetRequest get;
  get.set_namespace_("default");
  get.set_name("peek");
  api::JobSet got;
  EXPECT_EQ(api::JobSetService::NewStub(As(alice))
                ->GetJobSet(Context().get(), get, &got)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  absl::StatusOr<Node> n1 = Join("n1", JoinCredential());
  ASSERT_TRUE(n1.ok());
  ASSERT_TRUE(CreateJobSet(Admin(), "default", "allowed").ok());
  EXPECT_EQ(CountJobSets("default"), 1);  // An allowed read: not logged.
  (void)jobsetd_->Kill(SIGTERM);
  (void)jobsetd_->Wait();
  jobsetd_.reset();
  std::string audit = ReadFile(audit_);
  std::vector<std::string> lines =
      absl::StrSplit(audit, '\n', absl::SkipEmpty());
  // The one line that has every one of `parts`, or "".
  auto line_with = [&](std::vector<std::string> parts) {
    std::string found;
    for (const std::string& line : lines) {
      bool all = true;
      for (const std::string& part : parts) {
        all = all && absl::StrContains(line, part);
      }
      if (all) {
        EXPECT_THAT(found, IsEmpty()) << "twice: " << line;
        found = line;
      }
    }
    return found;
  };
  for (const std::string& line : lines) {
    EXPECT_THAT(line, StartsWith("{\"kind\":\"Event\",\"apiVersion\":"
                                 "\"audit.k8s.io/v1\",\"level\":\"Metadata\""));
    EXPECT_THAT(line, HasSubstr("\"stage\":\"ResponseComplete\""));
    EXPECT_THAT(line, HasSubstr("\"jobsetd.x-k8s.io/grpc-method\":\"/"));
    EXPECT_THAT(line, Not(HasSubstr("\"verb\":\"list\"")));
  }
  const std::string collection =
      "\"requestURI\":\"/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/"
      "jobsets\"";
  std::string denied =
      line_with({collection, "\"verb\":\"create\"", "\"username\":\"alice\"",
                 "\"name\":\"denied\""});
  EXPECT_THAT(denied,
              HasSubstr("\"authorization.k8s.io/decision\":\"forbid\""));
  EXPECT_THAT(denied, HasSubstr("\"reason\":\"Forbidden\""));
  EXPECT_THAT(denied, HasSubstr("\"code\":403}"));
  EXPECT_THAT(denied, HasSubstr("\"sourceIPs\":[\"127.0.0.1\"]"));
  std::string anonymous = line_with({"\"name\":\"anonymous\""});
  EXPECT_THAT(anonymous, HasSubstr("\"user\":{}"));
  EXPECT_THAT(anonymous, HasSubstr("\"reason\":\"Unauthorized\""));
  EXPECT_THAT(anonymous, HasSubstr("\"code\":401}"));
  EXPECT_THAT(anonymous, Not(HasSubstr("authorization.k8s.io/decision")));
  std::string peek = line_with({"\"name\":\"peek\""});
  EXPECT_THAT(peek, HasSubstr("\"verb\":\"get\""));
  EXPECT_THAT(peek, HasSubstr("/namespaces/default/jobsets/peek\""));
  EXPECT_THAT(peek, HasSubstr("\"code\":403}"));
  std::string allowed = line_with({"\"name\":\"allowed\""});
  EXPECT_THAT(allowed, HasSubstr(collection));
  EXPECT_THAT(allowed,
              HasSubstr("\"authorization.k8s.io/decision\":\"allow\""));
  EXPECT_THAT(allowed,
              HasSubstr("\"authorization.k8s.io/reason\":\"RBAC: allowed by "));
  EXPECT_THAT(allowed, HasSubstr("\"responseStatus\":{\"metadata\":{},"
                                 "\"code\":201}"));
  EXPECT_THAT(allowed, HasSubstr("\"authentication.kubernetes.io/"
                                 "credential-id\":[\"TokenID="));
  EXPECT_THAT(allowed, HasSubstr("\"jobsetd.x-k8s.io/grpc-method\":"
                                 "\"/jobset.api.JobSetService/CreateJobSet\""));
  for (const std::string& secret :
       {credentials_.admin_token, alice, JoinCredential(), n1->secret,
        credentials_.admin_token.substr(credentials_.admin_token.find('.') +
                                        1)}) {
    EXPECT_THAT(audit, Not(HasSubstr(secret)));
    EXPECT_THAT(ReadFile(dir_ + "/jobsetd.stderr"), Not(HasSubstr(secret)));
  }
}

// Restarted, jobsetd keeps its CA, tokens, bindings and revocations.
TEST_F(SecurityE2eTest, IdentityRecordsSurviveARestart) {
  std::string viewer = Token("v");
  ASSERT_TRUE(Bind(Admin(), "team-a", "v-view", "view", "v").ok());
  const std::string ca = credentials_.ca_pem;
  ASSERT_TRUE(jobsetd_->Kill(SIGKILL).ok());
  (void)jobsetd_->Wait();
  auto jobsetd = JobsetdProcess::Start(
      {.binary = JobsetdProcess::DefaultBinary(),
       .args = {"--listen=127.0.0.1:0", "--data_dir=" + dir_ + "/data",
                "--fsync=false"},
       .stderr_path = dir_ + "/jobsetd.stderr"});
  ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
  jobsetd_ = *std::move(jobsetd);
  auto credentials = ReadClusterCredentials(dir_ + "/data");
  ASSERT_TRUE(credentials.ok());
  EXPECT_EQ(credentials->ca_pem, ca);
  EXPECT_EQ(credentials->admin_token, credentials_.admin_token);
  auto stub = api::JobSetService::NewStub(As(viewer));
  api::ListJobSetsRequest list;
  list.set_namespace_("team-a");
  api::ListJobSetsResponse listed;
  EXPECT_TRUE(stub->ListJobSets(Context().get(), list, &listed).ok());
  EXPECT_EQ(CreateJobSet(As(viewer), "team-a", "t").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace jobset::testing
