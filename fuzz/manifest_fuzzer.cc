// LoadManifest on arbitrary YAML or JSON text, then defaulting and
// validation of every JobSet it reads: never a crash, a sanitizer report or
// unbounded work.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/defaults.h"
#include "api/manifest.h"
#include "api/validation.h"
#include "proto/jobset.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<jobset::api::ManifestObject>> objects =
      jobset::api::LoadManifest(text);
  if (!objects.ok()) return 0;
  for (jobset::api::ManifestObject& object : *objects) {
    jobset::api::SetJobSetDefaults(&object.jobset);
    (void)jobset::api::ValidateJobSet(object.jobset);
  }
  // A single document into a bare message, as jobsetctl reads other kinds.
  jobset::api::JobSet jobset;
  std::vector<std::string> warnings;
  (void)jobset::api::ParseManifestDocument(text, &jobset, &warnings);
  return 0;
}
