#include "api/quantity.h"

#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace jobset::api {
namespace {

using int128 = __int128;

// Beyond these, the value cannot fit and the arithmetic below could overflow.
constexpr int kMaxDigits = 30;
constexpr int kMaxExponent = 40;

absl::Status Malformed(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "quantity \"", text, "\" is malformed: ", why,
      " (expected a number with an optional suffix such as 500m, 4Gi, 8)"));
}

absl::Status TooLarge(absl::string_view text) {
  return absl::OutOfRangeError(
      absl::StrCat("quantity \"", text, "\" is too large"));
}

}  // namespace

int64_t Quantity::Value() const {
  // Round towards +infinity to whole units.
  int64_t units = milli_ / 1000;
  if (milli_ % 1000 > 0) ++units;
  return units;
}

absl::StatusOr<Quantity> ParseQuantity(absl::string_view text) {
  absl::string_view s = text;
  if (s.empty()) return Malformed(text, "empty");

  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }

  // The number: digits with at most one '.', at least one digit.
  int128 mantissa = 0;
  int digits = 0;
  int fraction_digits = 0;
  bool seen_point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (seen_point) return Malformed(text, "more than one '.'");
      seen_point = true;
      continue;
    }
    if (!absl::ascii_isdigit(c)) break;
    if (digits == 0 && c == '0') {
      // Leading zeros carry no precision.
      if (seen_point) ++fraction_digits;
      continue;
    }
    if (++digits > kMaxDigits) return TooLarge(text);
    mantissa = mantissa * 10 + (c - '0');
    if (seen_point) ++fraction_digits;
  }
  const absl::string_view number = s.substr(0, i);
  if (number.empty() || number == ".") return Malformed(text, "no digits");
  if (fraction_digits > kMaxDigits) return TooLarge(text);

  // The suffix: value = mantissa * 10^-fraction_digits * 2^binary * 10^decimal.
  const absl::string_view suffix = s.substr(i);
  int binary = 0;
  int decimal = 0;
  if (suffix.empty()) {
  } else if (suffix == "m") {
    decimal = -3;
  } else if (suffix == "k") {
    decimal = 3;
  } else if (suffix == "M") {
    decimal = 6;
  } else if (suffix == "G") {
    decimal = 9;
  } else if (suffix == "T") {
    decimal = 12;
  } else if (suffix == "P") {
    decimal = 15;
  } else if (suffix == "E") {
    decimal = 18;
  } else if (suffix == "Ki") {
    binary = 10;
  } else if (suffix == "Mi") {
    binary = 20;
  } else if (suffix == "Gi") {
    binary = 30;
  } else if (suffix == "Ti") {
    binary = 40;
  } else if (suffix == "Pi") {
    binary = 50;
  } else if (suffix == "Ei") {
    binary = 60;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    absl::string_view exponent = suffix.substr(1);
    const bool valid_chars =
        !exponent.empty() &&
        (exponent[0] == '+' || exponent[0] == '-' ||
         absl::ascii_isdigit(exponent[0])) &&
        exponent.find_first_not_of("0123456789", 1) == absl::string_view::npos;
    if (!valid_chars || !absl::SimpleAtoi(exponent, &decimal)) {
      return Malformed(text, absl::StrCat("bad exponent \"", suffix, "\""));
    }
    if (decimal > kMaxExponent || decimal < -kMaxExponent) {
      return decimal > 0 ? TooLarge(text)
                         : Malformed(text, "exponent out of range");
    }
  } else {
    return Malformed(text, absl::StrCat("unknown suffix \"", suffix, "\""));
  }

  // Thousandths: mantissa * 2^binary * 10^(decimal + 3 - fraction_digits),
  // rounded up when the power of ten is negative.
  constexpr int128 kLimit = std::numeric_limits<int64_t>::max();
  int128 value = mantissa;
  for (int b = 0; b < binary && value != 0; ++b) {
    value *= 2;
    if (value > kLimit) return TooLarge(text);
  }
  int exponent10 = decimal + 3 - fraction_digits;
  for (; exponent10 > 0 && value != 0; --exponent10) {
    value *= 10;
    if (value > kLimit) return TooLarge(text);
  }
  if (exponent10 < 0) {
    int128 divisor = 1;
    bool divisor_exceeds_value = false;
    for (; exponent10 < 0; ++exponent10) {
      divisor *= 10;
      if (divisor > value) {
        divisor_exceeds_value = true;
        break;
      }
    }
    value = divisor_exceeds_value ? (value == 0 ? 0 : 1)
                                  : (value + divisor - 1) / divisor;
  }
  if (value > kLimit) return TooLarge(text);
  const int64_t milli = static_cast<int64_t>(value);
  return Quantity::FromMilli(negative ? -milli : milli);
}

}  // namespace jobset::api
