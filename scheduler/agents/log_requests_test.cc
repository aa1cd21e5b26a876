#include "scheduler/agents/log_requests.h"

#include <thread>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

api::LogChunk Chunk(int64_t id, const std::string& data) {
  api::LogChunk chunk;
  chunk.set_request_id(id);
  chunk.set_data(data);
  return chunk;
}

TEST(LogRequestsTest, HandsEachAnswerToItsReader) {
  LogRequests requests;
  const int64_t first = requests.Start("n1");
  const int64_t second = requests.Start("n2");
  EXPECT_NE(first, second);
  // Answered before anyone waits: kept for the reader.
  ASSERT_THAT(requests.Answer("n2", Chunk(second, "two")), IsOk());
  ASSERT_THAT(requests.Answer("n1", Chunk(first, "one")), IsOk());
  absl::StatusOr<api::LogChunk> got = requests.Wait(first, absl::Seconds(5));
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->data(), "one");
  got = requests.Wait(second, absl::Seconds(5));
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->data(), "two");
  // Too late (nobody waits): ignored.
  EXPECT_THAT(requests.Answer("n1", Chunk(first, "again")), IsOk());
}

TEST(LogRequestsTest, OnlyTheNodeAskedMayAnswer) {
  LogRequests requests;
  const int64_t id = requests.Start("n1");
  EXPECT_THAT(
      requests.Answer("n2", Chunk(id, "forged")),
      StatusIs(
          absl::StatusCode::kPermissionDenied,
          HasSubstr("node \"n2\" may only answer log requests sent to it")));
  EXPECT_THAT(requests.Wait(id, absl::ZeroDuration()).status(),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("the agent of node n1 did not answer")));
}

TEST(LogRequestsTest, AWaitingReaderWakesForItsAnswer) {
  LogRequests requests;
  const int64_t id = requests.Start("n1");
  std::thread agent([&] {
    ASSERT_THAT(requests.Answer("n1", Chunk(id, "hello\n")), IsOk());
  });
  absl::StatusOr<api::LogChunk> got = requests.Wait(id, absl::Seconds(30));
  agent.join();
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->data(), "hello\n");
}

}  // namespace
}  // namespace jobset::scheduler
