#ifndef JOBSET_AGENT_RUNTIME_POD_INPUT_H_
#define JOBSET_AGENT_RUNTIME_POD_INPUT_H_

// Checks of what the scheduler sends an agent, made before any path is built
// from it or any file is written with it: the scheduler's messages are
// untrusted input (issue 19). Every refusal is kInvalidArgument naming the
// field path, the value (escaped) and the rule or limit. Pure functions;
// thread-safe.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// A pod uid names a directory: 1-200 characters of [A-Za-z0-9._-], not "."
// or ".." (so never a '/', a NUL or a path component that climbs).
inline constexpr int kMaxPodUidBytes = 200;
// DNS-1123 label (container, volume names; spec.hostname): 1-63 of
// [a-z0-9-], starting and ending alphanumeric.
inline constexpr int kMaxDnsLabelBytes = 63;
// DNS-1123 subdomain (pod names, host table names): labels joined by '.',
// at most 253 characters.
inline constexpr int kMaxDnsSubdomainBytes = 253;
// subPath: relative, no ".." component, at most this long.
inline constexpr int kMaxSubPathBytes = 4096;
// The host table of one pod: at most this many entries (the pods of a JobSet
// attempt), each with at most kMaxHostNames names.
inline constexpr int kMaxHostEntries = 100000;
inline constexpr int kMaxHostNames = 16;
// securityContext user and group ids are checked against api::kMaxUserId; at
// most NGROUPS_MAX supplementalGroups.
inline constexpr int kMaxSupplementalGroups = 65536;
// A secret or configMap volume (config_volumes): at most this many files,
// and at most kMaxConfigBytes of file data in all the pod's volumes.
inline constexpr int kMaxConfigFiles = 1024;
inline constexpr int64_t kMaxConfigBytes = int64_t{8} << 20;
// pull_credentials: at most this many, each server key at most this long.
inline constexpr int kMaxPullCredentials = 256;
inline constexpr int kMaxRegistryServerBytes = 1024;

// kInvalidArgument unless `uid` is a pod uid (above).
absl::Status CheckPodUid(absl::string_view field, absl::string_view uid);
// kInvalidArgument unless `value` is a DNS-1123 label.
absl::Status CheckDnsLabel(absl::string_view field, absl::string_view value);
// kInvalidArgument unless `value` is a DNS-1123 subdomain.
absl::Status CheckDnsSubdomain(absl::string_view field,
                               absl::string_view value);
// kInvalidArgument unless `value` is an IPv4 or IPv6 literal (inet_pton).
absl::Status CheckIpAddress(absl::string_view field, absl::string_view value);
// kInvalidArgument unless `value` is a relative path without a ".."
// component or a NUL, as Kubernetes validates subPath.
absl::Status CheckSubPath(absl::string_view field, absl::string_view value);

// Checks a host table: every address an IP literal (an empty one is allowed:
// the entry is skipped), every name a DNS-1123 subdomain, and the counts
// above. `field` is the table's path ("hosts").
absl::Status CheckHostEntries(
    absl::string_view field,
    const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts);

// Moves `assignment`'s host table from its wire form into `hosts`, once, on
// receipt, so that everything after reads `hosts` alone: inflates
// hosts_table (at most api::kMaxHostTableBytes, never allocating past it),
// parses it, checks it as CheckHostEntries does, and clears hosts_table. An
// assignment without hosts_table (a jobsetd from before it) is left as it
// is. kInvalidArgument, naming the field, when both hosts and hosts_table
// are set, or when hosts_table is not a table (api::DecodeHostTable) or its
// entries do not pass; `assignment` is then left unchanged.
absl::Status ExpandHostTable(api::PodAssignment* assignment);

// Checks the files of the pod's secret and configMap volumes against
// `spec`'s volumes: each config_volumes[i] names a volume of that kind (a
// secret one when `secret`), at most once; every file path is relative,
// without an empty, "." or ".." component or a NUL, at most
// kMaxSubPathBytes, unique in its volume and no directory of another file
// there; modes 0..0777; the counts above. Messages quote paths, never data.
absl::Status CheckConfigVolumes(
    const api::PodSpec& spec,
    const google::protobuf::RepeatedPtrField<api::ConfigVolume>& volumes);

// Checks the registry credentials: at most kMaxPullCredentials, every server
// non-empty, at most kMaxRegistryServerBytes, without NUL or control
// characters. Messages never quote a username or password.
absl::Status CheckPullCredentials(
    const google::protobuf::RepeatedPtrField<api::RegistryCredential>&
        credentials);

// Checks everything of `assignment` the agent and the shim build paths or
// files from: the uid, the pod name and hostname, container names (unique
// across init and main containers), volume names (unique) and sources (at
// most one), volume mounts (naming a volume of the pod; subPath as above),
// the pod's own addresses, the host table, the config volumes and the pull
// credentials (above). A hosts_table still set (ExpandHostTable was not
// called) is refused, as are hosts and hosts_table set together.
absl::Status CheckAssignment(const api::PodAssignment& assignment);

// Returns true when `uid` passes CheckPodUid.
bool ValidPodUid(absl::string_view uid);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_POD_INPUT_H_
