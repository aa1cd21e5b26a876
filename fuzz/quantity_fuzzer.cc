// ParseQuantity on arbitrary text: never crashes, overflows or loops, and an
// accepted quantity prints and parses back to itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/quantity.h"

namespace {

void Check(bool ok, absl::string_view what) {
  if (!ok) {
    __builtin_trap();  // A property failed: libFuzzer saves the input.
  }
  (void)what;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<jobset::api::Quantity> q = jobset::api::ParseQuantity(text);
  if (!q.ok()) return 0;
  const int64_t milli = q->MilliValue();
  (void)q->Value();
  // Thousandths written with the "m" suffix are exact.
  absl::StatusOr<jobset::api::Quantity> again =
      jobset::api::ParseQuantity(absl::StrCat(milli, "m"));
  Check(again.ok() && *again == *q, "round trip through milli");
  return 0;
}
