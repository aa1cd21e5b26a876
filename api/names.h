#ifndef JOBSET_API_NAMES_H_
#define JOBSET_API_NAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

// Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation) and the
// names JobSet derives for its children (sigs.k8s.io/jobset placement).
//
// Each Is* function returns the problems with `value` in Kubernetes' own
// wording, one string per problem, or an empty vector when `value` is valid:
//   IsDns1035Label("9lives") == {"a DNS-1035 label must consist of lower case
//       alphanumeric characters or '-', start with an alphabetic character,
//       and end with an alphanumeric character (e.g. 'my-name',  or
//       'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"}
// The strings are details: callers put them after a field path and value,
// e.g. FieldErrors::Invalid(path, value, detail).

namespace jobset::api {

// The longest DNS-1035 label, DNS-1123 label, qualified-name name part and
// label value.
inline constexpr int kMaxLabelLength = 63;
// The longest DNS-1123 subdomain.
inline constexpr int kMaxSubdomainLength = 253;

// Checks a DNS-1035 label (RFC 1035): at most 63 characters of [a-z0-9-],
// starting with a letter and ending with a letter or digit. Kubernetes
// requires it of Service names; JobSet of child Job and pod names.
std::vector<std::string> IsDns1035Label(absl::string_view value);

// Checks a DNS-1123 label (RFC 1123): at most 63 characters of [a-z0-9-],
// starting and ending with a letter or digit.
std::vector<std::string> IsDns1123Label(absl::string_view value);

// Checks a DNS-1123 subdomain: at most 253 characters, dot-separated DNS-1123
// labels. Kubernetes requires it of most object names.
std::vector<std::string> IsDns1123Subdomain(absl::string_view value);

// Whether `value` is exactly an IPv4 or IPv6 address literal (as inet_pton
// reads one; a NUL inside is not), as Kubernetes' IsValidIP. Nothing else may
// stand for a node's or a pod's address (it goes into /etc/hosts).
bool IsIpLiteral(absl::string_view value);

// Whether `host` (a host without its port; IPv6 may be in brackets) is
// "localhost" or a loopback address literal (127.0.0.0/8, ::1). A name that
// only starts like one ("127.example.com") is not: it could resolve anywhere.
// Decides where plaintext (--insecure, http://) is allowed.
bool IsLoopbackHost(absl::string_view host);

// Checks a qualified name, the syntax of label and annotation keys: an
// optional DNS-1123 subdomain prefix and '/', then a name of at most 63
// characters of [A-Za-z0-9-_.] starting and ending with a letter or digit
// ("app", "example.com/MyName").
std::vector<std::string> IsQualifiedName(absl::string_view value);

// Checks a label value: empty, or at most 63 characters of [A-Za-z0-9-_.]
// starting and ending with a letter or digit.
std::vector<std::string> IsValidLabelValue(absl::string_view value);

// Checks a domain-prefixed path such as "acme.io/foo": a DNS-1123 subdomain,
// '/', then a non-empty path of RFC 3986 path characters.
std::vector<std::string> IsDomainPrefixedPath(absl::string_view value);

// Kubernetes' IsEnvVarName without RelaxedEnvironmentVariableValidation:
// [-._a-zA-Z][-._a-zA-Z0-9]* (envFrom prefixes, and the keys envFrom turns
// into variables), and the message it refuses others with.
bool IsStrictEnvVarName(absl::string_view name);
inline constexpr char kStrictEnvVarNameMessage[] =
    "a valid environment variable name must consist of alphabetic "
    "characters, digits, '_', '-', or '.', and must not start with a digit "
    "(e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used "
    "for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";

// Returns the name of a JobSet's child Job: "<jobset>-<rjob>-<jobIndex>",
// e.g. JobName("train", "workers", 3) == "train-workers-3".
std::string JobName(absl::string_view jobset, absl::string_view rjob,
                    int64_t job_index);

// Returns the stable hostname of a pod of an Indexed child Job:
// "<jobset>-<rjob>-<jobIndex>-<podIndex>", e.g. "train-workers-3-0".
std::string PodHostname(absl::string_view jobset, absl::string_view rjob,
                        int64_t job_index, int64_t pod_index);

// Returns the stable network endpoint of a pod, the value of the coordinator
// label and annotation: "<jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain>",
// e.g. "train-workers-0-0.train".
std::string CoordinatorEndpoint(absl::string_view jobset,
                                absl::string_view rjob, int64_t job_index,
                                int64_t pod_index, absl::string_view subdomain);

}  // namespace jobset::api

#endif  // JOBSET_API_NAMES_H_
