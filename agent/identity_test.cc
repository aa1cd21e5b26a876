// The agent's node identity (joining, reusing, renewing, refusing) against a
// fake jobsetd: a TLS server on 127.0.0.1 that serves IdentityService (signing
// CSRs with auth::IssueCertificate) and AgentService (recording who
// connected), and asks for client certificates that verify against its CA.
#include "agent/identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/fake_jobsetd.h"
#include "agent/fake_runtime.h"
#include "auth/pki.h"
#include "auth/tokens.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"
#include "proto/auth.grpc.pb.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

using testing::FakeJobsetd;
using testing::FakeState;
using testing::kTokenId;
using testing::kTokenSecret;

int ModeOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return -1;
  return st.st_mode & 0777;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::trunc);
  out << data;
}

class IdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    pki_dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/pki", ++counter);
    absl::StatusOr<auth::KeyAndCert> ca = auth::CreateCa("jobsetd-ca", Now());
    ASSERT_THAT(ca.status(), IsOk());
    ca_ = *ca;
    server_ = std::make_unique<FakeJobsetd>(ca_, ca_);
    absl::StatusOr<std::string> hash = auth::SpkiSha256(ca_.cert_pem);
    ASSERT_THAT(hash.status(), IsOk());
    ca_hash_ = *hash;
  }

  // The real time: the TLS handshakes check certificates against it, so
  // the fake clock starts there.
  static absl::Time Now() { return RealClock::Get()->Now(); }

  std::string Token(const std::string& secret = kTokenSecret) const {
    auth::JoinToken token;
    token.ca_hash = ca_hash_;
    token.credential = {kTokenId, secret};
    return auth::FormatJoinToken(token);
  }

  Identity::Options Options(const std::string& name = "node-a") const {
    Identity::Options options;
    options.pki_dir = pki_dir_;
    options.node_name = name;
    options.scheduler = server_->target();
    options.join_timeout = absl::Seconds(5);
    return options;
  }

  std::string File(const std::string& name) const {
    return absl::StrCat(pki_dir_, "/", name);
  }

  std::string pki_dir_;
  auth::KeyAndCert ca_;
  std::string ca_hash_;
  std::unique_ptr<FakeJobsetd> server_;
  FakeClock clock_{Now()};
};

TEST_F(IdentityTest, JoinStoresFilesThenTheAgentConnectsWithMtls) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  EXPECT_EQ(ModeOf(pki_dir_), 0700);
  EXPECT_EQ(ModeOf(File("node.key")), 0600);
  EXPECT_EQ(ModeOf(File("node-secret")), 0600);
  EXPECT_TRUE(Exists(File("node.crt")));
  EXPECT_EQ(ReadFile(File("ca.crt")), ca_.cert_pem);
  EXPECT_THAT(auth::CheckKeyMatchesCertificate(ReadFile(File("node.key")),
                                               ReadFile(File("node.crt"))),
              IsOk());
  absl::StatusOr<auth::CertificateInfo> info =
      auth::ParseCertificate(ReadFile(File("node.crt")));
  ASSERT_THAT(info.status(), IsOk());
  EXPECT_EQ(info->common_name, "system:node:node-a");
  {
    FakeState& s = server_->state();
    absl::MutexLock lock(&s.mu);
    EXPECT_EQ(s.join_calls, 1);
    EXPECT_EQ(s.node_secrets["node-a"], ReadFile(File("node-secret")));
  }

  FakeRuntime runtime;
  Agent::Options options;
  options.scheduler = server_->target();
  options.registration.set_name("node-a");
  options.credentials = [&] { return (*id)->ChannelCredentials(); };
  options.server_name = "server.jobsetd";
  Agent agent(options, &runtime, &clock_);
  agent.Start();
  EXPECT_TRUE(agent.AwaitWelcomed(true, absl::Seconds(20)));
  agent.Shutdown();
  FakeState& s = server_->state();
  absl::MutexLock lock(&s.mu);
  EXPECT_EQ(s.connect_cn, "system:node:node-a");
  EXPECT_EQ(s.hello_name, "node-a");
}

TEST_F(IdentityTest, CaHashMismatchSendsNoJoin) {
  // An impostor: its own CA, its own server certificate.
  absl::StatusOr<auth::KeyAndCert> other = auth::CreateCa("impostor", Now());
  ASSERT_THAT(other.status(), IsOk());
  FakeJobsetd impostor(*other, *other);
  absl::StatusOr<std::string> other_hash = auth::SpkiSha256(other->cert_pem);
  ASSERT_THAT(other_hash.status(), IsOk());
  Identity::Options options = Options();
  options.scheduler = impostor.target();
  EXPECT_THAT(
      Identity::Open(options, Token(), &clock_).status(),
      StatusIs(absl::StatusCode::kPermissionDenied,
               HasSubstr(absl::StrCat(
                   "CA hash mismatch: the join token pins sha256:", ca_hash_,
                   ", the server offers sha256:", *other_hash))));
  absl::MutexLock lock(&impostor.state().mu);
  EXPECT_EQ(impostor.state().cluster_info_calls, 1);
  EXPECT_EQ(impostor.state().join_calls, 0);
  EXPECT_FALSE(Exists(File("node.key")));
  EXPECT_FALSE(Exists(File("node.crt")));
}

TEST_F(IdentityTest, ServerWithAnotherCaThanItOffersIsRefused) {
  // It offers the pinned CA but its certificate is from another: the
  // verified channel refuses it and JoinNode never reaches it.
  absl::StatusOr<auth::KeyAndCert> other = auth::CreateCa("impostor", Now());
  ASSERT_THAT(other.status(), IsOk());
  FakeJobsetd impostor(*other, *other);
  {
    absl::MutexLock lock(&impostor.state().mu);
    impostor.state().offered_ca_pem = ca_.cert_pem;
  }
  Identity::Options options = Options();
  options.scheduler = impostor.target();
  options.join_timeout = absl::Milliseconds(300);
  options.min_backoff = absl::Milliseconds(50);
  EXPECT_THAT(Identity::Open(options, Token(), &clock_).status(),
              StatusIs(absl::StatusCode::kUnavailable));
  absl::MutexLock lock(&impostor.state().mu);
  EXPECT_EQ(impostor.state().join_calls, 0);
}

TEST_F(IdentityTest, ACaBundleWithTheImpostorsCaAppendedIsRefused) {
  // The pinned CA first (its hash matches), the impostor's own after it:
  // trusting the bundle would let the impostor's certificate verify.
  absl::StatusOr<auth::KeyAndCert> other = auth::CreateCa("impostor", Now());
  ASSERT_THAT(other.status(), IsOk());
  FakeJobsetd impostor(*other, *other);
  {
    absl::MutexLock lock(&impostor.state().mu);
    impostor.state().offered_ca_pem =
        absl::StrCat(ca_.cert_pem, other->cert_pem);
  }
  Identity::Options options = Options();
  options.scheduler = impostor.target();
  EXPECT_THAT(Identity::Open(options, Token(), &clock_).status(),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("pins exactly one certificate")));
  absl::MutexLock lock(&impostor.state().mu);
  EXPECT_EQ(impostor.state().join_calls, 0);
}

TEST_F(IdentityTest, WrongSecretSurfacesTheServersMessageAtOnce) {
  EXPECT_THAT(
      Identity::Open(Options(), Token("ffffffffffffffff"), &clock_).status(),
      StatusIs(absl::StatusCode::kUnauthenticated,
               HasSubstr("join token is invalid or expired")));
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().join_calls, 1);  // not retried
}

TEST_F(IdentityTest, NameTakenByAnotherNodeIsRefused) {
  {
    absl::MutexLock lock(&server_->state().mu);
    server_->state().node_secrets["node-a"] = "someone else's secret";
  }
  EXPECT_THAT(
      Identity::Open(Options(), Token(), &clock_).status(),
      StatusIs(absl::StatusCode::kPermissionDenied,
               HasSubstr("node name \"node-a\" is already registered")));
}

TEST_F(IdentityTest, MalformedTokenNamesTheToken) {
  EXPECT_THAT(
      Identity::Open(Options(), "JS1nothex::x.y", &clock_).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("join token")));
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().cluster_info_calls, 0);
}

TEST_F(IdentityTest, RestartReusesTheFilesWithoutJoining) {
  absl::StatusOr<std::unique_ptr<Identity>> first =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(first.status(), IsOk());
  const std::string cert = (*first)->cert_pem();
  first->reset();
  for (const std::string& token : {Token(), std::string()}) {
    absl::StatusOr<std::unique_ptr<Identity>> again =
        Identity::Open(Options(), token, &clock_);
    ASSERT_THAT(again.status(), IsOk());
    EXPECT_EQ((*again)->cert_pem(), cert);
  }
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().join_calls, 1);
}

TEST_F(IdentityTest, NoCertificateAndNoTokenSaysHowToJoin) {
  EXPECT_THAT(
      Identity::Open(Options(), "", &clock_).status(),
      StatusIs(absl::StatusCode::kNotFound,
               HasSubstr(absl::StrCat(
                   "no node certificate in ", pki_dir_,
                   " and no --join_token_file: join with the cluster's join "
                   "token (jobsetd writes it to <data_dir>/join-token)"))));
}

TEST_F(IdentityTest, ExpiredCertificateNeedsAToken) {
  ASSERT_THAT(Identity::Open(Options(), Token(), &clock_).status(), IsOk());
  FakeClock later(clock_.Now() + absl::Hours(24 * 31));
  EXPECT_THAT(Identity::Open(Options(), "", &later).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("node certificate expired at")));
  EXPECT_THAT(Identity::Open(Options(), "", &later).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("re-join needed (--join_token_file)")));
  // With a token it joins again, with the same node secret.
  {
    absl::MutexLock lock(&server_->state().mu);
    server_->state().issue_time = later.Now();
  }
  absl::StatusOr<std::unique_ptr<Identity>> rejoined =
      Identity::Open(Options(), Token(), &later);
  ASSERT_THAT(rejoined.status(), IsOk());
  EXPECT_GT((*rejoined)->not_after(), later.Now());
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().join_calls, 2);
}

TEST_F(IdentityTest, CertificateForAnotherNameNeedsARejoin) {
  ASSERT_THAT(Identity::Open(Options("node-a"), Token(), &clock_).status(),
              IsOk());
  EXPECT_THAT(
      Identity::Open(Options("node-b"), "", &clock_).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("is for \"system:node:node-a\", not "
                         "system:node:node-b (--node_name); re-join needed")));
  absl::StatusOr<std::unique_ptr<Identity>> b =
      Identity::Open(Options("node-b"), Token(), &clock_);
  ASSERT_THAT(b.status(), IsOk());
  absl::StatusOr<auth::CertificateInfo> info =
      auth::ParseCertificate((*b)->cert_pem());
  ASSERT_THAT(info.status(), IsOk());
  EXPECT_EQ(info->common_name, "system:node:node-b");
}

TEST_F(IdentityTest, RenewsAt70To90PercentAndTheNextChannelUsesIt) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  absl::StatusOr<auth::CertificateInfo> info =
      auth::ParseCertificate((*id)->cert_pem());
  ASSERT_THAT(info.status(), IsOk());
  const absl::Duration life = info->not_after - info->not_before;
  EXPECT_GE((*id)->renew_at(), info->not_before + life * 0.7);
  EXPECT_LE((*id)->renew_at(), info->not_before + life * 0.9);
  const std::string old_cert = (*id)->cert_pem();
  const std::string old_key = ReadFile(File("node.key"));

  clock_.SetTime(info->not_before + life * 0.69);
  EXPECT_THAT((*id)->RenewIfDue(clock_.Now()),
              jobset::testing::IsOkAndHolds(false));
  {
    absl::MutexLock lock(&server_->state().mu);
    EXPECT_EQ(server_->state().renew_calls, 0);
  }
  clock_.SetTime(info->not_before + life * 0.91);
  EXPECT_THAT((*id)->RenewIfDue(clock_.Now()),
              jobset::testing::IsOkAndHolds(true));
  EXPECT_NE((*id)->cert_pem(), old_cert);
  EXPECT_EQ(ReadFile(File("node.crt")), (*id)->cert_pem());
  EXPECT_NE(ReadFile(File("node.key")), old_key);
  EXPECT_EQ(ModeOf(File("node.key")), 0600);
  EXPECT_FALSE(Exists(File("node.key.next")));
  EXPECT_THAT(auth::CheckKeyMatchesCertificate(ReadFile(File("node.key")),
                                               (*id)->cert_pem()),
              IsOk());
  // The next renewal is due 70-90% into the new certificate's life.
  absl::StatusOr<auth::CertificateInfo> renewed =
      auth::ParseCertificate((*id)->cert_pem());
  ASSERT_THAT(renewed.status(), IsOk());
  const absl::Duration new_life = renewed->not_after - renewed->not_before;
  EXPECT_GE((*id)->renew_at(), renewed->not_before + new_life * 0.7);
  EXPECT_LE((*id)->renew_at(), renewed->not_before + new_life * 0.9);
  EXPECT_EQ((*id)->not_after(), renewed->not_after);
  {
    absl::MutexLock lock(&server_->state().mu);
    EXPECT_EQ(server_->state().renew_calls, 1);
    EXPECT_EQ(server_->state().renew_cn, "system:node:node-a");
  }

  // A channel made now presents the new certificate.
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
      (*id)->ChannelCredentials();
  ASSERT_THAT(creds.status(), IsOk());
  auto stub = api::IdentityService::NewStub(grpc::CreateCustomChannel(
      server_->target(), *creds, (*id)->ChannelArguments()));
  grpc::ClientContext context;
  api::ClusterInfo reply;
  ASSERT_TRUE(
      stub->GetClusterInfo(&context, api::ClusterInfoRequest(), &reply).ok());
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().last_peer_pem, (*id)->cert_pem());
}

TEST_F(IdentityTest, TheRenewalThreadRenewsWhenDue) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  const std::string old_cert = (*id)->cert_pem();
  (*id)->StartRenewing(absl::Milliseconds(10));
  clock_.SetTime((*id)->renew_at());
  EXPECT_TRUE((*id)->AwaitCertificateOtherThan(old_cert, absl::Seconds(20)));
  (*id)->StopRenewing();
  EXPECT_NE((*id)->cert_pem(), old_cert);
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().renew_calls, 1);
}

TEST_F(IdentityTest, TheAgentAsksForCredentialsAtEveryAttempt) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  absl::Mutex mu;
  int asked = 0;
  FakeRuntime runtime;
  Agent::Options options;
  options.scheduler = server_->target();
  options.registration.set_name("node-a");
  options.min_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(20);
  // The first two attempts find no usable files; the third does.
  options.credentials =
      [&]() -> absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> {
    absl::MutexLock lock(&mu);
    if (++asked <= 2) return absl::FailedPreconditionError("not yet");
    return (*id)->ChannelCredentials();
  };
  options.server_name = "server.jobsetd";
  Agent agent(options, &runtime, &clock_);
  agent.Start();
  EXPECT_TRUE(agent.AwaitWelcomed(true, absl::Seconds(20)));
  agent.Shutdown();
  absl::MutexLock lock(&mu);
  EXPECT_GE(asked, 3);  // 3, unless the stream dropped since
}

// Issue 39 item 8: a node whose certificate jobsetd revoked (the node was
// deleted) used to retry forever, about once a second, with that
// certificate. The agent says so once and stops connecting; jobset-agent
// then exits non-zero.
TEST_F(IdentityTest, ARevokedCertificateIsSaidOnceAndNotRetried) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  {
    absl::MutexLock lock(&server_->state().mu);
    server_->state().revoked.insert((*id)->cert_pem());
  }
  absl::Mutex mu;
  std::vector<std::string> revocations;
  FakeRuntime runtime;
  Agent::Options options;
  options.scheduler = server_->target();
  options.registration.set_name("node-a");
  options.min_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(20);
  options.credentials = [&] { return (*id)->ChannelCredentials(); };
  options.server_name = "server.jobsetd";
  options.on_revoked = [&](const std::string& message) {
    absl::MutexLock lock(&mu);
    revocations.push_back(message);
  };
  Agent agent(options, &runtime, &clock_);
  agent.Start();
  ASSERT_TRUE(agent.AwaitRevoked(absl::Seconds(20)));
  EXPECT_FALSE(agent.welcomed());
  agent.Shutdown();
  {
    absl::MutexLock lock(&server_->state().mu);
    EXPECT_EQ(server_->state().connect_calls, 1);
  }
  absl::MutexLock lock(&mu);
  EXPECT_EQ(revocations,
            std::vector<std::string>{"certificate has been revoked"});
}

TEST_F(IdentityTest, FailedRenewalBacksOffAndKeepsTheOldCertificate) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  const std::string old_cert = (*id)->cert_pem();
  {
    absl::MutexLock lock(&server_->state().mu);
    server_->state().renew_unavailable = true;
  }
  clock_.SetTime((*id)->renew_at());
  EXPECT_THAT((*id)->RenewIfDue(clock_.Now()).status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("try later")));
  EXPECT_THAT((*id)->RenewIfDue(clock_.Now()),
              jobset::testing::IsOkAndHolds(false));  // backing off
  {
    absl::MutexLock lock(&server_->state().mu);
    EXPECT_EQ(server_->state().renew_calls, 1);
    server_->state().renew_unavailable = false;
  }
  EXPECT_EQ((*id)->cert_pem(), old_cert);
  EXPECT_EQ(ReadFile(File("node.crt")), old_cert);
  clock_.Advance(Identity::Options().renew_min_backoff);
  EXPECT_THAT((*id)->RenewIfDue(clock_.Now()),
              jobset::testing::IsOkAndHolds(true));
  EXPECT_NE((*id)->cert_pem(), old_cert);
}

TEST_F(IdentityTest, ExpiredCertificateIsNotRenewed) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  clock_.SetTime((*id)->not_after());
  EXPECT_THAT((*id)->RenewIfDue(clock_.Now()).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("re-join needed")));
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().renew_calls, 0);
}

TEST_F(IdentityTest, GarbageFilesAreClearErrors) {
  ASSERT_THAT(Identity::Open(Options(), Token(), &clock_).status(), IsOk());
  const std::string cert = ReadFile(File("node.crt"));
  const std::string key = ReadFile(File("node.key"));
  struct Case {
    std::string file;
    std::string data;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"node.crt", "garbage", "node.crt is not a certificate"},
           {"ca.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n",
            "ca.crt is not a "
            "certificate"},
           {"node.key", "garbage", "node.key is not the key of"},
           {"node.key", std::string(2 << 20, 'x'),
            "node.key: not a regular "
            "file of at most"},
       }) {
    SCOPED_TRACE(c.file + ": " + c.message);
    const std::string before = ReadFile(File(c.file));
    WriteFile(File(c.file), c.data);
    // Not joined over, even with a token: someone should look.
    EXPECT_THAT(
        Identity::Open(Options(), Token(), &clock_).status(),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
    WriteFile(File(c.file), before);
  }
  WriteFile(File("node-secret"), "short");
  unlink(File("node.crt").c_str());
  EXPECT_THAT(Identity::Open(Options(), Token(), &clock_).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node-secret: not a node secret")));
  absl::MutexLock lock(&server_->state().mu);
  EXPECT_EQ(server_->state().join_calls, 1);
}

TEST_F(IdentityTest, ChannelCredentialsRefusesAMismatchedKey) {
  absl::StatusOr<std::unique_ptr<Identity>> id =
      Identity::Open(Options(), Token(), &clock_);
  ASSERT_THAT(id.status(), IsOk());
  absl::StatusOr<std::string> other = auth::GeneratePrivateKey();
  ASSERT_THAT(other.status(), IsOk());
  WriteFile(File("node.key"), *other);
  EXPECT_THAT((*id)->ChannelCredentials().status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("node.key is not the key of")));
  WriteFile(File("node.key"), "garbage");
  EXPECT_FALSE((*id)->ChannelCredentials().ok());
}

TEST_F(IdentityTest, AnInterruptedRenewalIsFinishedOnLoad) {
  ASSERT_THAT(Identity::Open(Options(), Token(), &clock_).status(), IsOk());
  const std::string key = ReadFile(File("node.key"));
  absl::StatusOr<std::string> other = auth::GeneratePrivateKey();
  ASSERT_THAT(other.status(), IsOk());
  // node.crt was replaced, node.key not yet: node.key.next is its key.
  WriteFile(File("node.key"), *other);
  WriteFile(File("node.key.next"), key);
  ASSERT_THAT(Identity::Load(Options(), &clock_).status(), IsOk());
  EXPECT_EQ(ReadFile(File("node.key")), key);
  EXPECT_FALSE(Exists(File("node.key.next")));
  // node.crt was not replaced yet: node.key.next is dropped.
  WriteFile(File("node.key.next"), *other);
  ASSERT_THAT(Identity::Load(Options(), &clock_).status(), IsOk());
  EXPECT_EQ(ReadFile(File("node.key")), key);
  EXPECT_FALSE(Exists(File("node.key.next")));
}

TEST_F(IdentityTest, UnreachableServerIsRetriedUntilTheJoinTimeout) {
  // A port nothing listens on: the fake server's, once it is gone.
  Identity::Options options = Options();
  server_.reset();
  options.join_timeout = absl::Milliseconds(300);
  options.min_backoff = absl::Milliseconds(50);
  EXPECT_THAT(Identity::Open(options, Token(), &clock_).status(),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("cannot reach jobsetd at")));
}

TEST(IsLoopbackTargetTest, Table) {
  EXPECT_TRUE(IsLoopbackTarget("127.0.0.1:7070"));
  EXPECT_TRUE(IsLoopbackTarget("127.1.2.3:7070"));
  EXPECT_TRUE(IsLoopbackTarget("localhost:7070"));
  EXPECT_TRUE(IsLoopbackTarget("[::1]:7070"));
  EXPECT_FALSE(IsLoopbackTarget("10.0.0.1:7070"));
  EXPECT_FALSE(IsLoopbackTarget("0.0.0.0:7070"));
  EXPECT_FALSE(IsLoopbackTarget("[::]:7070"));
  EXPECT_FALSE(IsLoopbackTarget("jobsetd.lab:7070"));
  EXPECT_FALSE(IsLoopbackTarget("localhost.evil.com:7070"));
  EXPECT_FALSE(IsLoopbackTarget(std::string("127.0.0.1\0x:1", 13)));
  EXPECT_FALSE(IsLoopbackTarget("[::1:7070"));
  EXPECT_FALSE(IsLoopbackTarget(""));
}

}  // namespace
}  // namespace jobset::agent
