#include "common/quote.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

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

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of the `n` hex digits at `s[i]`, or -1 if there are not `n`.
int64_t ReadHex(absl::string_view s, size_t i, size_t n) {
  if (s.size() < i + n) return -1;
  int64_t v = 0;
  for (size_t k = i; k < i + n; ++k) {
    const int d = HexValue(s[k]);
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

void AppendUtf8(std::string* out, uint32_t r) {
  if (r < 0x80) {
    out->push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (r >> 6)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xe0 | (r >> 12)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3f)));
  }
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

bool ConsumeQuoted(absl::string_view* text, std::string* out) {
  const absl::string_view s = *text;
  if (s.empty() || s[0] != '"') return false;
  std::string value;
  size_t i = 1;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"') {
      *out = std::move(value);
      text->remove_prefix(i + 1);
      return true;
    }
    if (c == '\n') return false;
    if (c != '\\') {
      value.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= s.size()) return false;
    const char e = s[i + 1];
    i += 2;
    switch (e) {
      case '"':
      case '\\':
        value.push_back(e);
        break;
      case 'a':
        value.push_back('\a');
        break;
      case 'b':
        value.push_back('\b');
        break;
      case 'f':
        value.push_back('\f');
        break;
      case 'n':
        value.push_back('\n');
        break;
      case 'r':
        value.push_back('\r');
        break;
      case 't':
        value.push_back('\t');
        break;
      case 'v':
        value.push_back('\v');
        break;
      case 'x': {
        const int64_t b = ReadHex(s, i, 2);
        if (b < 0) return false;
        value.push_back(static_cast<char>(b));
        i += 2;
        break;
      }
      case 'u': {
        const int64_t r = ReadHex(s, i, 4);
        if (r < 0 || (r >= 0xd800 && r <= 0xdfff)) return false;
        AppendUtf8(&value, static_cast<uint32_t>(r));
        i += 4;
        break;
      }
      default:
        return false;
    }
  }
  return false;
}

}  // namespace jobset
