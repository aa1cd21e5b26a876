#include "tests/acknowledged.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"

namespace jobset::testing {

using api::JobSet;
using google::protobuf::util::MessageDifferencer;

std::string Key(const JobSet& jobset) {
  return absl::StrCat(jobset.metadata().namespace_(), "/",
                      jobset.metadata().name());
}

int64_t Revision(absl::string_view resource_version) {
  int64_t revision = -1;
  if (!absl::SimpleAtoi(resource_version, &revision)) return -1;
  return revision;
}

std::vector<std::string> AcknowledgedMismatches(
    const std::map<std::string, JobSet>& acked,
    const std::map<std::string, JobSet>& listed) {
  std::vector<std::string> problems;
  for (const auto& [key, ack] : acked) {
    auto it = listed.find(key);
    if (it == listed.end()) {
      problems.push_back(absl::StrCat(key, " was acknowledged (revision ",
                                      ack.metadata().resource_version(),
                                      ") and is gone"));
      continue;
    }
    const JobSet& item = it->second;
    if (!MessageDifferencer::Equals(item.spec(), ack.spec())) {
      problems.push_back(absl::StrCat(
          key, " has spec {", item.spec().ShortDebugString(),
          "}, acknowledged {", ack.spec().ShortDebugString(), "}"));
    }
    if (item.metadata().uid() != ack.metadata().uid()) {
      problems.push_back(absl::StrCat(key, " has uid ", item.metadata().uid(),
                                      ", acknowledged ", ack.metadata().uid()));
    }
    if (Revision(item.metadata().resource_version()) <
        Revision(ack.metadata().resource_version())) {
      problems.push_back(absl::StrCat(
          key, " has resourceVersion ", item.metadata().resource_version(),
          ", acknowledged ", ack.metadata().resource_version()));
    }
  }
  return problems;
}

}  // namespace jobset::testing
