// JobSet validation and defaulting on an arbitrary JobSet proto (the input
// parsed as a serialized api.JobSet): validating, defaulting, validating the
// defaulted JobSet as a create and as an update of the original never
// crashes. Defaulting twice changes nothing the second time.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/defaults.h"
#include "api/validation.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/jobset.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  jobset::api::JobSet original;
  if (!original.ParseFromArray(data, static_cast<int>(size))) return 0;
  (void)jobset::api::ValidateJobSet(original);
  jobset::api::JobSet defaulted = original;
  jobset::api::SetJobSetDefaults(&defaulted);
  (void)jobset::api::ValidateJobSet(defaulted);
  (void)jobset::api::ValidateJobSetCreate(defaulted);
  (void)jobset::api::ValidateJobSetUpdate(original, defaulted);
  (void)jobset::api::ValidateJobSetUpdate(defaulted, defaulted);
  jobset::api::JobSet twice = defaulted;
  jobset::api::SetJobSetDefaults(&twice);
  if (!google::protobuf::util::MessageDifferencer::Equals(twice, defaulted)) {
    __builtin_trap();  // Defaulting is not idempotent: libFuzzer saves it.
  }
  return 0;
}
