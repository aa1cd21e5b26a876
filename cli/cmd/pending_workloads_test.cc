// get pendingworkloads against the fakes: the request each form sends,
// every -o, the flag errors, jobsetd's errors, and the verbs that refuse it.
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

api::PendingWorkload Entry(const std::string& ns, const std::string& name,
                           const std::string& local_queue,
                           const std::string& cluster_queue, int position,
                           int local_position) {
  api::PendingWorkload w;
  w.mutable_metadata()->set_namespace_(ns);
  w.mutable_metadata()->set_name(name);
  w.mutable_metadata()->mutable_creation_timestamp()->set_seconds(kCreated -
                                                                  120);
  w.set_local_queue_name(local_queue);
  w.set_cluster_queue(cluster_queue);
  w.set_position_in_cluster_queue(position);
  w.set_position_in_local_queue(local_position);
  w.set_reason("Pending");
  w.set_message("insufficient unused quota for cpu");
  return w;
}

class PendingWorkloadsTest : public CommandsTest {
 protected:
  void SetUp() override {
    CommandsTest::SetUp();
    api::PendingWorkloadsSummary pending;
    *pending.add_items() =
        Entry("team-b", "jobset-sweep-1a2b3", "team-b-queue", "team-b", 0, 0);
    *pending.add_items() =
        Entry("team-c", "jobset-eval-9z8y7", "team-c-queue", "team-b", 1, 0);
    pending.mutable_items(1)->set_priority(100);
    *pending.add_items() =
        Entry("team-b", "jobset-tune-4d5e6", "team-b-queue", "team-b", 2, 1);
    kueue_.SetPending(pending);
  }

  int Get(std::vector<std::string> args) {
    args.insert(args.begin(), "get");
    return RunAt(clock_, args);
  }

  api::ListPendingWorkloadsRequest LastRequest() {
    std::vector<api::ListPendingWorkloadsRequest> sent =
        kueue_.pending_requests();
    return sent.empty() ? api::ListPendingWorkloadsRequest() : sent.back();
  }

  FakeClock clock_;
};

TEST_F(PendingWorkloadsTest, ClusterQueueTable) {
  ASSERT_EQ(Get({"pendingworkloads", "--clusterqueue", "team-b"}), kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "NAMESPACE   NAME                 LOCALQUEUE     PRIORITY   "
            "POSITION IN CLUSTERQUEUE   POSITION IN LOCALQUEUE   AGE\n"
            "team-b      jobset-sweep-1a2b3   team-b-queue   0          0"
            "                          0                        2m\n"
            "team-c      jobset-eval-9z8y7    team-c-queue   100        1"
            "                          0                        2m\n"
            "team-b      jobset-tune-4d5e6    team-b-queue   0          2"
            "                          1                        2m\n");
  const api::ListPendingWorkloadsRequest sent = LastRequest();
  EXPECT_EQ(sent.cluster_queue(), "team-b");
  EXPECT_EQ(sent.local_queue(), "");
  EXPECT_EQ(sent.limit(), 0);
  EXPECT_EQ(sent.offset(), 0);
}

TEST_F(PendingWorkloadsTest, LocalQueueWithLimitOffsetAndWide) {
  ASSERT_EQ(Get({"pw", "-n", "team-b", "--localqueue", "team-b-queue"}),
            kExitUsage);  // No alias "pw": it is no kind of the table.
  Clear();
  ASSERT_EQ(Get({"pendingworkload", "-n", "team-b", "--localqueue",
                 "team-b-queue", "--limit", "1", "--offset=1", "-o", "wide"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "NAMESPACE   NAME                LOCALQUEUE     PRIORITY   "
            "POSITION IN CLUSTERQUEUE   POSITION IN LOCALQUEUE   AGE   "
            "CLUSTERQUEUE   REASON    MESSAGE\n"
            "team-b      jobset-tune-4d5e6   team-b-queue   0          2"
            "                          1                        2m    "
            "team-b         Pending   insufficient unused quota for cpu\n");
  const api::ListPendingWorkloadsRequest sent = LastRequest();
  EXPECT_EQ(sent.cluster_queue(), "");
  EXPECT_EQ(sent.local_queue(), "team-b-queue");
  EXPECT_EQ(sent.namespace_(), "team-b");
  EXPECT_EQ(sent.limit(), 1);
  EXPECT_EQ(sent.offset(), 1);
  // Without -n: the context's namespace.
  Clear();
  ASSERT_EQ(Get({"pendingworkloads", "--localqueue", "team-b-queue"}), kExitOk);
  EXPECT_EQ(LastRequest().namespace_(), "default");
  EXPECT_EQ(err_.str(), "No resources found in default namespace.\n");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(PendingWorkloadsTest, JsonYamlNameAndJsonPath) {
  ASSERT_EQ(Get({"pendingworkloads", "--clusterqueue=team-b", "--limit=1", "-o",
                 "json"}),
            kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(),
              StartsWith("{\n"
                         "    \"apiVersion\": "
                         "\"visibility.kueue.x-k8s.io/v1beta1\",\n"
                         "    \"kind\": \"PendingWorkloadsSummary\",\n"
                         "    \"metadata\": {},\n"
                         "    \"items\": [\n"
                         "        {\n"
                         "            \"metadata\": {\n"
                         "                \"name\": \"jobset-sweep-1a2b3\",\n"
                         "                \"namespace\": \"team-b\",\n"));
  EXPECT_THAT(out_.str(),
              HasSubstr("            \"priority\": 0,\n"
                        "            \"localQueueName\": "
                        "\"team-b-queue\",\n"
                        "            \"positionInClusterQueue\": "
                        "0,\n"
                        "            \"positionInLocalQueue\": 0,\n"
                        "            \"clusterQueue\": \"team-b\",\n"
                        "            \"reason\": \"Pending\",\n"));
  Clear();
  ASSERT_EQ(Get({"pendingworkloads", "--clusterqueue=team-b", "-o", "yaml"}),
            kExitOk);
  EXPECT_THAT(out_.str(), StartsWith("apiVersion: "
                                     "visibility.kueue.x-k8s.io/v1beta1\n"
                                     "kind: PendingWorkloadsSummary\n"
                                     "metadata: {}\n"
                                     "items:\n"));
  EXPECT_THAT(out_.str(), HasSubstr("    priority: 100\n"));
  Clear();
  ASSERT_EQ(Get({"pendingworkloads", "--clusterqueue=team-b", "-o", "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/jobset-sweep-1a2b3\n"
            "workload.kueue.x-k8s.io/jobset-eval-9z8y7\n"
            "workload.kueue.x-k8s.io/jobset-tune-4d5e6\n");
  Clear();
  ASSERT_EQ(Get({"pendingworkloads", "--clusterqueue=team-b", "-o",
                 "jsonpath={.items[*].positionInLocalQueue}"}),
            kExitOk);
  EXPECT_EQ(out_.str(), "0 0 1");
  // An empty ClusterQueue, as kubectl says it for a cluster-scoped list.
  Clear();
  ASSERT_EQ(Get({"pendingworkloads", "--clusterqueue=idle"}), kExitOk);
  EXPECT_EQ(err_.str(), "No resources found\n");
  Clear();
  ASSERT_EQ(Get({"pendingworkloads", "--clusterqueue=idle", "-o", "json"}),
            kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("\"items\": []\n"));
}

TEST_F(PendingWorkloadsTest, FlagErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"pendingworkloads"},
       "get pendingworkloads needs exactly one of --clusterqueue CQ and "
       "--localqueue LQ (with -n NAMESPACE)"},
      {{"pendingworkloads", "--clusterqueue=a", "--localqueue=b"},
       "needs exactly one of --clusterqueue CQ and --localqueue LQ"},
      {{"pendingworkloads", "--clusterqueue="}, "needs exactly one of"},
      {{"pendingworkloads", "jobset-sweep-1a2b3", "--clusterqueue=a"},
       "get pendingworkloads takes no NAME"},
      {{"pendingworkloads", "--clusterqueue=a", "-w"},
       "-w/--watch does not apply to pendingworkloads"},
      {{"pendingworkloads", "--localqueue=a", "-A"},
       "-A/--all-namespaces does not apply to pendingworkloads"},
      {{"pendingworkloads", "--clusterqueue=a", "-l", "x=y"},
       "-l/--selector does not apply to pendingworkloads"},
      {{"pendingworkloads", "--clusterqueue=a", "--limit=-1"},
       "--limit must be a whole number, 0 or more; got \"-1\""},
      {{"pendingworkloads", "--clusterqueue=a", "--offset=x"},
       "--offset must be a whole number, 0 or more; got \"x\""},
      {{"pendingworkloads", "--clusterqueue=a", "-o", "table"},
       "unknown output format"},
      {{"jobsets", "--clusterqueue=a"},
       "--clusterqueue applies to pendingworkloads only"},
      {{"workloads", "--limit=5"}, "--limit applies to pendingworkloads only"},
  };
  for (const Case& c : cases) {
    Clear();
    EXPECT_EQ(Get(c.args), kExitUsage) << c.message;
    EXPECT_THAT(err_.str(), HasSubstr(c.message));
  }
  EXPECT_TRUE(kueue_.pending_requests().empty());
}

TEST_F(PendingWorkloadsTest, JobsetdsErrors) {
  kueue_.Fail("ListPendingWorkloads",
              grpc::Status(grpc::StatusCode::NOT_FOUND,
                           "clusterqueues.kueue.x-k8s.io \"nope\" not found"));
  EXPECT_EQ(Get({"pendingworkloads", "--clusterqueue=nope"}), kExitApiError);
  EXPECT_EQ(err_.str(),
            "error: clusterqueues.kueue.x-k8s.io \"nope\" not found\n");
  Clear();
  kueue_.Fail("ListPendingWorkloads",
              grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method"));
  EXPECT_EQ(Get({"pendingworkloads", "--clusterqueue=team-b"}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("does not serve "
                                    "KueueService.ListPendingWorkloads (an "
                                    "older jobsetd?)"));
}

// A read-only listing: the verbs that take a kind refuse it by name.
TEST_F(PendingWorkloadsTest, OtherVerbsRefuseIt) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"describe", "pendingworkloads", "jobset-sweep-1a2b3"},
           {"delete", "pendingworkloads", "jobset-sweep-1a2b3"},
           {"delete", "pendingworkload"}}) {
    Clear();
    EXPECT_EQ(Run(args), kExitUsage) << args[0];
    EXPECT_THAT(err_.str(),
                HasSubstr(absl::StrCat("\"", args[0],
                                       "\" does not apply to "
                                       "pendingworkloads: Kueue's visibility "
                                       "API is a read-only listing")));
  }
  Clear();
  EXPECT_EQ(Run({"wait", "pendingworkloads", "jobset-sweep-1a2b3",
                 "--for=condition=Completed"}),
            kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("\"wait\" supports jobsets only"));
  EXPECT_TRUE(kueue_.pending_requests().empty());
}

}  // namespace
}  // namespace jobset::cli
