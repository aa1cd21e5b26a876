#ifndef JOBSET_API_QUANTITY_H_
#define JOBSET_API_QUANTITY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::api {

// A Kubernetes resource quantity ("500m", "4Gi", "1.5", "2e3", "8"), held
// exactly in thousandths of a unit. Memory and extended resources are counted
// in whole units (Value()), cpu in millicores (MilliValue()).
class Quantity {
 public:
  constexpr Quantity() = default;
  static constexpr Quantity FromMilli(int64_t milli) { return Quantity(milli); }
  static constexpr Quantity FromUnits(int64_t units) {
    return Quantity(units * 1000);
  }

  // The value in thousandths of a unit ("500m" -> 500, "2" -> 2000).
  int64_t MilliValue() const { return milli_; }
  // The value in whole units, rounded up as Kubernetes does ("500m" -> 1).
  int64_t Value() const;

  bool operator==(const Quantity&) const = default;
  auto operator<=>(const Quantity&) const = default;

 private:
  explicit constexpr Quantity(int64_t milli) : milli_(milli) {}
  int64_t milli_ = 0;
};

// Parses Kubernetes quantity syntax:
//   quantity := [+-] number suffix
//   number   := digits | digits "." digits | digits "." | "." digits
//   suffix   := "" | "m" | "k" | "M" | "G" | "T" | "P" | "E"     (powers of
//   1000)
//             | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"           (powers of
//             1024) | ("e" | "E") [+-] digits                           (powers
//             of 10)
// Precision finer than 1m rounds up ("0.1m" -> 1m), as Kubernetes does.
// Returns kInvalidArgument naming the text on bad syntax, and kOutOfRange when
// the value does not fit in 64 bits of thousandths (about 9.2e15 units).
absl::StatusOr<Quantity> ParseQuantity(absl::string_view text);

}  // namespace jobset::api

#endif  // JOBSET_API_QUANTITY_H_
