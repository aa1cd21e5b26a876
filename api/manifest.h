#ifndef JOBSET_API_MANIFEST_H_
#define JOBSET_API_MANIFEST_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "proto/jobset.pb.h"

namespace jobset::api {

// The largest manifest accepted, as Kubernetes limits one object (1.5 MiB).
inline constexpr size_t kMaxManifestBytes = 1536 * 1024;

// One JobSet read from a manifest.
struct ManifestObject {
  int document = 0;  // 1-based position in the input.
  JobSet jobset;
  // Fields that Kubernetes knows and jobsetd accepts without acting on them,
  // each as "<path>: ignored by jobsetd".
  std::vector<std::string> warnings;
};

// Reads JobSets from YAML or JSON text holding one or more documents
// (separated by "---"); empty documents are skipped. Field names and casing
// are upstream's (jobset.x-k8s.io/v1alpha2), so upstream manifests load
// unchanged. Every document must be `kind: JobSet` of that apiVersion.
//
// Returns kInvalidArgument naming the document, line or field path for
// malformed YAML, unknown fields (typos), wrong types, and numbers out of
// range, with all problems of a document reported together; and
// kResourceExhausted for input over kMaxManifestBytes or too deeply nested or
// aliased to be read safely. Defaulting and validation are separate steps
// (api/defaults.h, api/validation.h).
absl::StatusOr<std::vector<ManifestObject>> LoadManifest(
    absl::string_view text);

// Reads a single YAML or JSON document into `message`, following the same
// rules as LoadManifest (without the kind check). Appends warnings for
// accepted-but-ignored fields to `warnings` (may be null).
absl::Status ParseManifestDocument(absl::string_view text,
                                   google::protobuf::Message* message,
                                   std::vector<std::string>* warnings);

// The apiVersion and kind of a document.
struct DocumentType {
  std::string api_version;
  std::string kind;
};

// Reads the apiVersion and kind of the single YAML or JSON document in
// `text` and nothing else, so that a caller can choose the message to parse
// it into (ParseManifestDocument); each is empty when absent or not a
// string. Fails as ParseManifestDocument does on text that is too large, is
// not YAML or JSON, or is not exactly one document.
absl::StatusOr<DocumentType> ReadDocumentType(absl::string_view text);

}  // namespace jobset::api

#endif  // JOBSET_API_MANIFEST_H_
