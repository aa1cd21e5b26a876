#include "agent/runtime/cri/registry_auth.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/image_reference.h"

namespace jobset::agent::cri {
namespace {

// The keyring's Docker Hub key ("https://index.docker.io/v1/" reads as it).
constexpr absl::string_view kDefaultRegistryKey = "index.docker.io";
constexpr absl::string_view kDockerHubDomain = "docker.io";
// Where containerd (and Docker) pull docker.io images from.
constexpr absl::string_view kDockerHubServer = "https://registry-1.docker.io";

int Unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX escapes as Go's net/url does for a path (host: only escapes of
// bytes >= 0x80, and %25).
absl::StatusOr<std::string> Unescape(absl::string_view s, bool host) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size() || Unhex(s[i + 1]) < 0 || Unhex(s[i + 2]) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid URL escape \"", s.substr(i, 3), "\""));
    }
    if (host && Unhex(s[i + 1]) < 8 && s.substr(i, 3) != "%25") {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid URL escape \"", s.substr(i, 3), "\""));
    }
    out.push_back(static_cast<char>(Unhex(s[i + 1]) * 16 + Unhex(s[i + 2])));
    i += 2;
  }
  return out;
}

// Whether `c` may stand unescaped in a URL's host (net/url's shouldEscape).
bool HostChar(char c) {
  if (static_cast<unsigned char>(c) >= 0x80 || absl::ascii_isalnum(c)) {
    return true;
  }
  return absl::string_view("-_.~!$&'()*+,;=:[]<>\"").find(c) !=
         absl::string_view::npos;
}

// Whether `c` may stand in a URL's userinfo (net/url's validUserinfo).
bool UserinfoChar(char c) {
  if (static_cast<unsigned char>(c) >= 0x80 || absl::ascii_isalnum(c)) {
    return true;
  }
  return absl::string_view("-._:~!$&'()*+,;=%@").find(c) !=
         absl::string_view::npos;
}

// "" or ':' and digits only.
bool ValidOptionalPort(absl::string_view port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  return std::all_of(port.begin() + 1, port.end(),
                     [](char c) { return absl::ascii_isdigit(c); });
}

struct Url {
  std::string host;  // As net/url's URL.Host: "[::1]:5000", "reg.io:443".
  std::string path;  // Decoded.
};

// Parses "http://..." or "https://..." as Go's url.Parse would, keeping what
// the keyring uses.
absl::StatusOr<Url> ParseUrl(absl::string_view raw) {
  for (char c : raw) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError("invalid control character in URL");
    }
  }
  std::pair<absl::string_view, absl::string_view> frag =
      absl::StrSplit(raw, absl::MaxSplits('#', 1));
  if (absl::StatusOr<std::string> f = Unescape(frag.second, false); !f.ok()) {
    return f.status();
  }
  absl::string_view rest = frag.first;
  rest = rest.substr(0, rest.find('?'));
  const size_t scheme_end = rest.find("://");
  if (scheme_end == absl::string_view::npos) {
    return absl::InvalidArgumentError("missing scheme");
  }
  rest.remove_prefix(scheme_end + 3);
  absl::string_view authority = rest;
  absl::string_view path;
  if (const size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash);
  }
  absl::string_view host = authority;
  if (const size_t at = authority.rfind('@'); at != absl::string_view::npos) {
    const absl::string_view userinfo = authority.substr(0, at);
    if (!std::all_of(userinfo.begin(), userinfo.end(), UserinfoChar)) {
      return absl::InvalidArgumentError("invalid userinfo");
    }
    if (absl::StatusOr<std::string> u = Unescape(userinfo, false); !u.ok()) {
      return u.status();
    }
    host = authority.substr(at + 1);
  }
  if (absl::StartsWith(host, "[")) {
    const size_t close = host.rfind(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("missing ']' in host");
    }
    if (!ValidOptionalPort(host.substr(close + 1))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid port \"", host.substr(close + 1), "\" after host"));
    }
  } else if (const size_t colon = host.rfind(':');
             colon != absl::string_view::npos &&
             !ValidOptionalPort(host.substr(colon))) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid port \"", host.substr(colon), "\" after host"));
  }
  for (char c : host) {
    if (c != '%' && !HostChar(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid character \"", std::string(1, c), "\" in host name"));
    }
  }
  absl::StatusOr<std::string> decoded_host = Unescape(host, true);
  if (!decoded_host.ok()) return decoded_host.status();
  absl::StatusOr<std::string> decoded_path = Unescape(path, false);
  if (!decoded_path.ok()) return decoded_path.status();
  return Url{*std::move(decoded_host), *std::move(decoded_path)};
}

// Go's net.SplitHostPort, falling back (as the keyring does) to the whole
// host and no port where it fails.
std::pair<std::string, std::string> SplitHostPort(absl::string_view hostport) {
  const std::pair<std::string, std::string> whole = {std::string(hostport), ""};
  const size_t colon = hostport.rfind(':');
  if (colon == absl::string_view::npos) return whole;  // missing port
  absl::string_view host;
  size_t no_open_from = 0, no_close_from = 0;
  if (hostport[0] == '[') {
    const size_t close = hostport.find(']');
    // "[::1]" (missing port), "[::1]x:5" and "[::1]:5:6".
    if (close == absl::string_view::npos || close + 1 != colon) return whole;
    host = hostport.substr(1, close - 1);
    no_open_from = 1;
    no_close_from = close + 1;
  } else {
    host = hostport.substr(0, colon);
    if (absl::StrContains(host, ':')) return whole;  // too many colons
  }
  if (absl::StrContains(hostport.substr(no_open_from), '[') ||
      absl::StrContains(hostport.substr(no_close_from), ']')) {
    return whole;
  }
  return {std::string(host), std::string(hostport.substr(colon + 1))};
}

// One element of a glob pattern. A key's host has been through URL parsing,
// so it holds no '?' (a query), '^' or '\\' (not host characters): of Go's
// filepath.Match syntax only '*' and classes ("[0-9]", "[ab-d]") remain.
struct GlobToken {
  enum Kind { kLiteral, kStar, kClass } kind = kLiteral;
  char literal = 0;
  std::vector<std::pair<char, char>> ranges;
};

// A class element (Go's getEsc): not '-' or ']', and something (at least the
// closing ']') follows.
std::optional<char> ClassChar(absl::string_view pattern, size_t* i) {
  if (*i >= pattern.size() || pattern[*i] == '-' || pattern[*i] == ']') {
    return std::nullopt;
  }
  const char c = pattern[(*i)++];
  if (*i >= pattern.size()) return std::nullopt;
  return c;
}

// Parses a pattern; nullopt when it is malformed (filepath.ErrBadPattern).
std::optional<std::vector<GlobToken>> ParseGlob(absl::string_view pattern) {
  std::vector<GlobToken> tokens;
  size_t i = 0;
  while (i < pattern.size()) {
    GlobToken t;
    const char c = pattern[i++];
    if (c == '*') {
      t.kind = GlobToken::kStar;
    } else if (c == '[') {
      t.kind = GlobToken::kClass;
      while (true) {
        if (i < pattern.size() && pattern[i] == ']' && !t.ranges.empty()) {
          ++i;
          break;
        }
        std::optional<char> lo = ClassChar(pattern, &i);
        if (!lo.has_value()) return std::nullopt;
        char hi = *lo;
        if (pattern[i] == '-') {
          ++i;
          std::optional<char> h = ClassChar(pattern, &i);
          if (!h.has_value()) return std::nullopt;
          hi = *h;
        }
        t.ranges.emplace_back(*lo, hi);
      }
    } else {
      t.literal = c;
    }
    tokens.push_back(std::move(t));
  }
  return tokens;
}

bool TokenMatches(const GlobToken& t, char c) {
  if (t.kind == GlobToken::kLiteral) return t.literal == c;
  if (t.kind == GlobToken::kClass) {
    return std::any_of(t.ranges.begin(), t.ranges.end(), [c](const auto& r) {
      return r.first <= c && c <= r.second;
    });
  }
  return false;
}

// Whether `name` matches `pattern` whole (Go's filepath.Match on one host
// label, which holds no '/'); a malformed pattern matches nothing.
bool GlobMatch(absl::string_view pattern, absl::string_view name) {
  std::optional<std::vector<GlobToken>> tokens = ParseGlob(pattern);
  if (!tokens.has_value()) return false;
  // Iterative matching with one backtrack point: the last '*' seen.
  size_t t = 0, n = 0;
  std::optional<std::pair<size_t, size_t>> star;
  while (n < name.size()) {
    if (t < tokens->size() && (*tokens)[t].kind == GlobToken::kStar) {
      star = {++t, n};
    } else if (t < tokens->size() && TokenMatches((*tokens)[t], name[n])) {
      ++t;
      ++n;
    } else if (star.has_value()) {
      t = star->first;
      n = ++star->second;
    } else {
      return false;
    }
  }
  while (t < tokens->size() && (*tokens)[t].kind == GlobToken::kStar) ++t;
  return t == tokens->size();
}

}  // namespace

absl::StatusOr<RegistryKey> ParseRegistryKey(absl::string_view key) {
  std::string value(key);
  if (!absl::StartsWith(value, "https://") &&
      !absl::StartsWith(value, "http://")) {
    value = absl::StrCat("https://", value);
  }
  absl::StatusOr<Url> url = ParseUrl(value);
  if (!url.ok()) return url.status();
  // Docker treats /v1/ and /v2/ as the bare registry.
  absl::string_view path = url->path;
  if (absl::StartsWith(path, "/v1/") || absl::StartsWith(path, "/v2/")) {
    path.remove_prefix(3);
  }
  RegistryKey out;
  out.index = url->host;
  if (!path.empty() && path != "/") absl::StrAppend(&out.index, path);
  // The keyring matches with its index entry read again as a URL.
  absl::StatusOr<Url> entry = ParseUrl(absl::StrCat("https://", out.index));
  if (!entry.ok()) return entry.status();
  std::tie(out.host, out.port) = SplitHostPort(entry->host);
  out.path = entry->path;
  return out;
}

bool RegistryKeyMatches(const RegistryKey& key, absl::string_view domain,
                        absl::string_view path) {
  const auto [host, port] = SplitHostPort(domain);
  if (key.port != port) return false;
  const std::vector<absl::string_view> key_labels =
      absl::StrSplit(key.host, '.');
  const std::vector<absl::string_view> labels = absl::StrSplit(host, '.');
  if (key_labels.size() != labels.size()) return false;
  if (!absl::StartsWith(absl::StrCat("/", path), key.path)) return false;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!GlobMatch(key_labels[i], labels[i])) return false;
  }
  return true;
}

std::vector<RegistryAuth> MatchingCredentials(
    absl::string_view image,
    const google::protobuf::RepeatedPtrField<api::RegistryCredential>&
        credentials) {
  absl::StatusOr<api::ImageReference> ref = api::ParseImageReference(image);
  if (!ref.ok()) return {};
  struct Entry {
    RegistryKey key;
    const api::RegistryCredential* credential;
  };
  std::vector<Entry> entries;
  for (const api::RegistryCredential& c : credentials) {
    absl::StatusOr<RegistryKey> key = ParseRegistryKey(c.server());
    if (key.ok()) entries.push_back({*std::move(key), &c});
  }
  // Reverse lexical order of the index entries, so a longer (more specific)
  // key comes before its prefix; one entry's credentials in jobsetd's order.
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const Entry& a, const Entry& b) { return a.key.index > b.key.index; });
  std::vector<const Entry*> matched;
  for (const Entry& e : entries) {
    if (RegistryKeyMatches(e.key, ref->domain, ref->path)) {
      matched.push_back(&e);
    }
  }
  // Docker Hub's key, only when nothing else matched (isDefaultRegistryMatch;
  // ParseImageReference has made index.docker.io docker.io).
  if (matched.empty() && ref->domain == kDockerHubDomain) {
    for (const Entry& e : entries) {
      if (e.key.index == kDefaultRegistryKey) matched.push_back(&e);
    }
  }
  const std::string server = ref->domain == kDockerHubDomain
                                 ? std::string(kDockerHubServer)
                                 : absl::StrCat("https://", ref->domain);
  std::vector<RegistryAuth> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const Entry* e : matched) {
    const api::RegistryCredential& c = *e->credential;
    if (!seen.insert({c.username(), c.password()}).second) continue;
    out.push_back({c.username(), c.password(), server, c.server()});
  }
  return out;
}

}  // namespace jobset::agent::cri
