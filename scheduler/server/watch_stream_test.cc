// WatchStream (watch_stream.h) through a real Server: watches on the
// callback API, their ends (client, server, credential, history), a reader
// that stops reading, and many streams opened and closed.
#include "scheduler/server/watch_stream.h"

#include <dirent.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"
#include "scheduler/auth/insecure_auth_for_test.h"
#include "scheduler/server/server.h"
#include "scheduler/server/stream_limiter.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::testing::HasSubstr;
using Reader = grpc::ClientReader<api::WatchEvent>;

// Entries of /proc/self/`what` ("fd": open files, "task": threads).
int Count(const char* what) {
  int n = 0;
  DIR* dir = opendir(absl::StrCat("/proc/self/", what).c_str());
  if (dir == nullptr) return -1;
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n;
}

// The process's resident memory in KiB (VmRSS), or -1.
int64_t RssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::string digits;
    for (char c : line) {
      if (c >= '0' && c <= '9') digits += c;
    }
    int64_t kib = -1;
    return absl::SimpleAtoi(digits, &kib) ? kib : -1;
  }
  return -1;
}

std::chrono::system_clock::time_point In(absl::Duration d) {
  return absl::ToChronoTime(absl::Now() + d);
}

class WatchStreamTest : public ::testing::Test {
 protected:
  // The store keeps `history` events.
  void Start(size_t history = 10'000) {
    store_ = std::make_unique<store::MemoryStore>(history);
    Server::Options options;
    options.listen = "127.0.0.1:0";
    options.auth = auth_.get();
    options.streams = &streams_;
    auto server = Server::Start(options, store_.get());
    ASSERT_THAT(server.status(), IsOk());
    server_ = *std::move(server);
    stub_ = api::JobSetService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(2));
  }

  // Stores JobSet `name` with an annotation of `bytes` bytes.
  void Create(const std::string& name, size_t bytes = 0) {
    api::CreateJobSetRequest create;
    *create.mutable_jobset() = JobSetBuilder(name).Replicated("w", 1).Build();
    if (bytes > 0) {
      (*create.mutable_jobset()
            ->mutable_metadata()
            ->mutable_annotations())["blob"] = std::string(bytes, 'x');
    }
    grpc::ClientContext context;
    context.set_deadline(In(absl::Seconds(10)));
    api::CreateJobSetResponse created;
    ASSERT_TRUE(stub_->CreateJobSet(&context, create, &created).ok());
  }

  // The name of the next event's JobSet, or "(ended)".
  static std::string Next(Reader* reader) {
    api::WatchEvent event;
    if (!reader->Read(&event)) return "(ended)";
    return event.object().metadata().name();
  }

  // Waits (up to 30 s) until the development administrator holds `n`
  // streams: a stream gives its slot back as it is done.
  bool OpenStreamsReach(int n) {
    const absl::Time end = absl::Now() + absl::Seconds(30);
    while (streams_.Open(kInsecureAdmin) != n) {
      if (absl::Now() > end) return false;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return true;
  }

  InsecureAuthForTest auth_;
  StreamLimiter streams_{4'000};
  std::unique_ptr<store::MemoryStore> store_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<api::JobSetService::Stub> stub_;
};

// JobSet `i`'s name: in list order as in creation order.
std::string Name(int i) { return absl::StrFormat("js-%03d", i); }

// One open watch, as a test's client holds it.
struct Watch {
  grpc::ClientContext context;
  std::unique_ptr<Reader> reader;
};

std::unique_ptr<Watch> OpenWatch(api::JobSetService::Stub* stub,
                                 api::WatchJobSetsRequest request = {}) {
  auto watch = std::make_unique<Watch>();
  watch->context.set_deadline(In(absl::Seconds(120)));
  watch->reader = stub->WatchJobSets(&watch->context, request);
  return watch;
}

TEST_F(WatchStreamTest, TheClientCancelsMidStream) {
  Start();
  for (int i = 0; i < 50; ++i) Create(Name(i), 20 << 10);
  std::unique_ptr<Watch> watch = OpenWatch(stub_.get());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Next(watch->reader.get()), Name(i));
  EXPECT_EQ(streams_.Open(kInsecureAdmin), 1);
  watch->context.TryCancel();
  EXPECT_EQ(watch->reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(OpenStreamsReach(0));
  // The server goes on serving watches.
  std::unique_ptr<Watch> again = OpenWatch(stub_.get());
  EXPECT_EQ(Next(again->reader.get()), Name(0));
  again->context.TryCancel();
  again->reader->Finish().IgnoreError();
}

TEST_F(WatchStreamTest, TheServerShuttingDownMidStreamEndsItWithOk) {
  Start();
  for (int i = 0; i < 50; ++i) Create(Name(i), 20 << 10);
  std::unique_ptr<Watch> watch = OpenWatch(stub_.get());
  EXPECT_EQ(Next(watch->reader.get()), Name(0));
  std::thread stopping(
      [this] { server_->Shutdown(absl::Now() + absl::Seconds(10)); });
  int read = 1;
  while (Next(watch->reader.get()) != "(ended)") ++read;
  EXPECT_LE(read, 50);
  EXPECT_TRUE(watch->reader->Finish().ok());
  stopping.join();
  EXPECT_EQ(streams_.Open(kInsecureAdmin), 0);
}

// A reader that stops reading holds at most a batch on the server, falls
// out of the store's history and is ended; another reader receives every
// event meanwhile.
TEST_F(WatchStreamTest, AReaderThatStopsIsEndedOthersKeepReceiving) {
  Start(/*history=*/100);
  Create("first");
  // The stalled client's connection announces a small window and never
  // grows it, so the server's writes to it stall soon.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 << 10);
  auto stalled_stub = api::JobSetService::NewStub(grpc::CreateCustomChannel(
      server_->address(), grpc::InsecureChannelCredentials(), args));
  std::unique_ptr<Watch> stalled = OpenWatch(stalled_stub.get());
  ASSERT_EQ(Next(stalled->reader.get()), "first");
  std::unique_ptr<Watch> live = OpenWatch(stub_.get());
  ASSERT_EQ(Next(live->reader.get()), "first");
  constexpr int kJobSets = 300;
  for (int i = 0; i < kJobSets; ++i) {
    const std::string name = Name(i);
    Create(name, 64 << 10);
    ASSERT_EQ(Next(live->reader.get()), name);
  }
  // The stalled watch ends (a poll to see its write stall and its place
  // gone from the history, kStalledWrite to cancel it); the live one stays.
  EXPECT_TRUE(OpenStreamsReach(1));
  Create("last");
  EXPECT_EQ(Next(live->reader.get()), "last");
  int read = 0;
  while (Next(stalled->reader.get()) != "(ended)") ++read;
  EXPECT_LT(read, kJobSets);
  EXPECT_FALSE(stalled->reader->Finish().ok());
  live->context.TryCancel();
  live->reader->Finish().IgnoreError();
}

TEST_F(WatchStreamTest, AWatchFromATrimmedRevisionIsOutOfRangeThenListWorks) {
  Start(/*history=*/10);
  for (int i = 0; i < 30; ++i) Create(Name(i));
  api::WatchJobSetsRequest old;
  old.set_resource_version("1");
  std::unique_ptr<Watch> trimmed = OpenWatch(stub_.get(), old);
  EXPECT_EQ(Next(trimmed->reader.get()), "(ended)");
  const grpc::Status status = trimmed->reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_THAT(status.error_message(), HasSubstr("is compacted"));
  EXPECT_TRUE(OpenStreamsReach(0));
  // Listed again (no resourceVersion): the current state, then changes.
  std::unique_ptr<Watch> watch = OpenWatch(stub_.get());
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(Next(watch->reader.get()), Name(i));
  }
  Create("new");
  EXPECT_EQ(Next(watch->reader.get()), "new");
  watch->context.TryCancel();
  watch->reader->Finish().IgnoreError();
}

// 1,000 watches opened and closed, five rounds: no thread per stream, and
// nothing (threads, files, memory) grows from round to round once warm.
TEST_F(WatchStreamTest, ManyWatchesOpenAndCloseWithoutLeaking) {
  Start();
  Create("a");
  constexpr int kWatches = 1'000;
  constexpr int kRounds = 5;
  int threads_first = 0, fds_first = 0;
  int64_t rss_first = 0;
  for (int round = 0; round < kRounds; ++round) {
    const int threads_before = Count("task");
    std::vector<std::unique_ptr<Watch>> watches;
    for (int i = 0; i < kWatches; ++i) {
      watches.push_back(OpenWatch(stub_.get()));
      // The current state: "a" and each earlier round's.
      ASSERT_EQ(Next(watches.back()->reader.get()), "a") << i;
      for (int r = 0; r < round; ++r) {
        ASSERT_EQ(Next(watches.back()->reader.get()), absl::StrCat("b-", r));
      }
    }
    ASSERT_EQ(streams_.Open(kInsecureAdmin), kWatches);
    // Open and idle: no thread each (the client's and the server's
    // threads together grow by a handful at most).
    const int threads_open = Count("task");
    EXPECT_LT(threads_open - threads_before, 20) << "round " << round;
    Create(absl::StrCat("b-", round));
    for (auto& watch : watches) {
      ASSERT_EQ(Next(watch->reader.get()), absl::StrCat("b-", round));
    }
    for (auto& watch : watches) watch->context.TryCancel();
    for (auto& watch : watches) watch->reader->Finish().IgnoreError();
    watches.clear();
    ASSERT_TRUE(OpenStreamsReach(0));
    const int threads = Count("task"), fds = Count("fd");
    const int64_t rss = RssKib();
    std::printf(
        "round %d: %d watches open: %d threads; closed: %d threads, "
        "%d fds, %lld KiB RSS\n",
        round, kWatches, threads_open, threads, fds,
        static_cast<long long>(rss));
    // The first round warms up (gRPC's and the allocator's pools): later
    // rounds are held to the second's figures.
    if (round <= 1) {
      threads_first = threads;
      fds_first = fds;
      rss_first = rss;
      continue;
    }
    EXPECT_LE(threads, threads_first + 4) << "round " << round;
    EXPECT_LE(fds, fds_first + 4) << "round " << round;
    EXPECT_LE(rss, rss_first + (32 << 10)) << "round " << round;
  }
}

}  // namespace
}  // namespace jobset::scheduler
