#include "api/names.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <initializer_list>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jobset::api {
namespace {

// The regular expressions Kubernetes quotes in its messages. The checks below
// match them by hand (Go's regexp anchors with ^...$), so that no regex engine
// runs on untrusted input.
constexpr absl::string_view kDns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
constexpr absl::string_view kDns1035LabelErrMsg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or "
    "'-', start with an alphabetic character, and end with an alphanumeric "
    "character";
constexpr absl::string_view kDns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr absl::string_view kDns1123LabelErrMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
    "characters or '-', and must start and end with an alphanumeric character";
constexpr absl::string_view kDns1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr absl::string_view kDns1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character";
constexpr absl::string_view kQualifiedNameFmt =
    "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr absl::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character";
constexpr absl::string_view kLabelValueFmt =
    "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr absl::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric "
    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character";
constexpr absl::string_view kHttpPathFmt = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

// Mirrors validation.MaxLenError.
std::string MaxLenError(int length) {
  return absl::StrCat("must be no more than ", length, " characters");
}

// Mirrors validation.RegexError: "<msg> (e.g. 'a',  or 'b', regex used for
// validation is '<fmt>')", including Kubernetes' doubled space.
std::string RegexError(absl::string_view msg, absl::string_view fmt,
                       std::initializer_list<absl::string_view> examples) {
  if (examples.size() == 0) {
    return absl::StrCat(msg, " (regex used for validation is '", fmt, "')");
  }
  std::string out = absl::StrCat(msg, " (e.g. ");
  bool first = true;
  for (absl::string_view example : examples) {
    if (!first) absl::StrAppend(&out, " or ");
    first = false;
    absl::StrAppend(&out, "'", example, "', ");
  }
  absl::StrAppend(&out, "regex used for validation is '", fmt, "')");
  return out;
}

bool IsLowerAlnum(char c) {
  return absl::ascii_islower(c) || absl::ascii_isdigit(c);
}

// Matches kDns1123LabelFmt.
bool MatchesDns1123Label(absl::string_view value) {
  if (value.empty() || !IsLowerAlnum(value.front()) ||
      !IsLowerAlnum(value.back())) {
    return false;
  }
  for (char c : value) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// Matches kDns1035LabelFmt.
bool MatchesDns1035Label(absl::string_view value) {
  return MatchesDns1123Label(value) && absl::ascii_islower(value.front());
}

// Matches kDns1123SubdomainFmt.
bool MatchesDns1123Subdomain(absl::string_view value) {
  for (absl::string_view label : absl::StrSplit(value, '.')) {
    if (!MatchesDns1123Label(label)) return false;
  }
  return true;
}

// Matches kQualifiedNameFmt.
bool MatchesQualifiedNamePart(absl::string_view value) {
  if (value.empty() || !absl::ascii_isalnum(value.front()) ||
      !absl::ascii_isalnum(value.back())) {
    return false;
  }
  for (char c : value) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

// Matches kHttpPathFmt.
bool MatchesHttpPath(absl::string_view value) {
  constexpr absl::string_view kPunctuation = "/-._~%!$&'()*+,;=:";
  if (value.empty()) return false;
  for (char c : value) {
    if (!absl::ascii_isalnum(c) && !absl::StrContains(kPunctuation, c)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> IsDns1035Label(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kMaxLabelLength) {
    errors.push_back(MaxLenError(kMaxLabelLength));
  }
  if (!MatchesDns1035Label(value)) {
    errors.push_back(RegexError(kDns1035LabelErrMsg, kDns1035LabelFmt,
                                {"my-name", "abc-123"}));
  }
  return errors;
}

std::vector<std::string> IsDns1123Label(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kMaxLabelLength) {
    errors.push_back(MaxLenError(kMaxLabelLength));
  }
  if (!MatchesDns1123Label(value)) {
    if (MatchesDns1123Subdomain(value)) {
      // A valid subdomain that is not a label can only contain dots.
      errors.push_back("must not contain dots");
    } else {
      errors.push_back(RegexError(kDns1123LabelErrMsg, kDns1123LabelFmt,
                                  {"my-name", "123-abc"}));
    }
  }
  return errors;
}

std::vector<std::string> IsDns1123Subdomain(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kMaxSubdomainLength) {
    errors.push_back(MaxLenError(kMaxSubdomainLength));
  }
  if (!MatchesDns1123Subdomain(value)) {
    errors.push_back(RegexError(kDns1123SubdomainErrMsg, kDns1123SubdomainFmt,
                                {"example.com"}));
  }
  return errors;
}

std::vector<std::string> IsQualifiedName(absl::string_view value) {
  std::vector<std::string> errors;
  std::vector<absl::string_view> parts = absl::StrSplit(value, '/');
  absl::string_view name;
  switch (parts.size()) {
    case 1:
      name = parts[0];
      break;
    case 2:
      name = parts[1];
      if (parts[0].empty()) {
        errors.push_back("prefix part must be non-empty");
      } else {
        for (const std::string& error : IsDns1123Subdomain(parts[0])) {
          errors.push_back(absl::StrCat("prefix part ", error));
        }
      }
      break;
    default:
      errors.push_back(
          absl::StrCat("a qualified name ",
                       RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                  {"MyName", "my.name", "123-abc"}),
                       " with an optional DNS subdomain prefix and '/' (e.g. "
                       "'example.com/MyName')"));
      return errors;
  }
  if (name.empty()) {
    errors.push_back("name part must be non-empty");
  } else if (name.size() > kMaxLabelLength) {
    errors.push_back(absl::StrCat("name part ", MaxLenError(kMaxLabelLength)));
  }
  if (!MatchesQualifiedNamePart(name)) {
    errors.push_back(absl::StrCat(
        "name part ", RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                 {"MyName", "my.name", "123-abc"})));
  }
  return errors;
}

std::vector<std::string> IsValidLabelValue(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kMaxLabelLength) {
    errors.push_back(MaxLenError(kMaxLabelLength));
  }
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    errors.push_back(RegexError(kLabelValueErrMsg, kLabelValueFmt,
                                {"MyValue", "my_value", "12345"}));
  }
  return errors;
}

std::vector<std::string> IsDomainPrefixedPath(absl::string_view value) {
  if (value.empty()) return {"must be non-empty"};
  std::vector<absl::string_view> segments =
      absl::StrSplit(value, absl::MaxSplits('/', 1));
  if (segments.size() != 2 || segments[0].empty() || segments[1].empty()) {
    return {"must be a domain-prefixed path (such as \"acme.io/foo\")"};
  }
  std::vector<std::string> errors = IsDns1123Subdomain(segments[0]);
  if (!MatchesHttpPath(segments[1])) {
    errors.push_back(RegexError("Invalid path", kHttpPathFmt, {}));
  }
  return errors;
}

std::string JobName(absl::string_view jobset, absl::string_view rjob,
                    int64_t job_index) {
  return absl::StrCat(jobset, "-", rjob, "-", job_index);
}

std::string PodHostname(absl::string_view jobset, absl::string_view rjob,
                        int64_t job_index, int64_t pod_index) {
  return absl::StrCat(JobName(jobset, rjob, job_index), "-", pod_index);
}

std::string CoordinatorEndpoint(absl::string_view jobset,
                                absl::string_view rjob, int64_t job_index,
                                int64_t pod_index,
                                absl::string_view subdomain) {
  return absl::StrCat(PodHostname(jobset, rjob, job_index, pod_index), ".",
                      subdomain);
}

bool IsIpLiteral(absl::string_view value) {
  // inet_pton reads a C string: "10.0.0.1\0\n..." would pass as its prefix.
  if (value.empty() || value.size() > 64 ||
      value.find('\0') != absl::string_view::npos) {
    return false;
  }
  const std::string text(value);
  unsigned char buf[16];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

bool IsLoopbackHost(absl::string_view host) {
  if (absl::ConsumePrefix(&host, "[") && !absl::ConsumeSuffix(&host, "]")) {
    return false;
  }
  if (absl::EqualsIgnoreCase(host, "localhost")) return true;
  if (!IsIpLiteral(host)) return false;
  const std::string text(host);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  return inet_pton(AF_INET6, text.c_str(), &v6) == 1 &&
         IN6_IS_ADDR_LOOPBACK(&v6);
}

bool IsStrictEnvVarName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace jobset::api
