// Backups end to end: `jobsetctl admin snapshot save` while a client keeps
// creating JobSets, then a fresh jobsetd (a new data dir, the cluster's pki/
// copied in, as HA replicas are made) started with --restore_from: exactly
// the JobSets acknowledged at or before the snapshot's revision are there,
// with their uids. Only a cluster-admin may save; a restore into a data dir
// that is not empty, and a corrupted or truncated file, are refused. And on
// etcd, with the CA in the store (--cluster_secret_file): a jobsetd lost
// while pods run is replaced by one restored from a snapshot into a fresh
// prefix and a fresh data dir, nothing copied but the snapshot and the
// secret; the agents reconnect and its pods are adopted, not restarted.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/auth.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "store/etcd/etcd_test_server.h"
#include "tests/cluster_credentials.h"
#include "tests/e2e_support.h"
#include "tests/jobsetd_process.h"

namespace jobset {
namespace {

using ::jobset::api::JobSet;
using ::jobset::api::JobSetService;
using ::jobset::store::testing::EtcdTestServer;
using ::jobset::testing::ClusterCredentials;
using ::jobset::testing::CountLines;
using ::jobset::testing::Eventually;
using ::jobset::testing::JobsetdProcess;
using ::jobset::testing::ReadClusterCredentials;
using ::jobset::testing::RemovePods;
using ::jobset::testing::RunCommand;
using ::jobset::testing::Runfile;
using ::jobset::testing::SecureChannel;
using ::testing::HasSubstr;

constexpr absl::Duration kRpcDeadline = absl::Seconds(5);

// A SaveSnapshot by `stub`'s caller is refused with PERMISSION_DENIED before
// any byte of it is sent.
void ExpectSnapshotRefused(api::AccessService::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
  auto reader = stub.SaveSnapshot(&context, api::SaveSnapshotRequest());
  api::SnapshotChunk chunk;
  EXPECT_FALSE(reader->Read(&chunk));
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << status.error_message();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A new data dir holding only the cluster's pki/ from `from`.
std::string DataDirWithPki(const std::string& from, const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy(absl::StrCat(from, "/pki"), absl::StrCat(dir, "/pki"),
                        std::filesystem::copy_options::recursive);
  return dir;
}

absl::StatusOr<std::unique_ptr<JobsetdProcess>> StartJobsetd(
    const std::string& dir, const std::string& restore_from = "") {
  std::vector<std::string> args = {"--listen=127.0.0.1:0",
                                   absl::StrCat("--data_dir=", dir),
                                   "--restart_grace=1s"};
  if (!restore_from.empty()) {
    args.push_back(absl::StrCat("--restore_from=", restore_from));
  }
  return JobsetdProcess::Start({.binary = JobsetdProcess::DefaultBinary(),
                                .args = args,
                                .stderr_path = absl::StrCat(dir, ".stderr")});
}

grpc::Status Create(JobSetService::Stub& stub, const std::string& name,
                    JobSet* created) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
  api::CreateJobSetRequest request;
  *request.mutable_jobset() = api::testing::JobSetBuilder(name)
                                  .Namespace("snap")
                                  .Replicated("workers", 2)
                                  .Build();
  api::CreateJobSetResponse response;
  grpc::Status status = stub.CreateJobSet(&context, request, &response);
  if (status.ok()) *created = response.jobset();
  return status;
}

// Every JobSet jobsetd holds, by name, read page by page.
std::map<std::string, JobSet> ListAll(JobSetService::Stub& stub) {
  std::map<std::string, JobSet> all;
  std::string continue_token;
  for (int page = 0; page < 100; ++page) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
    api::ListJobSetsRequest request;
    request.set_all_namespaces(true);
    request.set_limit(200);
    request.set_continue_(continue_token);
    api::ListJobSetsResponse response;
    const grpc::Status status = stub.ListJobSets(&context, request, &response);
    if (!status.ok()) {
      ADD_FAILURE() << "List: " << status.error_message();
      return all;
    }
    for (const JobSet& item : response.items()) {
      all.emplace(item.metadata().name(), item);
    }
    if (response.continue_().empty()) break;
    continue_token = response.continue_();
  }
  return all;
}

int64_t Revision(const JobSet& jobset) {
  int64_t revision = -1;
  if (!absl::SimpleAtoi(jobset.metadata().resource_version(), &revision)) {
    return -1;
  }
  return revision;
}

TEST(SnapshotE2eTest, SaveUnderLoadThenRestoreIntoAFreshDataDir) {
  const std::string tmp = ::testing::TempDir();
  const std::string dir_a = absl::StrCat(tmp, "/snap-a");
  std::filesystem::remove_all(dir_a);
  auto a = StartJobsetd(dir_a);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<ClusterCredentials> credentials =
      ReadClusterCredentials(dir_a);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  auto stub = JobSetService::NewStub(SecureChannel(
      (*a)->address(), credentials->ca_pem, credentials->admin_token));

  // Acknowledged Creates, by name, with what they returned.
  std::mutex mu;
  std::map<std::string, JobSet> acked;
  for (int i = 0; i < 20; ++i) {
    JobSet created;
    const std::string name = absl::StrCat("before-", i);
    const grpc::Status status = Create(*stub, name, &created);
    ASSERT_TRUE(status.ok()) << status.error_message();
    acked[name] = created;
  }

  // A user who is no cluster-admin, in the snapshot.
  auto access = api::AccessService::NewStub(SecureChannel(
      (*a)->address(), credentials->ca_pem, credentials->admin_token));
  api::CreateTokenResponse bob;
  {
    grpc::ClientContext context;
    api::CreateTokenRequest request;
    request.set_name("bob");
    request.add_groups("team-b");
    ASSERT_TRUE(access->CreateToken(&context, request, &bob).ok());
  }
  // Under load: a client keeps creating while the snapshot is read.
  std::atomic<bool> stop = false;
  std::atomic<int> during = 0;
  std::thread writer([&] {
    auto own = JobSetService::NewStub(SecureChannel(
        (*a)->address(), credentials->ca_pem, credentials->admin_token));
    const absl::Time end = absl::Now() + absl::Seconds(20);
    for (int i = 0; !stop && absl::Now() < end; ++i) {
      JobSet created;
      const std::string name = absl::StrCat("during-", i);
      const grpc::Status status = Create(*own, name, &created);
      if (!status.ok()) {
        ADD_FAILURE() << name << ": " << status.error_message();
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      acked[name] = created;
      ++during;
    }
  });
  while (during < 5) absl::SleepFor(absl::Milliseconds(10));

  const std::string jobsetctl = absl::StrCat(
      Runfile("cli/jobsetctl"), " --config=", dir_a, "/admin.conf");
  const std::string file = absl::StrCat(tmp, "/snap.bin");
  std::filesystem::remove(file);
  std::string out;
  ASSERT_EQ(RunCommand(
                absl::StrCat(jobsetctl, " admin snapshot save ", file, " 2>&1"),
                &out),
            0)
      << out;
  // Creates go on after it (bounded: the writer stops by itself at 20 s).
  const int at_save = during;
  for (const absl::Time end = absl::Now() + absl::Seconds(10);
       during < at_save + 3 && absl::Now() < end;) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  stop = true;
  writer.join();
  // "snapshot of revision N (K keys, S) saved to FILE"
  int64_t snapshot_revision = -1;
  {
    const std::string prefix = "snapshot of revision ";
    ASSERT_THAT(out, HasSubstr(prefix));
    ASSERT_THAT(out, HasSubstr(absl::StrCat(" saved to ", file)));
    const size_t at = out.find(prefix) + prefix.size();
    ASSERT_TRUE(absl::SimpleAtoi(out.substr(at, out.find(' ', at) - at),
                                 &snapshot_revision))
        << out;
  }
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(absl::StrCat(file, ".tmp")));

  // Not over an existing file, unless --force.
  out.clear();
  EXPECT_NE(RunCommand(
                absl::StrCat(jobsetctl, " admin snapshot save ", file, " 2>&1"),
                &out),
            0);
  EXPECT_THAT(out, HasSubstr("--force"));

  // Only a cluster-admin: a token with no role (made before the snapshot)
  // is refused.
  {
    auto as_bob = api::AccessService::NewStub(
        SecureChannel((*a)->address(), credentials->ca_pem, bob.token()));
    ExpectSnapshotRefused(*as_bob);
    // Nor is reading everything enough: a snapshot has its own verb
    // ("save"), which no get/list/watch grant reaches (issue 40).
    api::RbacObject role;
    api::Role* r = role.mutable_role();
    r->set_api_version("rbac.authorization.k8s.io/v1");
    r->set_kind("ClusterRole");
    r->mutable_metadata()->set_name("read-everything");
    api::PolicyRule* rule = r->add_rules();
    for (const char* verb : {"get", "list", "watch"}) rule->add_verbs(verb);
    rule->add_api_groups("*");
    rule->add_resources("*");
    api::RbacObject binding;
    api::RoleBinding* rb = binding.mutable_binding();
    rb->set_api_version("rbac.authorization.k8s.io/v1");
    rb->set_kind("ClusterRoleBinding");
    rb->mutable_metadata()->set_name("bob-reads-everything");
    api::Subject* subject = rb->add_subjects();
    subject->set_kind("User");
    subject->set_api_group("rbac.authorization.k8s.io");
    subject->set_name("bob");
    rb->mutable_role_ref()->set_api_group("rbac.authorization.k8s.io");
    rb->mutable_role_ref()->set_kind("ClusterRole");
    rb->mutable_role_ref()->set_name("read-everything");
    for (const api::RbacObject* object : {&role, &binding}) {
      grpc::ClientContext context;
      api::RbacObject applied;
      const grpc::Status status =
          access->ApplyRbac(&context, *object, &applied);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
    ExpectSnapshotRefused(*as_bob);
  }
  ASSERT_TRUE((*a)->Kill(SIGTERM).ok());
  ASSERT_TRUE((*a)->Wait().ok());

  // Restore into a new data dir.
  const std::string dir_b = DataDirWithPki(dir_a, absl::StrCat(tmp, "/snap-b"));
  auto b = StartJobsetd(dir_b, file);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT((*b)->Stdout(), HasSubstr("jobsetd restored"));
  // Only pki/ was copied: with no admin.conf in the new dir, jobsetd made a
  // new administrator token (copy admin.conf too to keep the old one).
  absl::StatusOr<ClusterCredentials> credentials_b =
      ReadClusterCredentials(dir_b);
  ASSERT_TRUE(credentials_b.ok()) << credentials_b.status();
  EXPECT_EQ(credentials_b->ca_pem, credentials->ca_pem);
  auto stub_b = JobSetService::NewStub(SecureChannel(
      (*b)->address(), credentials->ca_pem, credentials_b->admin_token));
  {
    // Other tokens are the snapshot's: bob still authenticates (and is
    // still no cluster-admin).
    auto as_bob = api::AccessService::NewStub(
        SecureChannel((*b)->address(), credentials->ca_pem, bob.token()));
    ExpectSnapshotRefused(*as_bob);
  }
  const std::map<std::string, JobSet> restored = ListAll(*stub_b);
  int expected = 0;
  for (const auto& [name, jobset] : acked) {
    const bool before = Revision(jobset) <= snapshot_revision;
    auto it = restored.find(name);
    if (before) {
      ++expected;
      if (it == restored.end()) {
        ADD_FAILURE() << name << " (revision " << Revision(jobset)
                      << ") acknowledged before the snapshot's revision "
                      << snapshot_revision << " is missing";
        continue;
      }
      EXPECT_EQ(it->second.metadata().uid(), jobset.metadata().uid()) << name;
    } else {
      EXPECT_EQ(it, restored.end())
          << name << " (revision " << Revision(jobset)
          << ") came after the snapshot's revision " << snapshot_revision;
    }
  }
  EXPECT_EQ(restored.size(), static_cast<size_t>(expected));
  EXPECT_GE(expected, 25);
  EXPECT_LT(static_cast<size_t>(expected), acked.size());  // Load went on.
  // It serves writes as a restarted jobsetd would.
  JobSet after;
  EXPECT_TRUE(Create(*stub_b, "after-restore", &after).ok());
  ASSERT_TRUE((*b)->Kill(SIGTERM).ok());
  ASSERT_TRUE((*b)->Wait().ok());

  // Not into a store that is not empty.
  auto again = StartJobsetd(dir_b, file);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(ReadFile(absl::StrCat(dir_b, ".stderr")),
              HasSubstr("is not empty"));
  EXPECT_THAT(ReadFile(absl::StrCat(dir_b, ".stderr")),
              HasSubstr("fresh --data_dir"));

  // A corrupted file, and a truncated one: refused, nothing written.
  const std::string bytes = ReadFile(file);
  ASSERT_GT(bytes.size(), 1000u);
  std::string corrupted = bytes;
  corrupted[bytes.size() / 2] ^= 0x01;
  const std::string bad_file = absl::StrCat(tmp, "/snap-bad.bin");
  WriteFile(bad_file, corrupted);
  const std::string dir_c = DataDirWithPki(dir_a, absl::StrCat(tmp, "/snap-c"));
  auto c = StartJobsetd(dir_c, bad_file);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(ReadFile(absl::StrCat(dir_c, ".stderr")), HasSubstr("offset"));
  WriteFile(bad_file, bytes.substr(0, bytes.size() - 10));
  c = StartJobsetd(dir_c, bad_file);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(ReadFile(absl::StrCat(dir_c, ".stderr")), HasSubstr("truncated"));
  // Nothing was written: the same dir takes the good file.
  c = StartJobsetd(dir_c, file);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<ClusterCredentials> credentials_c =
      ReadClusterCredentials(dir_c);
  ASSERT_TRUE(credentials_c.ok()) << credentials_c.status();
  auto stub_c = JobSetService::NewStub(SecureChannel(
      (*c)->address(), credentials->ca_pem, credentials_c->admin_token));
  EXPECT_EQ(ListAll(*stub_c).size(), static_cast<size_t>(expected));
  ASSERT_TRUE((*c)->Kill(SIGTERM).ok());
  ASSERT_TRUE((*c)->Wait().ok());
}

// jobsetd on etcd with its CA in the store, flags for `prefix`.
std::vector<std::string> EtcdFlags(const EtcdTestServer& etcd,
                                   const std::string& prefix,
                                   const std::string& secret_file) {
  std::string endpoints;
  for (const std::string& e : etcd.endpoints()) {
    absl::StrAppend(&endpoints, endpoints.empty() ? "" : ",", e);
  }
  return {"--store=etcd",
          absl::StrCat("--etcd_endpoints=", endpoints),
          absl::StrCat("--etcd_cafile=", etcd.ca_file()),
          absl::StrCat("--etcd_certfile=", etcd.client_cert_file()),
          absl::StrCat("--etcd_keyfile=", etcd.client_key_file()),
          absl::StrCat("--etcd_prefix=", prefix),
          absl::StrCat("--cluster_secret_file=", secret_file),
          "--restart_grace=30s"};
}

TEST(SnapshotE2eTest, OnEtcdARestoreFromTheSnapshotAloneAdoptsRunningPods) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = absl::StrCat(::testing::TempDir(), "/etcd-restore");
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp);
  auto etcd = EtcdTestServer::Start({.dir = tmp + "/etcd", .tls = true});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  const std::string secret_file = tmp + "/cluster-secret";
  WriteFile(secret_file, "restore-test-secret-of-more-than-32-bytes\n");

  // The first jobsetd, with two agents running a JobSet's pods.
  const std::string dir_a = tmp + "/a";
  std::vector<std::string> args = EtcdFlags(**etcd, "/a/", secret_file);
  args.push_back("--listen=127.0.0.1:0");
  args.push_back(absl::StrCat("--data_dir=", dir_a));
  args.push_back(absl::StrCat("--allowed_host_paths=", testing::PodIoDir()));
  auto a = JobsetdProcess::Start({.binary = JobsetdProcess::DefaultBinary(),
                                  .args = args,
                                  .stderr_path = dir_a + ".stderr"});
  ASSERT_TRUE(a.ok()) << a.status();
  const std::string address = (*a)->address();
  std::vector<std::string> work_dirs;
  std::vector<std::unique_ptr<JobsetdProcess>> agents;
  absl::Cleanup stop_pods = [&] {
    agents.clear();
    RemovePods(work_dirs);
  };
  for (int n = 1; n <= 2; ++n) {
    const std::string node = absl::StrCat("node-", n);
    work_dirs.push_back(absl::StrCat(tmp, "/", node));
    auto agent = JobsetdProcess::Start(
        {.binary = Runfile("agent/jobset-agent"),
         .args = {absl::StrCat("--scheduler=", address),
                  absl::StrCat("--node_name=", node),
                  absl::StrCat("--address=127.0.0.", n + 1),
                  absl::StrCat("--work_dir=", work_dirs.back()),
                  absl::StrCat("--join_token_file=", dir_a, "/join-token"),
                  absl::StrCat("--shim=",
                               Runfile("agent/runtime/jobset-pod-shim")),
                  "--capacity=cpu=1,memory=4Gi"},
         .stderr_path = absl::StrCat(tmp, "/", node, ".stderr"),
         .ready_prefix = absl::StrCat("jobset-agent ", node, " serving")});
    ASSERT_TRUE(agent.ok()) << agent.status();
    agents.push_back(*std::move(agent));
  }
  absl::StatusOr<ClusterCredentials> credentials =
      ReadClusterCredentials(dir_a);
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  auto stub = JobSetService::NewStub(
      SecureChannel(address, credentials->ca_pem, credentials->admin_token));
  const std::string gate = testing::PodIoDir() + "/restore-gate";
  const std::string started = testing::PodIoDir() + "/restore-started";
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
    api::CreateJobSetRequest request;
    *request.mutable_jobset() =
        api::testing::JobSetBuilder("survivor")
            .Namespace("snap")
            .Replicated("workers", 2)
            .RestartPolicy("workers", "Never")
            .BackoffLimit("workers", 0)
            .Command("workers", testing::GatedPodCommand(started, gate))
            .Request("workers", "cpu", "1")
            .Build();
    testing::MountHostDir(request.mutable_jobset(), testing::PodIoDir());
    api::CreateJobSetResponse response;
    const grpc::Status status =
        stub->CreateJobSet(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  ASSERT_TRUE(
      Eventually([&] { return CountLines(started) == 2; }, absl::Seconds(30)))
      << (*a)->StderrTail();

  // The snapshot, taken while the pods run; then the machine is lost.
  const std::string file = tmp + "/snap.bin";
  std::string out;
  ASSERT_EQ(RunCommand(
                absl::StrCat(Runfile("cli/jobsetctl"), " --config=", dir_a,
                             "/admin.conf admin snapshot save ", file, " 2>&1"),
                &out),
            0)
      << out;
  ASSERT_TRUE((*a)->Kill(SIGKILL).ok());
  ASSERT_TRUE((*a)->Wait().ok());
  std::filesystem::remove_all(dir_a);

  // A fresh data dir and a fresh prefix, given the snapshot and the secret,
  // on the address the agents know.
  const std::string dir_b = tmp + "/b";
  args = EtcdFlags(**etcd, "/b/", secret_file);
  args.push_back(absl::StrCat("--listen=", address));
  args.push_back(absl::StrCat("--data_dir=", dir_b));
  args.push_back(absl::StrCat("--allowed_host_paths=", testing::PodIoDir()));
  args.push_back(absl::StrCat("--restore_from=", file));
  auto b = JobsetdProcess::Start({.binary = JobsetdProcess::DefaultBinary(),
                                  .args = args,
                                  .stderr_path = dir_b + ".stderr"});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT((*b)->Stdout(), HasSubstr("jobsetd restored"));
  absl::StatusOr<ClusterCredentials> credentials_b =
      ReadClusterCredentials(dir_b);
  ASSERT_TRUE(credentials_b.ok()) << credentials_b.status();
  // The CA came back from the snapshot, so the agents' pin still holds.
  EXPECT_EQ(credentials_b->ca_pem, credentials->ca_pem);
  auto stub_b = JobSetService::NewStub(SecureChannel(
      address, credentials_b->ca_pem, credentials_b->admin_token));
  const std::string jobsetctl = absl::StrCat(
      Runfile("cli/jobsetctl"), " --config=", dir_b, "/admin.conf -n snap");
  std::string nodes;
  ASSERT_TRUE(testing::AwaitNodesReady(jobsetctl, {"node-1", "node-2"},
                                       absl::Seconds(20), &nodes))
      << nodes << (*b)->StderrTail() << agents[0]->StderrTail();
  { std::ofstream(gate) << "go"; }
  JobSet done;
  ASSERT_TRUE(Eventually(
      [&] {
        grpc::ClientContext context;
        context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
        api::GetJobSetRequest request;
        request.set_namespace_("snap");
        request.set_name("survivor");
        return stub_b->GetJobSet(&context, request, &done).ok() &&
               done.status().terminal_state() == "Completed";
      },
      absl::Seconds(30)))
      << done.DebugString() << (*b)->StderrTail();
  EXPECT_EQ(done.status().restarts(), 0);
  EXPECT_EQ(CountLines(started), 2);  // Adopted: no pod was started again.

  // Another secret does not open the CA in the store: refused, saying so.
  const std::string wrong = tmp + "/wrong-secret";
  WriteFile(wrong, "another-secret-entirely-of-32-bytes-or-more\n");
  args = EtcdFlags(**etcd, "/b/", wrong);
  args.push_back("--listen=127.0.0.1:0");
  args.push_back(absl::StrCat("--data_dir=", tmp, "/c"));
  auto c = JobsetdProcess::Start({.binary = JobsetdProcess::DefaultBinary(),
                                  .args = args,
                                  .stderr_path = tmp + "/c.stderr"});
  EXPECT_FALSE(c.ok());
  EXPECT_THAT(ReadFile(tmp + "/c.stderr"),
              HasSubstr("same --cluster_secret_file"));
}

}  // namespace
}  // namespace jobset
