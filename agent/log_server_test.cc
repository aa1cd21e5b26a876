// Log serving: the agent's handling of untrusted LogRequests (ReadLogChunk
// over the shim runtime's files and CRI logs) and its log retention sweeps.
#include "agent/log_server.h"

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/fake_runtime.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/runtime.h"
#include "agent/runtime/shim_runtime.h"
#include "agent/sweep_recorder.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/agent.pb.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ReadLogChunkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    root_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/logs", ++counter);
    ASSERT_EQ(mkdir(root_.c_str(), 0700), 0);
    ShimRuntime::Options options;
    options.work_dir = root_ + "/work";
    options.shim_path = "/bin/true";  // Never spawned: no pod is started.
    absl::StatusOr<std::unique_ptr<ShimRuntime>> r =
        ShimRuntime::Create(options);
    ASSERT_THAT(r.status(), IsOk());
    runtime_ = std::move(*r);
  }

  api::LogChunk Read(const std::string& uid, const std::string& container,
                     int64_t offset = 0, int32_t max_bytes = 1 << 16) {
    api::LogRequest request;
    request.set_request_id(7);
    request.set_pod_uid(uid);
    request.set_container(container);
    request.set_offset(offset);
    request.set_max_bytes(max_bytes);
    return ReadLogChunk(*runtime_, request);
  }

  std::string root_;
  std::unique_ptr<ShimRuntime> runtime_;
};

TEST_F(ReadLogChunkTest, EscapingUidsAndNamesReadNothing) {
  // <root>/secret/main.log is <work>/logs/../../secret/main.log.
  ASSERT_EQ(mkdir((root_ + "/secret").c_str(), 0700), 0);
  ASSERT_THAT(WriteFileAtomic(root_ + "/secret/main.log", "TOPSECRET"), IsOk());
  struct Case {
    std::string uid, container;
  };
  for (const Case& c : std::vector<Case>{{"../../secret", "main"},
                                         {"../../..", "main"},
                                         {"..", "main"},
                                         {"x", "../../../secret/main"},
                                         {"nope", "main"}}) {
    api::LogChunk chunk = Read(c.uid, c.container);
    EXPECT_EQ(chunk.request_id(), 7);
    EXPECT_THAT(chunk.data(), IsEmpty()) << c.uid << " " << c.container;
    EXPECT_THAT(chunk.error(), HasSubstr("not found"))
        << c.uid << " " << c.container;
  }
}

TEST_F(ReadLogChunkTest, SizesAreBounded) {
  // A released pod's log (its log directory is kept; its pod dir is gone).
  const std::string dir = root_ + "/work/logs/done";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const int64_t size = 3 * int64_t{kMaxLogChunkBytes};
  ASSERT_THAT(WriteFileAtomic(dir + "/main.log", std::string(size, 'x')),
              IsOk());
  api::LogChunk chunk =
      Read("done", "main", 0, std::numeric_limits<int32_t>::max());
  EXPECT_THAT(chunk.error(), IsEmpty());
  EXPECT_EQ(chunk.data().size(), kMaxLogChunkBytes);
  EXPECT_EQ(chunk.next_offset(), kMaxLogChunkBytes);
  // The most negative offset is a tail of at most kMaxLogTailBytes, here
  // the whole file, and no overflow.
  chunk = Read("done", "main", std::numeric_limits<int64_t>::min(), 10);
  EXPECT_THAT(chunk.error(), IsEmpty());
  EXPECT_EQ(chunk.data(), "xxxxxxxxxx");
  EXPECT_EQ(chunk.next_offset(), 10);
  chunk = Read("done", "main", -4, 10);
  EXPECT_EQ(chunk.next_offset(), size);
  EXPECT_EQ(chunk.data().size(), 4u);
}

TEST(ReadCriLogChunkTest, WholeLinesDecodedOffsetsInTheFile) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/cri-main.log");
  const std::string line1 = "2026-12-01T19:12:03.98Z stdout F one\n";
  const std::string line2 = "2026-12-01T19:12:04.1Z stderr P tw\n";
  const std::string line3 = "2026-12-01T19:12:04.2Z stderr F o\n";
  const std::string partial = "2026-12-01T19:12:05Z stdout F thr";
  ASSERT_THAT(WriteFileAtomic(path, line1 + line2 + line3 + partial), IsOk());
  FakeRuntime runtime;
  runtime.set_log_path(path);
  runtime.set_cri_log_format(true);
  api::LogRequest request;
  request.set_pod_uid("u1");
  request.set_container("main");
  request.set_max_bytes(1 << 16);
  api::LogChunk chunk = ReadLogChunk(runtime, request);
  EXPECT_THAT(chunk.error(), IsEmpty());
  EXPECT_EQ(chunk.data(), "one\ntwo\n");
  // The unfinished line is read again next time.
  EXPECT_EQ(chunk.next_offset(),
            static_cast<int64_t>((line1 + line2 + line3).size()));
  // A tail starts at the first whole line.
  request.set_offset(-static_cast<int64_t>(line3.size() + partial.size() + 3));
  chunk = ReadLogChunk(runtime, request);
  EXPECT_EQ(chunk.data(), "o\n");
}

TEST(LogSweeperTest, SweepsAtOnceThenOncePerInterval) {
  const absl::Time start = absl::FromUnixSeconds(1'700'000'000);
  LogRetention retention;
  retention.retention = absl::Hours(2);
  retention.max_bytes = 12345;
  LogSweeper sweeper(retention, absl::Minutes(1));
  SweepRecorder runtime;
  EXPECT_TRUE(sweeper.MaybeSweep(runtime, start));
  EXPECT_EQ(runtime.retention().retention, absl::Hours(2));
  EXPECT_EQ(runtime.retention().max_bytes, 12345);
  // The clock has not moved, or not by a whole interval: no second sweep.
  EXPECT_FALSE(sweeper.MaybeSweep(runtime, start));
  EXPECT_FALSE(sweeper.MaybeSweep(runtime, start + absl::Seconds(59)));
  EXPECT_EQ(runtime.sweeps(), std::vector<absl::Time>{start});
  EXPECT_TRUE(sweeper.MaybeSweep(runtime, start + absl::Minutes(1)));
  EXPECT_EQ(runtime.sweeps(),
            (std::vector<absl::Time>{start, start + absl::Minutes(1)}));
}

}  // namespace
}  // namespace jobset::agent
