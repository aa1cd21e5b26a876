#ifndef JOBSET_AGENT_RUNTIME_CRI_REGISTRY_AUTH_H_
#define JOBSET_AGENT_RUNTIME_CRI_REGISTRY_AUTH_H_

// Which of a pod's imagePullSecrets credentials apply to an image, as
// kubelet's credential keyring decides (k8s:pkg/credentialprovider/
// keyring.go, containers-cri.md §4):
//
// - A key ("127.0.0.1:5000", "https://index.docker.io/v1/",
//   "*.example.com/team") is read as a URL, https:// assumed when it has no
//   http:// or https://; a path that starts with /v1/ or /v2/ loses that
//   prefix, and a path of "/" is none. A key that does not parse is skipped.
// - A key matches an image when its host has as many dot-separated labels
//   as the image's registry host and each label glob-matches (Go's
//   filepath.Match: `*`, classes such as `[0-9]`; a `?` would start the
//   URL's query), the ports are the same string (none is "", never a
//   wildcard), and the key's path is a string prefix of the image's ("/team"
//   matches "/team/app" and "/teamx/app").
// - Keys are tried in reverse lexical order (so "quay.io/coreos" before
//   "quay.io"), the credentials of one key in the order given.
// - Only when no key matches, a Docker Hub image (docker.io) takes the
//   credentials of the key "index.docker.io" (as "https://index.docker.io/
//   v1/" reads).
//
// Pure functions: no I/O, no clock. Thread-compatible.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "proto/agent.pb.h"

namespace jobset::agent::cri {

// A dockerconfigjson key as the keyring reads it.
struct RegistryKey {
  std::string host;  // "*.example.com", "127.0.0.1", "::1" (no brackets).
  std::string port;  // "5000", or "" when the key names none.
  std::string path;  // "/team" (percent-escapes decoded), or "".
  // The keyring's index entry: host[:port] and path, as kubelet sorts them
  // ("127.0.0.1:5000", "index.docker.io", "*.example.com/team").
  std::string index;
};

// Reads `key` as kubelet's keyring does. INVALID_ARGUMENT says why a key
// does not parse ("invalid port \":x\" after host").
absl::StatusOr<RegistryKey> ParseRegistryKey(absl::string_view key);

// Whether `key` matches an image on registry `domain` ("127.0.0.1:5000",
// "docker.io") with repository path `path` ("library/busybox").
bool RegistryKeyMatches(const RegistryKey& key, absl::string_view domain,
                        absl::string_view path);

// One credential to try for a pull: what CRI's AuthConfig gets.
struct RegistryAuth {
  std::string username;
  std::string password;
  // The registry the credential is for, as containerd compares it with
  // every host it contacts for the pull (it sends the credential to that
  // host only): "https://" and the image's registry host, which for Docker
  // Hub is registry-1.docker.io. CRI-O ignores it.
  std::string server_address;
  // The key it matched as written in the secret (for logs; not secret).
  std::string key;

  friend bool operator==(const RegistryAuth& a, const RegistryAuth& b) {
    return a.username == b.username && a.password == b.password &&
           a.server_address == b.server_address && a.key == b.key;
  }
};

// Returns the credentials among `credentials` (jobsetd's, in its order)
// that apply to `image` (any reference ParseImageReference reads; its tag
// and digest do not matter), most specific key first, each username and
// password once. Empty when none does, or when `image` does not parse:
// the pull is then anonymous.
std::vector<RegistryAuth> MatchingCredentials(
    absl::string_view image,
    const google::protobuf::RepeatedPtrField<api::RegistryCredential>&
        credentials);

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_REGISTRY_AUTH_H_
