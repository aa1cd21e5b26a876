#include "agent/runtime/pod_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/agent.pb.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

class HostsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        std::getenv("TEST_TMPDIR"), "/pod-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    assignment_.mutable_pod()->mutable_metadata()->set_uid("u1");
    assignment_.mutable_pod()->mutable_spec()->set_hostname("worker-1");
    AddHost(&assignment_, "10.0.0.2", "worker-1");
    ASSERT_THAT(WriteProtoAtomic(Path(kAssignmentFile), assignment_), IsOk());
  }

  static void AddHost(api::PodAssignment* a, const std::string& address,
                      const std::string& name) {
    api::HostEntry* e = a->add_hosts();
    e->set_address(address);
    e->add_names(name);
  }

  std::string Path(const char* file) const {
    return absl::StrCat(dir_, "/", file);
  }

  std::string Hosts() const {
    absl::StatusOr<std::string> text = ReadFileToString(Path(kHostsFile));
    return text.ok() ? *text : std::string(text.status().message());
  }

  // The table grown by a peer placed later: the master.
  api::PodAssignment Grown() const {
    api::PodAssignment grown = assignment_;
    AddHost(&grown, "10.0.0.1", "master");
    return grown;
  }

  std::string dir_;
  api::PodAssignment assignment_;
};

// The race a restart's early waves hit: the agent grows the table after the
// shim read the assignment but before it wrote the hosts file.
TEST_F(HostsFileTest, AGrowthBeforeTheShimWritesTheFileIsKept) {
  api::PodAssignment read_by_shim = assignment_;
  ASSERT_THAT(UpdateHostsFile(dir_, Grown().hosts()), IsOk());
  struct stat st;
  EXPECT_NE(stat(Path(kHostsFile).c_str(), &st), 0);  // Left to the shim.
  ASSERT_THAT(WriteHostsFile(dir_, &read_by_shim), IsOk());
  EXPECT_THAT(Hosts(), HasSubstr("10.0.0.1\tmaster\n"));
  EXPECT_THAT(Hosts(), HasSubstr("10.0.0.2\tworker-1\n"));
  EXPECT_EQ(read_by_shim.hosts_size(), 2);
}

TEST_F(HostsFileTest, AGrowthAfterTheShimWroteTheFileRewritesItInPlace) {
  api::PodAssignment read_by_shim = assignment_;
  ASSERT_THAT(WriteHostsFile(dir_, &read_by_shim), IsOk());
  EXPECT_THAT(Hosts(), Not(HasSubstr("master")));
  struct stat before;
  ASSERT_EQ(stat(Path(kHostsFile).c_str(), &before), 0);
  ASSERT_THAT(UpdateHostsFile(dir_, Grown().hosts()), IsOk());
  EXPECT_THAT(Hosts(), HasSubstr("10.0.0.1\tmaster\n"));
  struct stat after;
  ASSERT_EQ(stat(Path(kHostsFile).c_str(), &after), 0);
  // The same file: a bind mount of it (the pod's /etc/hosts) sees it.
  EXPECT_EQ(before.st_ino, after.st_ino);
  api::PodAssignment stored;
  ASSERT_THAT(ReadProtoFile(Path(kAssignmentFile), &stored), IsOk());
  EXPECT_EQ(stored.hosts_size(), 2);
}

// The pod's own line as kubelet writes it: with a subdomain, the FQDN first
// (the canonical name: `hostname -f`, and what c10d compares an endpoint
// such as JOBSET_COORDINATOR with), then the short hostname.
TEST(HostsFileTextTest, TheFqdnComesFirstOnThePodsOwnLine) {
  api::PodAssignment a;
  a.mutable_pod()->mutable_metadata()->set_name("train-leader-0-0-abcde");
  a.mutable_pod()->mutable_spec()->set_hostname("train-leader-0-0");
  a.mutable_pod()->mutable_status()->set_host_ip("10.0.0.2");
  EXPECT_EQ(HostsFileText(a),
            "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n"
            "10.0.0.2\ttrain-leader-0-0\n");
  a.mutable_pod()->mutable_spec()->set_subdomain("train");
  api::HostEntry* peer = a.add_hosts();
  peer->set_address("10.0.0.3");
  peer->add_names("train-workers-0-0.train");
  peer->add_names("train-workers-0-0");
  EXPECT_EQ(HostsFileText(a),
            "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n"
            "10.0.0.2\ttrain-leader-0-0.train\ttrain-leader-0-0\n"
            "10.0.0.3\ttrain-workers-0-0.train train-workers-0-0\n");
  // A subdomain that makes no valid name is left out, never a new line.
  a.mutable_pod()->mutable_spec()->set_subdomain("bad\nline");
  EXPECT_THAT(HostsFileText(a),
              HasSubstr("10.0.0.2\ttrain-leader-0-0\n10.0.0.3"));
}

TEST(WriteFileAtomicTest, EitherDurabilityReplacesTheFileWhole) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/atomic-durability");
  for (Durability d : {Durability::kHostCrash, Durability::kProcessCrash}) {
    ASSERT_THAT(WriteFileAtomic(path, "first", 0600, d), IsOk());
    ASSERT_THAT(WriteFileAtomic(path, "second", 0640, d), IsOk());
    EXPECT_THAT(ReadFileToString(path), IsOkAndHolds("second"));
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640);
    EXPECT_NE(access(absl::StrCat(path, ".tmp").c_str(), F_OK), 0);
    unlink(path.c_str());
  }
}

TEST(RewriteFileInPlaceTest, GrowsAndShrinksTheSameFile) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/rewritten");
  ASSERT_THAT(WriteFileAtomic(path, "a\nb\n"), IsOk());
  struct stat before;
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  ASSERT_THAT(RewriteFileInPlace(path, "a\nb\nc\n"), IsOk());
  EXPECT_EQ(*ReadFileToString(path), "a\nb\nc\n");
  ASSERT_THAT(RewriteFileInPlace(path, "x\n"), IsOk());
  EXPECT_EQ(*ReadFileToString(path), "x\n");
  struct stat after;
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_THAT(RewriteFileInPlace(path + "-missing", "x"), Not(IsOk()));
}

TEST_F(HostsFileTest, APodWithoutAnAssignmentIsNotFound) {
  EXPECT_THAT(UpdateHostsFile(absl::StrCat(dir_, "/gone"), Grown().hosts()),
              StatusIs(absl::StatusCode::kNotFound));
  std::filesystem::remove(Path(kAssignmentFile));
  EXPECT_THAT(UpdateHostsFile(dir_, Grown().hosts()),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace jobset::agent
