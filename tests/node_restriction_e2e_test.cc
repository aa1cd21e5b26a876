// NodeRestriction with the real binaries (issue 40, item 3): a node's agent,
// restarted with a stolen identity's wishes (its taint dropped, an admin's
// pool label and restricted labels claimed, 1000 GPUs), gets none of them;
// pods that only the admin's label admits are not sent to it; the admin's
// `jobsetctl label|taint node` are what placement sees, across the node's
// reconnects and a restart of jobsetd.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/e2e_support.h"
#include "tests/jobsetd_process.h"

namespace jobset {
namespace {

using ::jobset::testing::Eventually;
using ::jobset::testing::JobsetdProcess;
using ::jobset::testing::RunCommand;
using ::jobset::testing::Runfile;

// Two pods of one CPU each that only nodes labeled jobsetd.io/pool=secure
// admit; a gang: both are placed or neither.
constexpr char kSecureJobSet[] = R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: secure
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            nodeSelector:
              jobsetd.io/pool: secure
            containers:
            - name: main
              image: busybox
              command: ["/bin/sh", "-c", "sleep 120"]
              resources:
                requests:
                  cpu: "1"
)";

class NodeRestrictionE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/node_restriction");
    std::filesystem::create_directories(dir_);
    StartJobsetd();
  }

  void TearDown() override {
    agents_.clear();
    testing::RemovePods(work_dirs_);
    jobsetd_.reset();
  }

  void StartJobsetd() {
    jobsetd_.reset();
    auto jobsetd = JobsetdProcess::Start(
        {.binary = Runfile("scheduler/jobsetd"),
         .args = {address_.empty() ? "--listen=127.0.0.1:0"
                                   : absl::StrCat("--listen=", address_),
                  absl::StrCat("--data_dir=", dir_, "/jobsetd"),
                  "--node_lost_timeout=5s", "--heartbeat_interval=200ms",
                  "--restart_grace=5s", "--shutdown_grace=1s"},
         .stderr_path = absl::StrCat(dir_, "/jobsetd.stderr")});
    ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
    jobsetd_ = *std::move(jobsetd);
    address_ = jobsetd_->address();
    jobsetctl_ =
        absl::StrCat(Runfile("cli/jobsetctl"), " --config=", dir_,
                     "/jobsetd/admin.conf --server=https://", address_);
  }

  // Starts (or restarts) the agent of `name` at 127.0.0.<n>.
  void StartAgent(const std::string& name, int n,
                  const std::vector<std::string>& extra) {
    const std::string work_dir = absl::StrCat(dir_, "/", name);
    if (std::find(work_dirs_.begin(), work_dirs_.end(), work_dir) ==
        work_dirs_.end()) {
      work_dirs_.push_back(work_dir);
    }
    std::vector<std::string> args = {
        absl::StrCat("--scheduler=", address_),
        absl::StrCat("--node_name=", name),
        absl::StrCat("--address=127.0.0.", n),
        absl::StrCat("--work_dir=", work_dir),
        absl::StrCat("--join_token_file=", dir_, "/jobsetd/join-token"),
        absl::StrCat("--shim=", Runfile("agent/runtime/jobset-pod-shim"))};
    args.insert(args.end(), extra.begin(), extra.end());
    agents_.erase(name);
    auto agent = JobsetdProcess::Start(
        {.binary = Runfile("agent/jobset-agent"),
         .args = args,
         .stderr_path = absl::StrCat(dir_, "/", name, ".stderr"),
         .ready_prefix = absl::StrCat("jobset-agent ", name, " serving")});
    ASSERT_TRUE(agent.ok()) << agent.status();
    agents_[name] = *std::move(agent);
  }

  // Runs `jobsetctl ARGS`; its exit status, its output (both streams) in
  // `*out`.
  int Ctl(const std::string& args, std::string* out) {
    out->clear();
    return RunCommand(absl::StrCat(jobsetctl_, " ", args, " 2>&1"), out);
  }

  // Node `name` as `get node -o json` prints it ("" when it fails).
  std::string NodeJson(const std::string& name) {
    std::string out;
    return Ctl(absl::StrCat("get node ", name, " -o json"), &out) == 0 ? out
                                                                       : "";
  }

  // The nodes the pods of JobSet "secure" are placed on.
  std::string PlacedOn() {
    std::string out;
    Ctl("get pods -o jsonpath='{.items[*].spec.nodeName}'", &out);
    return out;
  }

  std::string dir_;
  std::string address_;
  std::string jobsetctl_;
  std::unique_ptr<JobsetdProcess> jobsetd_;
  std::map<std::string, std::unique_ptr<JobsetdProcess>> agents_;
  std::vector<std::string> work_dirs_;
};

TEST_F(NodeRestrictionE2eTest, ANodeCannotRelabelItselfOnlyAnAdminCan) {
  const std::vector<std::string> sane = {"--capacity=cpu=1,memory=4Gi"};
  StartAgent("good", 2, sane);
  std::vector<std::string> registered = sane;
  registered.push_back("--taints=dedicated=team-b:NoSchedule");
  StartAgent("evil", 3, registered);
  std::string out;
  ASSERT_TRUE(testing::AwaitNodesReady(jobsetctl_, {"good", "evil"},
                                       absl::Seconds(20), &out))
      << out;
  ASSERT_EQ(Ctl("label node good jobsetd.io/pool=secure", &out), 0) << out;
  EXPECT_EQ(out, "node/good labeled\n");

  // The stolen identity asks for a fleet of GPUs: refused, naming the limit.
  StartAgent("evil", 3,
             {"--capacity=cpu=1,memory=4Gi,nvidia.com/gpu=1000",
              "--labels=jobsetd.io/pool=secure"});
  ASSERT_TRUE(Eventually(
      [&] {
        return absl::StrContains(jobsetd_->StderrTail(16384),
                                 "hello.node.capacity[nvidia.com/gpu]");
      },
      absl::Seconds(20)))
      << jobsetd_->StderrTail();
  EXPECT_TRUE(absl::StrContains(jobsetd_->StderrTail(16384),
                                "exceeds the limit of 256"));
  // Then without its taint, with the admin's pool label and a restricted
  // one: accepted (its own label "joined" shows), those dropped.
  StartAgent("evil", 3,
             {"--capacity=cpu=1,memory=4Gi",
              "--labels=joined=again,jobsetd.io/pool=secure,"
              "node-restriction.kubernetes.io/pool=secure"});
  ASSERT_TRUE(Eventually(
      [&] { return absl::StrContains(NodeJson("evil"), "\"joined\""); },
      absl::Seconds(20)))
      << NodeJson("evil");
  std::string evil = NodeJson("evil");
  EXPECT_FALSE(absl::StrContains(evil, "jobsetd.io/pool")) << evil;
  EXPECT_FALSE(absl::StrContains(evil, "node-restriction.kubernetes.io"))
      << evil;
  EXPECT_TRUE(absl::StrContains(evil, "\"dedicated\"")) << evil;
  EXPECT_FALSE(absl::StrContains(evil, "nvidia.com/gpu")) << evil;

  // jobsetd restarts and evil reconnects with the same wishes: the admin's
  // label and taint hold. (Before any JobSet waits: a gang left unplaced
  // across a restart is not retried, a controller matter of its own.)
  StartJobsetd();
  ASSERT_TRUE(Eventually(
      [&] {
        return absl::StrContains(
            absl::StrReplaceAll(NodeJson("evil"), {{" ", ""}}),
            "\"jobsetd.x-k8s.io/connected\":\"true\"");
      },
      absl::Seconds(20)))
      << NodeJson("evil");
  evil = NodeJson("evil");
  EXPECT_FALSE(absl::StrContains(evil, "jobsetd.io/pool")) << evil;
  EXPECT_TRUE(absl::StrContains(evil, "\"dedicated\"")) << evil;
  EXPECT_TRUE(absl::StrContains(NodeJson("good"), "jobsetd.io/pool"));

  // Pods only the admin's label admits: "good" alone has it, the gang of two
  // does not fit, and nothing goes to "evil".
  const std::string manifest = absl::StrCat(dir_, "/secure.yaml");
  std::ofstream(manifest) << kSecureJobSet;
  ASSERT_EQ(Ctl(absl::StrCat("apply -f ", manifest), &out), 0) << out;
  ASSERT_TRUE(Eventually(
      [&] {
        std::string pods;
        return Ctl("get pods -o name", &pods) == 0 &&
               absl::StrContains(pods, "secure-workers");
      },
      absl::Seconds(10)));
  // Placement tried, and said why not.
  ASSERT_TRUE(Eventually(
      [&] {
        return Ctl("describe jobset secure", &out) == 0 &&
               absl::StrContains(out, "FailedScheduling");
      },
      absl::Seconds(20)))
      << out;
  EXPECT_FALSE(absl::StrContains(PlacedOn(), "evil")) << PlacedOn();
  EXPECT_FALSE(absl::StrContains(PlacedOn(), "good")) << PlacedOn();

  // The admin admits evil: its label and the taint's removal are what
  // placement sees, and the gang runs on both.
  ASSERT_EQ(Ctl("taint node evil dedicated:NoSchedule-", &out), 0) << out;
  EXPECT_EQ(out, "node/evil untainted\n");
  ASSERT_EQ(Ctl("label node evil jobsetd.io/pool=secure", &out), 0) << out;
  ASSERT_TRUE(Eventually(
      [&] {
        const std::string placed = PlacedOn();
        return absl::StrContains(placed, "evil") &&
               absl::StrContains(placed, "good");
      },
      absl::Seconds(20)))
      << PlacedOn() << "\n"
      << (Ctl("describe jobset secure", &out), out) << "\n"
      << (Ctl("get pods -o wide", &out), out) << "\n"
      << NodeJson("evil");
  // Only who may update nodes changes them: a user without that right is
  // refused in kube-apiserver's words, and nothing changes.
  // The token alone is on stdout (what it says of itself, on stderr).
  out.clear();
  ASSERT_EQ(RunCommand(absl::StrCat(jobsetctl_, " create token mallory"), &out),
            0)
      << out;
  const std::string mallory = std::string(absl::StripAsciiWhitespace(out));
  EXPECT_NE(Ctl(absl::StrCat("--token=", mallory,
                             " taint node evil dedicated=mallory:NoSchedule"),
                &out),
            0);
  EXPECT_TRUE(absl::StrContains(out,
                                "User \"mallory\" cannot update "
                                "resource \"nodes\""))
      << "token [" << mallory << "]: " << out;
  EXPECT_FALSE(absl::StrContains(NodeJson("evil"), "dedicated")) << out;
  // kubectl's refusals, through jobsetctl.
  EXPECT_NE(Ctl("label node evil jobsetd.io/pool=other", &out), 0);
  EXPECT_TRUE(absl::StrContains(out,
                                "'jobsetd.io/pool' already has a value "
                                "(secure), and --overwrite is false"))
      << out;
  EXPECT_NE(Ctl("taint node evil dedicated:NoSchedule-", &out), 0);
  EXPECT_TRUE(
      absl::StrContains(out, "taint \"dedicated:NoSchedule\" not found"))
      << out;
}

}  // namespace
}  // namespace jobset
