// Issue 40 against a real jobsetd: a deleted node stays out whatever
// certificate it kept, renewals are rate limited, join tokens expire (also
// across a restart), bad tokens from a node's address do not lock its agent
// out, and whoever may create tokens cannot mint system:masters.
#include "tests/security_e2e_test_fixture.h"

namespace jobset::testing {
namespace {

using ::testing::HasSubstr;

grpc::Status Renew(const std::shared_ptr<grpc::Channel>& channel,
                   const std::string& key_pem, api::NodeCertificate* renewed) {
  absl::StatusOr<std::string> csr =
      auth::CreateCsr(key_pem, "system:node:n1", "system:nodes");
  EXPECT_TRUE(csr.ok()) << csr.status();
  api::RenewNodeCertificateRequest request;
  request.set_csr_pem(csr.ok() ? *csr : "");
  return api::IdentityService::NewStub(channel)->RenewNodeCertificate(
      Context().get(), request, renewed);
}

// Renewed eight times (as many as jobsetd used to remember), deleted, then
// back with its first certificate: refused, as with every later one, until
// a new join with the join token.
TEST_F(SecurityE2eTest, ARenewedThenDeletedNodeStaysOutUntilItJoinsAgain) {
  absl::StatusOr<Node> first = Join("n1", JoinCredential());
  ASSERT_TRUE(first.ok()) << first.status();
  Node latest = *first;
  for (int i = 0; i < 8; ++i) {
    api::NodeCertificate renewed;
    grpc::Status status = Renew(AsNode(latest), latest.key_pem, &renewed);
    if (status.ok()) {
      latest.cert_pem = renewed.cert_pem();
    } else {
      // Renewals are rate limited: one at a time is all a node gets.
      EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
          << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr("try again in"));
    }
  }
  ASSERT_TRUE(Hello(AsNode(*first), "n1").ok());

  api::GetNodeRequest del;
  del.set_name("n1");
  api::Node deleted;
  ASSERT_TRUE(api::NodeService::NewStub(Admin())
                  ->DeleteNode(Context().get(), del, &deleted)
                  .ok());
  for (const Node* node : {&*first, &latest}) {
    grpc::Status again = Hello(AsNode(*node), "n1");
    EXPECT_EQ(again.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    // The agent stops retrying on "revoked" (IsRevokedCertificate).
    EXPECT_THAT(again.error_message(),
                HasSubstr("certificate has been revoked"));
    EXPECT_THAT(again.error_message(), HasSubstr("node \"n1\""));
    api::NodeCertificate renewed;
    EXPECT_EQ(Renew(AsNode(*node), node->key_pem, &renewed).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  api::ListNodesResponse nodes;
  ASSERT_TRUE(api::NodeService::NewStub(Admin())
                  ->ListNodes(Context().get(), api::ListNodesRequest(), &nodes)
                  .ok());
  EXPECT_EQ(nodes.items_size(), 0);

  // A new join brings the name back; the old certificates stay out.
  absl::StatusOr<Node> rejoined = Join("n1", JoinCredential());
  ASSERT_TRUE(rejoined.ok()) << rejoined.status();
  EXPECT_TRUE(Hello(AsNode(*rejoined), "n1").ok());
  grpc::Status old = Hello(AsNode(*first), "n1");
  EXPECT_EQ(old.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(old.error_message(), HasSubstr("certificate has been revoked"));
}

TEST_F(SecurityE2eTest, RenewalsAreRateLimited) {
  absl::StatusOr<Node> n1 = Join("n1", JoinCredential());
  ASSERT_TRUE(n1.ok()) << n1.status();
  api::NodeCertificate renewed;
  ASSERT_TRUE(Renew(AsNode(*n1), n1->key_pem, &renewed).ok());
  grpc::Status again = Renew(AsNode(*n1), n1->key_pem, &renewed);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(again.error_message(), HasSubstr("node \"n1\""));
  EXPECT_THAT(again.error_message(), HasSubstr("try again in"));
}

// A pod shares its node's address: its bad tokens are its own failures.
TEST_F(SecurityE2eTest, BadTokensFromANodesAddressDoNotLockOutItsAgent) {
  absl::StatusOr<Node> n1 = Join("n1", JoinCredential());
  ASSERT_TRUE(n1.ok()) << n1.status();
  auto guess = As("aaaaaaaa.0123456789abcdefghijklmnopqrstuv");
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(CreateJobSet(guess, "default", "x").error_code(),
              grpc::StatusCode::UNAUTHENTICATED)
        << "attempt " << i;
  }
  EXPECT_EQ(CreateJobSet(guess, "default", "x").error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(Hello(AsNode(*n1), "n1").ok());
  EXPECT_TRUE(CreateJobSet(Admin(), "default", "x").ok());
  EXPECT_TRUE(Join("n2", JoinCredential()).ok());
}

// S27: a user who may create tokens is not cluster-admin by minting one.
TEST_F(SecurityE2eTest, ATokenMakerCannotMintSystemMastersOrMoreThanItHolds) {
  api::RbacObject role;
  api::Role* r = role.mutable_role();
  r->set_api_version("rbac.authorization.k8s.io/v1");
  r->set_kind("ClusterRole");
  r->mutable_metadata()->set_name("token-maker");
  api::PolicyRule* rule = r->add_rules();
  rule->add_api_groups("jobset.x-k8s.io");
  rule->add_resources("tokens");
  rule->add_verbs("create");
  api::RbacObject applied;
  ASSERT_TRUE(api::AccessService::NewStub(Admin())
                  ->ApplyRbac(Context().get(), role, &applied)
                  .ok());
  ASSERT_TRUE(Bind(Admin(), "", "maker-binding", "token-maker", "maker").ok());
  ASSERT_TRUE(Bind(Admin(), "", "ops-admin", "cluster-admin", "ops").ok());
  auto maker = api::AccessService::NewStub(As(Token("maker")));
  auto mint = [&](const std::string& name, const std::string& group) {
    api::CreateTokenRequest request;
    request.set_name(name);
    if (!group.empty()) request.add_groups(group);
    api::CreateTokenResponse response;
    return maker->CreateToken(Context().get(), request, &response);
  };
  for (const char* group : {"system:masters", "system:nodes"}) {
    grpc::Status status = mint("evil", group);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(group));
  }
  // "ops" is bound to cluster-admin: a token for it grants what the maker
  // lacks.
  grpc::Status ops = mint("ops", "");
  EXPECT_EQ(ops.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(ops.error_message(),
              HasSubstr("is attempting to grant RBAC permissions"));
  EXPECT_TRUE(mint("plain", "nobody-binds-this").ok());
}

// The join token expires (--join_token_ttl), also after a restart; the
// restarted jobsetd writes a new one.
TEST_F(SecurityE2eTest, AnExpiredJoinTokenIsRefusedAlsoAfterARestart) {
  Start({"--join_token_ttl=2s"});
  const std::string credential = JoinCredential();
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  absl::Status joined = Join("n1", credential).status();
  while (joined.ok() || absl::IsAlreadyExists(joined) ||
         absl::IsPermissionDenied(joined)) {
    ASSERT_LT(absl::Now(), deadline) << "the join token did not expire";
    absl::SleepFor(absl::Milliseconds(200));
    joined = Join("n1", credential).status();
  }
  EXPECT_EQ(joined.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(joined.message(), "join token is invalid or expired");
  Start({});  // The default TTL, 24h.
  EXPECT_EQ(Join("n2", credential).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_NE(JoinCredential(), credential);
  EXPECT_TRUE(Join("n2", JoinCredential()).ok());
}

// A watch of namespace "default" over `channel`, for 20 s at most.
std::unique_ptr<grpc::ClientReader<api::WatchEvent>> WatchDefault(
    const std::shared_ptr<grpc::Channel>& channel,
    grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(20));
  api::WatchJobSetsRequest request;
  request.set_namespace_("default");
  return api::JobSetService::NewStub(channel)->WatchJobSets(context, request);
}

// A watch ends when the token that opened it is deleted.
TEST_F(SecurityE2eTest, AWatchEndsWhenItsTokenIsDeleted) {
  ASSERT_TRUE(Bind(Admin(), "", "w-view", "view", "w").ok());
  grpc::ClientContext context;
  auto stream = WatchDefault(As(Token("w")), &context);
  ASSERT_TRUE(CreateJobSet(Admin(), "default", "seen").ok());
  api::WatchEvent event;
  ASSERT_TRUE(stream->Read(&event));  // Open, and authorized.

  api::DeleteTokenRequest del;
  del.set_name("w");
  api::TokenInfo deleted;
  ASSERT_TRUE(api::AccessService::NewStub(Admin())
                  ->DeleteToken(Context().get(), del, &deleted)
                  .ok());
  const absl::Time start = absl::Now();
  while (stream->Read(&event)) {
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  grpc::Status ended = stream->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(ended.error_message(), HasSubstr("the token was deleted"));
}

// Watches and `logs -f` share their user's streams (--max_streams_per_user):
// with one held open, a follow is refused before it looks for its pod, and
// another user is not affected.
TEST_F(SecurityE2eTest, AUsersWatchesAndLogFollowsShareOneLimit) {
  Start({"--max_streams_per_user=1"});
  ASSERT_TRUE(Bind(Admin(), "", "w-view", "view", "w").ok());
  const std::shared_ptr<grpc::Channel> w = As(Token("w"));
  grpc::ClientContext context;
  auto stream = WatchDefault(w, &context);
  ASSERT_TRUE(CreateJobSet(Admin(), "default", "seen").ok());
  api::WatchEvent event;
  ASSERT_TRUE(stream->Read(&event));  // Open: it holds w's one stream.

  auto follow = [&](const std::shared_ptr<grpc::Channel>& channel) {
    grpc::ClientContext logs_context;
    logs_context.set_deadline(std::chrono::system_clock::now() +
                              std::chrono::seconds(10));
    api::GetPodLogsRequest logs;
    logs.set_namespace_("default");
    logs.set_pod("no-such-pod");
    logs.set_follow(true);
    auto reader =
        api::PodLogService::NewStub(channel)->GetPodLogs(&logs_context, logs);
    api::PodLogs chunk;
    while (reader->Read(&chunk)) {
    }
    return reader->Finish();
  };
  const grpc::Status refused = follow(w);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("(--max_streams_per_user=1)"));
  // The admin's own streams are its own: it gets as far as the pod.
  EXPECT_EQ(follow(Admin()).error_code(), grpc::StatusCode::NOT_FOUND);
  context.TryCancel();
}

}  // namespace
}  // namespace jobset::testing
