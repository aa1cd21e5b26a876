#include "common/quote.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace jobset {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(std::string* out, unsigned char b) {
  out->append("\\x");
  out->push_back(kHex[b >> 4]);
  out->push_back(kHex[b & 0xf]);
}

bool IsContinuation(unsigned char b) { return (b & 0xc0) == 0x80; }

// The length of the valid UTF-8 sequence at the start of `s` (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF) and its code point;
// 0 if it is not one.
size_t DecodeUtf8(absl::string_view s, uint32_t* rune) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // bounds on the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
    *rune = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    *rune = b0 & 0x0f;
    if (b0 == 0xe0) lo = 0xa0;
    if (b0 == 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    *rune = b0 & 0x07;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  const auto b1 = static_cast<unsigned char>(s[1]);
  if (b1 < lo || b1 > hi) return 0;
  *rune = (*rune << 6) | (b1 & 0x3f);
  for (size_t i = 2; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (!IsContinuation(b)) return 0;
    *rune = (*rune << 6) | (b & 0x3f);
  }
  return n;
}

// Characters that print as nothing, or as a plain space, or that move or
// reorder text: a reader cannot see them, so they are escaped (Go's %q does
// too: none is printable to strconv.IsPrint).
bool IsInvisible(uint32_t r) {
  return (r >= 0x80 && r <= 0xa0) || r == 0xad || r == 0x61c || r == 0x1680 ||
         r == 0x180e || (r >= 0x2000 && r <= 0x200f) ||
         (r >= 0x2028 && r <= 0x202f) || (r >= 0x205f && r <= 0x206f) ||
         r == 0x3000 || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb);
}

}  // namespace

void AppendQuoted(std::string* out, absl::string_view s) {
  out->reserve(out->size() + s.size() + 2);
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      uint32_t rune = 0;
      const size_t n = DecodeUtf8(s.substr(i), &rune);
      if (n == 0) {
        AppendHexByte(out, u);
        ++i;
      } else if (IsInvisible(rune)) {
        out->append("\\u");
        for (int shift = 12; shift >= 0; shift -= 4) {
          out->push_back(kHex[(rune >> shift) & 0xf]);
        }
        i += n;
      } else {
        out->append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\v':
        out->append("\\v");
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          AppendHexByte(out, u);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string Quote(absl::string_view s) {
  std::string out;
  AppendQuoted(&out, s);
  return out;
}

}  // namespace jobset
