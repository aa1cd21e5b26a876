#include "api/host_table.h"

#include <zlib.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A table of `pods` entries as jobsetd builds one: hostname and
// hostname.subdomain at the node's address.
HostTable TableOf(int pods) {
  HostTable table;
  for (int i = 0; i < pods; ++i) {
    HostEntry* e = table.add_hosts();
    e->set_address(
        absl::StrCat("10.", i / 65536, ".", i / 256 % 256, ".", i % 256));
    const std::string name = absl::StrCat("train-workers-0-", i);
    e->add_names(name);
    e->add_names(absl::StrCat(name, ".train"));
  }
  return table;
}

// zlib-compresses `data` (any bytes, not only a table).
std::string Deflate(const std::string& data) {
  uLongf size = compressBound(data.size());
  std::string out(size, '\0');
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                      reinterpret_cast<const Bytef*>(data.data()), data.size(),
                      Z_BEST_COMPRESSION),
            Z_OK);
  out.resize(size);
  return out;
}

TEST(HostTableTest, RoundTrips) {
  for (int pods : {0, 1, 2, 64, 4096}) {
    SCOPED_TRACE(pods);
    const HostTable table = TableOf(pods);
    const std::string bytes = EncodeHostTable(table);
    absl::StatusOr<HostTable> back = DecodeHostTable("hosts_table", bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->SerializeAsString(), table.SerializeAsString());
  }
}

TEST(HostTableTest, CompressesAGangsTable) {
  const HostTable table = TableOf(4096);
  const std::string bytes = EncodeHostTable(table);
  // What a 4,096-pod order carried in `hosts`, against what it carries now.
  EXPECT_LT(bytes.size() * 4, table.ByteSizeLong());
}

TEST(HostTableTest, DecodesAtTheLimitExactly) {
  const HostTable table = TableOf(100);
  const int64_t size = static_cast<int64_t>(table.ByteSizeLong());
  EXPECT_TRUE(DecodeHostTable("t", EncodeHostTable(table), size).ok());
  EXPECT_THAT(DecodeHostTable("t", EncodeHostTable(table), size - 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("more than ", size - 1))));
}

TEST(HostTableTest, RefusesABomb) {
  // 72 MiB of zeros deflate to about 300 KiB: built in pieces so the test
  // itself stays small.
  z_stream zs{};
  ASSERT_EQ(deflateInit(&zs, Z_BEST_SPEED), Z_OK);
  const std::string zeros(1 << 20, '\0');
  std::string bomb(2 << 20, '\0');
  zs.next_out = reinterpret_cast<Bytef*>(bomb.data());
  zs.avail_out = bomb.size();
  constexpr int kMiB = 72;
  for (int i = 0; i < kMiB; ++i) {
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    zs.avail_in = zeros.size();
    ASSERT_EQ(deflate(&zs, i == kMiB - 1 ? Z_FINISH : Z_NO_FLUSH),
              i == kMiB - 1 ? Z_STREAM_END : Z_OK);
  }
  bomb.resize(zs.total_out);
  deflateEnd(&zs);
  EXPECT_THAT(
      DecodeHostTable("hosts_table", bomb).status(),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("hosts_table: "),
                HasSubstr(absl::StrCat(bomb.size(), " compressed bytes")),
                HasSubstr(absl::StrCat("more than ", kMaxHostTableBytes)))));
}

TEST(HostTableTest, RefusesWhatIsNotATable) {
  const std::string good = EncodeHostTable(TableOf(64));
  struct Case {
    std::string name;
    std::string bytes;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"empty", "", "cut short"},
      {"garbage", "not zlib at all", "not zlib data"},
      {"truncated", good.substr(0, good.size() / 2), "cut short"},
      {"last byte cut", good.substr(0, good.size() - 1), "cut short"},
      {"trailing bytes", good + "xyz", "3 bytes follow its end"},
      {"zlib, not a table", Deflate(std::string(100, '\xff')),
       "100 inflated bytes do not parse"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(
        DecodeHostTable("run.hosts_table", c.bytes).status(),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 AllOf(HasSubstr(absl::StrCat(
                           "run.hosts_table: ", c.bytes.size(), " bytes")),
                       HasSubstr(c.error))));
  }
}

}  // namespace
}  // namespace jobset::api
