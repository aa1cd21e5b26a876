#include "api/env_expansion.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace jobset::api {
namespace {

constexpr char kOperator = '$';
constexpr char kOpener = '(';
constexpr char kCloser = ')';

// Appends the character Go's string(byte) makes of `c`: the UTF-8 form of
// the code point c. kubelet copies a `$` and the byte after it this way, so
// a non-ASCII byte there comes out as two bytes; jobsetd does the same.
void AppendGoByte(unsigned char c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
    return;
  }
  out->push_back(static_cast<char>(0xC0 | (c >> 6)));
  out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
}

}  // namespace

std::string ExpandEnvReferences(absl::string_view input,
                                const EnvLookup& lookup) {
  std::string out;
  out.reserve(input.size());
  size_t checkpoint = 0;
  for (size_t cursor = 0; cursor < input.size(); ++cursor) {
    if (input[cursor] != kOperator || cursor + 1 >= input.size()) continue;
    absl::StrAppend(&out, input.substr(checkpoint, cursor - checkpoint));
    const absl::string_view rest = input.substr(cursor + 1);
    size_t advance = 1;
    if (rest[0] == kOperator) {
      out.push_back(kOperator);  // `$$`: an escaped operator.
    } else if (rest[0] == kOpener) {
      const size_t close = rest.find(kCloser, 1);
      if (close == absl::string_view::npos) {
        out.append("$(");  // An incomplete reference stays as written.
      } else {
        const absl::string_view name = rest.substr(1, close - 1);
        std::optional<std::string> value = lookup(name);
        if (value.has_value()) {
          out.append(*value);
        } else {
          absl::StrAppend(&out, "$(", name, ")");
        }
        advance = close + 1;
      }
    } else {
      out.push_back(kOperator);
      AppendGoByte(static_cast<unsigned char>(rest[0]), &out);
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  if (checkpoint < input.size())
    absl::StrAppend(&out, input.substr(checkpoint));
  return out;
}

void ExpandCommandAndArgs(Container* container) {
  std::map<std::string, std::string, std::less<>> env;
  for (const EnvVar& var : container->env()) env[var.name()] = var.value();
  const EnvLookup lookup =
      [&env](absl::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  for (std::string& word : *container->mutable_command())
    word = ExpandEnvReferences(word, lookup);
  for (std::string& word : *container->mutable_args())
    word = ExpandEnvReferences(word, lookup);
}

}  // namespace jobset::api
