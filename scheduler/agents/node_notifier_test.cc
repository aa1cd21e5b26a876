#include "scheduler/agents/node_notifier.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Records what it hears. Thread-safe.
class RecordingSink : public NodeSink {
 public:
  void SetNode(NodeInfo node) override {
    Add("set " + node.name + (node.ready ? " ready" : ""));
  }
  void ReportPod(PodReport report) override {
    Add("report " + report.node + "/" + report.pod_uid);
  }
  void LoseNode(std::string name, std::string reason, std::string) override {
    Add("lose " + name + " " + reason);
  }
  std::vector<std::string> heard() {
    absl::MutexLock lock(&mu_);
    return heard_;
  }

 private:
  void Add(std::string what) {
    absl::MutexLock lock(&mu_);
    heard_.push_back(std::move(what));
  }
  absl::Mutex mu_;
  std::vector<std::string> heard_ ABSL_GUARDED_BY(mu_);
};

NodeInfo Node(const std::string& name, bool ready = false) {
  NodeInfo node;
  node.name = name;
  node.ready = ready;
  return node;
}

PodReport Report(const std::string& node, const std::string& pod_uid) {
  PodReport report;
  report.node = node;
  report.pod_uid = pod_uid;
  return report;
}

TEST(NodeNotifierTest, DeliversInTheOrderQueuedAndOnlyOnDeliver) {
  RecordingSink sink;
  NodeNotifier notifier;
  notifier.SetNode(Node("dropped"));  // Not attached yet: dropped.
  notifier.Attach(&sink);
  notifier.SetNode(Node("n1"));
  notifier.ReportPod(Report("n1", "a"));
  notifier.LoseNode("n1", "NodeLost", "silent");
  notifier.SetNode(Node("n1", true));
  EXPECT_THAT(sink.heard(), IsEmpty());
  notifier.Deliver();
  EXPECT_THAT(sink.heard(), ElementsAre("set n1", "report n1/a",
                                        "lose n1 NodeLost", "set n1 ready"));
  notifier.Deliver();  // Nothing more.
  EXPECT_THAT(sink.heard(), SizeIs(4));
}

TEST(NodeNotifierTest, DetachedItDropsWhatIsQueuedAndQueuesNothing) {
  RecordingSink sink;
  NodeNotifier notifier;
  notifier.Attach(&sink);
  notifier.LoseNode("n1", "NodeLost", "silent");
  notifier.Detach();
  notifier.SetNode(Node("n2"));
  notifier.Deliver();
  EXPECT_THAT(sink.heard(), IsEmpty());
}

// Threads queueing and delivering at once: each thread's calls arrive in
// its order, and nothing is lost.
TEST(NodeNotifierTest, ConcurrentDeliveriesKeepEachQueuersOrder) {
  RecordingSink sink;
  NodeNotifier notifier;
  notifier.Attach(&sink);
  constexpr int kThreads = 4, kCalls = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        notifier.ReportPod(Report(absl::StrCat("n", t), absl::StrCat(i)));
        notifier.Deliver();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<int> next(kThreads, 0);
  const std::vector<std::string> heard = sink.heard();
  ASSERT_THAT(heard, SizeIs(kThreads * kCalls));
  for (const std::string& h : heard) {
    const int t = h[8] - '0';  // "report n<t>/<i>"
    EXPECT_EQ(h, absl::StrCat("report n", t, "/", next[t]++));
  }
}

}  // namespace
}  // namespace jobset::scheduler
