#include "api/image_reference.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace jobset::api {
namespace {

constexpr absl::string_view kDefaultDomain = "docker.io";
constexpr absl::string_view kOfficialRepoPrefix = "library/";
constexpr size_t kMaxTagLength = 128;

absl::Status Invalid(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid reference format: ", why));
}

bool IsLowerAlnum(char c) {
  return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z');
}

// path-component: [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
bool IsPathComponent(absl::string_view s) {
  size_t i = 0;
  while (true) {
    const size_t start = i;
    while (i < s.size() && IsLowerAlnum(s[i])) ++i;
    if (i == start) return false;
    if (i == s.size()) return true;
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < s.size() && s[i] == '_') ++i;
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') ++i;
    } else {
      return false;
    }
  }
}

// domain-component: [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
bool IsDomainComponent(absl::string_view s) {
  if (s.empty() || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '-') return false;
  }
  return true;
}

// host [":" port]; IPv6 literals in brackets.
bool IsDomain(absl::string_view s) {
  absl::string_view host = s;
  if (const size_t colon = s.rfind(':');
      colon != absl::string_view::npos && !absl::EndsWith(s, "]")) {
    const absl::string_view port = s.substr(colon + 1);
    if (port.empty()) return false;
    for (char c : port) {
      if (!absl::ascii_isdigit(c)) return false;
    }
    host = s.substr(0, colon);
  }
  if (absl::StartsWith(host, "[")) {
    if (!absl::EndsWith(host, "]") || host.size() < 3) return false;
    for (char c : host.substr(1, host.size() - 2)) {
      if (!absl::ascii_isxdigit(c) && c != ':') return false;
    }
    return true;
  }
  for (absl::string_view part : absl::StrSplit(host, '.')) {
    if (!IsDomainComponent(part)) return false;
  }
  return true;
}

// tag: [\w][\w.-]{0,127}
bool IsTag(absl::string_view s) {
  if (s.empty() || s.size() > kMaxTagLength || s.front() == '.' ||
      s.front() == '-') {
    return false;
  }
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

// digest: algorithm ":" hex, algorithm [a-z0-9]+([+._-][a-z0-9]+)*, hex of
// at least 32 digits (64 for sha256, 128 for sha512).
absl::Status CheckDigest(absl::string_view s) {
  const size_t colon = s.find(':');
  if (colon == absl::string_view::npos || colon == 0) {
    return Invalid(absl::StrCat("digest \"", s, "\" is not algorithm:hex"));
  }
  const absl::string_view algorithm = s.substr(0, colon);
  const absl::string_view hex = s.substr(colon + 1);
  bool after_separator = true;
  for (char c : algorithm) {
    if (IsLowerAlnum(c)) {
      after_separator = false;
    } else if ((c == '+' || c == '.' || c == '_' || c == '-') &&
               !after_separator) {
      after_separator = true;
    } else {
      return Invalid(
          absl::StrCat("digest algorithm \"", algorithm, "\" is not valid"));
    }
  }
  if (after_separator) {
    return Invalid(
        absl::StrCat("digest algorithm \"", algorithm, "\" is not valid"));
  }
  for (char c : hex) {
    if (!absl::ascii_isxdigit(c)) {
      return Invalid(absl::StrCat("digest \"", s, "\" is not hexadecimal"));
    }
  }
  size_t want = 0;
  if (algorithm == "sha256") want = 64;
  if (algorithm == "sha512") want = 128;
  if ((want != 0 && hex.size() != want) || hex.size() < 32) {
    return Invalid(
        absl::StrCat("digest \"", s, "\" has ", hex.size(), " hex digits"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ImageReference::Name() const {
  return absl::StrCat(domain, "/", path);
}

std::string ImageReference::Normalized() const {
  std::string out = Name();
  if (!tag.empty()) {
    absl::StrAppend(&out, ":", tag);
  } else if (digest.empty()) {
    absl::StrAppend(&out, ":latest");
  }
  if (!digest.empty()) absl::StrAppend(&out, "@", digest);
  return out;
}

absl::StatusOr<ImageReference> ParseImageReference(absl::string_view image) {
  if (image.empty()) return Invalid("the reference is empty");
  for (char c : image) {
    if (absl::ascii_isspace(c) || absl::ascii_iscntrl(c)) {
      return Invalid("the reference holds whitespace or a control character");
    }
  }
  ImageReference ref;
  absl::string_view rest = image;
  if (const size_t at = rest.find('@'); at != absl::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    if (absl::Status s = CheckDigest(ref.digest); !s.ok()) return s;
    rest = rest.substr(0, at);
  }
  // A tag follows the last ':' after the last '/' (a ':' before it is a
  // port).
  const size_t slash = rest.rfind('/');
  if (const size_t colon = rest.rfind(':');
      colon != absl::string_view::npos &&
      (slash == absl::string_view::npos || colon > slash)) {
    ref.tag = std::string(rest.substr(colon + 1));
    if (!IsTag(ref.tag)) {
      return Invalid(absl::StrCat(
          "tag \"", ref.tag, "\" is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"));
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return Invalid("the repository name is empty");
  std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  // The first component is a domain when it looks like one: a '.' or a
  // ':', or "localhost" (Docker's splitDockerDomain); an uppercase letter
  // there also makes it a domain, since a path may not have one.
  absl::string_view first = parts.front();
  const bool has_domain =
      parts.size() > 1 &&
      (absl::StrContains(first, '.') || absl::StrContains(first, ':') ||
       first == "localhost" || absl::AsciiStrToLower(first) != first);
  if (has_domain) {
    if (!IsDomain(first)) {
      return Invalid(absl::StrCat("domain \"", first, "\" is not valid"));
    }
    ref.domain = std::string(first);
    parts.erase(parts.begin());
  } else {
    ref.domain = std::string(kDefaultDomain);
  }
  std::vector<std::string> path;
  for (absl::string_view part : parts) {
    if (absl::AsciiStrToLower(part) != part) {
      return Invalid("repository name must be lowercase");
    }
    if (!IsPathComponent(part)) {
      return Invalid(absl::StrCat("path component \"", part,
                                  "\" is not [a-z0-9] separated by . _ __ -"));
    }
    path.emplace_back(part);
  }
  ref.path = absl::StrJoin(path, "/");
  if (ref.domain == "index.docker.io") ref.domain = std::string(kDefaultDomain);
  if (ref.domain == kDefaultDomain && path.size() == 1) {
    ref.path = absl::StrCat(kOfficialRepoPrefix, ref.path);
  }
  if (rest.size() > kMaxImageNameLength) {
    return Invalid(absl::StrCat("repository name is longer than ",
                                kMaxImageNameLength, " characters"));
  }
  return ref;
}

absl::string_view DefaultPullPolicy(absl::string_view image) {
  absl::StatusOr<ImageReference> ref = ParseImageReference(image);
  if (!ref.ok()) return kPullIfNotPresent;
  const bool latest =
      ref->tag == "latest" || (ref->tag.empty() && ref->digest.empty());
  return latest ? kPullAlways : kPullIfNotPresent;
}

}  // namespace jobset::api
