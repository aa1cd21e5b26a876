#ifndef JOBSET_COMMON_QUOTE_H_
#define JOBSET_COMMON_QUOTE_H_

// The one way a message quotes a string it echoes (a name, a value, a user):
// as Go's %q, which is how Kubernetes quotes them in its messages, so that a
// hostile string cannot forge a line, a quote or a field of its own.
//
//   Quote("a\"b\n")           == R"("a\"b\n")"
//   QuoteList({"a", "b"})     == R"(["a" "b"])"   (Go's %q of a []string)
//
// JSON output has its own format: common/json_quote.h.

#include <string>

#include "absl/strings/string_view.h"

namespace jobset {

// Appends `s` to `out` between double quotes, escaped as Go's %q does:
// '"' and '\' with a backslash; \a \b \f \n \r \t \v by name; other ASCII
// control bytes and DEL as \xNN; a byte that is not part of valid UTF-8 as
// \xNN; the C1 controls and the invisible spaces, separators and format
// characters (U+00A0, U+00AD, U+061C, U+1680, U+180E, U+2000-U+200F,
// U+2028-U+202F, U+205F-U+206F, U+3000, U+FEFF, U+FFF9-U+FFFB) as \uNNNN.
// Other UTF-8 passes through unchanged. Every escape is one Go's %q also
// makes (Go escapes some rarer unprintable characters this does not).
// Thread-safe (pure).
void AppendQuoted(std::string* out, absl::string_view s);

// Returns `s` quoted as AppendQuoted does.
std::string Quote(absl::string_view s);

// Reads the string quoted as Quote does at the start of `*text`: sets `*out`
// to it unescaped, removes the quoted string from the front of `*text` and
// returns true. Returns false, changing neither, when `*text` does not start
// with one (for what a message echoes back: ConsumeQuoted of Quote(s) is s).
// Accepts the escapes AppendQuoted makes, and \uNNNN of any code point that
// is not a surrogate. Thread-safe (pure).
bool ConsumeQuoted(absl::string_view* text, std::string* out);

// Returns Go's %q of a list of strings: `["a" "b"]`, `[]` when empty.
// `values` is any range whose elements convert to absl::string_view.
template <typename Strings>
std::string QuoteList(const Strings& values) {
  std::string out = "[";
  bool first = true;
  for (const auto& v : values) {
    if (!first) out.push_back(' ');
    first = false;
    AppendQuoted(&out, absl::string_view(v));
  }
  out.push_back(']');
  return out;
}

}  // namespace jobset

#endif  // JOBSET_COMMON_QUOTE_H_
