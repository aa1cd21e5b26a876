#include "agent/runtime/cri/cri_log.h"

#include <string>

#include "absl/strings/string_view.h"

namespace jobset::agent::cri {

std::string DecodeCriLog(absl::string_view raw, size_t* consumed) {
  std::string out;
  const size_t end = raw.rfind('\n');
  *consumed = end == absl::string_view::npos ? 0 : end + 1;
  absl::string_view rest = raw.substr(0, *consumed);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    absl::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    // time, stream, tags: three fields before the text.
    size_t pos = 0;
    bool parsed = true;
    for (int field = 0; field < 3; ++field) {
      const size_t space = line.find(' ', pos);
      if (space == absl::string_view::npos) {
        parsed = false;
        break;
      }
      if (field == 2) {
        absl::string_view tags = line.substr(pos, space - pos);
        if (tags.empty() || (tags[0] != 'P' && tags[0] != 'F')) parsed = false;
      }
      pos = space + 1;
    }
    if (!parsed) {
      out.append(line.data(), line.size());
      out.push_back('\n');
      continue;
    }
    const char tag = line[line.rfind(' ', pos - 2) + 1];
    const absl::string_view text = line.substr(pos);
    out.append(text.data(), text.size());
    if (tag == 'F') out.push_back('\n');
  }
  return out;
}

}  // namespace jobset::agent::cri
