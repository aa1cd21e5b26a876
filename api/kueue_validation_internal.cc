#include "api/kueue_validation_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/metadata_validation.h"
#include "api/names.h"
#include "common/quote.h"

namespace jobset::api::kueue_internal {
namespace {

using int128 = __int128;

// jobsetd's bounds on a quantity it holds exactly in 128 bits (about
// 1.7e38), leaving room to scale an amount by 100 when formatting it.
constexpr int kMaxQuantityDigits = 30;
constexpr int kMaxQuantityExponent = 40;
constexpr int128 kMaxAmount = static_cast<int128>(1e35);
// Kubernetes keeps quantities to nano precision.
constexpr int kNanoScale = -9;

constexpr absl::string_view kTaintEffects[] = {"NoSchedule", "PreferNoSchedule",
                                               "NoExecute"};

bool IsLowerAlnum(char c) {
  return absl::ascii_islower(c) || absl::ascii_isdigit(c);
}

// Whether `value` matches kLabelPattern, whatever its length.
bool MatchesLabelPattern(absl::string_view value) {
  if (value.empty() || !IsLowerAlnum(value.front()) ||
      !IsLowerAlnum(value.back())) {
    return false;
  }
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// Whether `value` matches kSubdomainPattern, whatever its length.
bool MatchesSubdomainPattern(absl::string_view value) {
  size_t start = 0;
  while (true) {
    const size_t dot = value.find('.', start);
    if (!MatchesLabelPattern(value.substr(start, dot - start))) return false;
    if (dot == absl::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string Int128ToString(int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string digits;
  while (v != 0) {
    const int d = static_cast<int>(v % 10);
    digits.push_back(static_cast<char>('0' + (negative ? -d : d)));
    v /= 10;
  }
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

// 10^n, or nullopt beyond kMaxAmount.
std::optional<int128> PowerOfTen(int n) {
  int128 p = 1;
  for (int i = 0; i < n; ++i) {
    p *= 10;
    if (p > kMaxAmount) return std::nullopt;
  }
  return p;
}

// Why text is not a quantity jobsetd holds.
enum class QuantityProblem { kNone, kPattern, kSuffix, kRange };

std::optional<KubeQuantity> Read(absl::string_view text,
                                 QuantityProblem* problem) {
  *problem = QuantityProblem::kPattern;
  absl::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int128 mantissa = 0;
  int digits = 0;
  int significant = 0;
  int fraction = 0;
  bool point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (point) return std::nullopt;
      point = true;
      continue;
    }
    if (!absl::ascii_isdigit(c)) break;
    ++digits;
    if (point) ++fraction;
    if (significant == 0 && c == '0') continue;
    if (++significant > kMaxQuantityDigits) {
      *problem = QuantityProblem::kRange;
      return std::nullopt;
    }
    mantissa = mantissa * 10 + (c - '0');
  }
  if (digits == 0) return std::nullopt;

  KubeQuantity q;
  int binary = 0;
  int decimal = 0;
  const absl::string_view suffix = s.substr(i);
  constexpr absl::string_view kDecimal = "numkMGTPE";
  constexpr int kDecimalExponents[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};
  constexpr absl::string_view kBinary = "KMGTPE";
  if (suffix.empty()) {
  } else if (suffix.size() == 1 &&
             kDecimal.find(suffix[0]) != absl::string_view::npos) {
    decimal = kDecimalExponents[kDecimal.find(suffix[0])];
  } else if (suffix.size() == 2 && suffix[1] == 'i' &&
             kBinary.find(suffix[0]) != absl::string_view::npos) {
    binary = 10 * (static_cast<int>(kBinary.find(suffix[0])) + 1);
    q.format = KubeQuantity::Format::kBinarySi;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    absl::string_view exponent = suffix.substr(1);
    if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) {
      exponent.remove_prefix(1);
    }
    if (exponent.empty()) return std::nullopt;
    // The schema allows "1e2.5"; Kubernetes cannot read it.
    if (exponent.find_first_not_of("0123456789") != absl::string_view::npos) {
      const bool pattern_ok =
          exponent.find_first_not_of("0123456789.") ==
              absl::string_view::npos &&
          std::count(exponent.begin(), exponent.end(), '.') == 1 &&
          exponent != ".";
      *problem =
          pattern_ok ? QuantityProblem::kSuffix : QuantityProblem::kPattern;
      return std::nullopt;
    }
    if (!absl::SimpleAtoi(suffix.substr(1), &decimal) ||
        decimal > kMaxQuantityExponent || decimal < -kMaxQuantityExponent) {
      *problem = QuantityProblem::kRange;
      return std::nullopt;
    }
    q.format = KubeQuantity::Format::kDecimalExponent;
  } else {
    return std::nullopt;
  }

  *problem = QuantityProblem::kRange;
  int128 amount = mantissa;
  for (int b = 0; b < binary; ++b) {
    amount *= 2;
    if (amount > kMaxAmount) return std::nullopt;
  }
  int scale = decimal - fraction;
  if (scale < kNanoScale) {
    // Finer than a nano: round away from zero, as Kubernetes does.
    const std::optional<int128> divisor = PowerOfTen(kNanoScale - scale);
    if (!divisor.has_value()) {
      amount = amount == 0 ? 0 : 1;
    } else {
      amount = (amount + *divisor - 1) / *divisor;
    }
    scale = kNanoScale;
  }
  q.amount = negative ? -amount : amount;
  q.scale = scale;
  *problem = QuantityProblem::kNone;
  return q;
}

// `amount` x 10^shift, or nullopt beyond kMaxAmount.
std::optional<int128> Shift(int128 amount, int shift) {
  const std::optional<int128> p = PowerOfTen(shift);
  if (!p.has_value()) return std::nullopt;
  const int128 limit = kMaxAmount / *p;
  if (amount > limit || amount < -limit) return std::nullopt;
  return amount * *p;
}

}  // namespace

void SchemaPattern(absl::string_view path, absl::string_view value,
                   absl::string_view pattern, FieldErrors* errors) {
  errors->Invalid(path, value,
                  absl::StrCat(path, " in body should match '", pattern, "'"));
}

void SchemaMinimum(absl::string_view path, int64_t value, int64_t min,
                   FieldErrors* errors) {
  if (value >= min) return;
  errors->Invalid(path, value,
                  absl::StrCat(path,
                               " in body should be greater than or "
                               "equal to ",
                               min));
}

void SchemaEnum(absl::string_view path, absl::string_view value,
                absl::Span<const absl::string_view> allowed,
                FieldErrors* errors) {
  if (value.empty()) return;
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) {
    return;
  }
  errors->NotSupported(path, value, allowed);
}

void SchemaMaxItems(absl::string_view path, int64_t count, int64_t max,
                    FieldErrors* errors) {
  if (count > max) errors->TooMany(path, count, max);
}

void CelRule(absl::string_view path, absl::string_view type,
             absl::string_view message, FieldErrors* errors) {
  errors->Invalid(path, type, message);
}

void SchemaReference(absl::string_view path, absl::string_view value,
                     FieldErrors* errors) {
  if (value.empty()) return;
  if (value.size() > static_cast<size_t>(kMaxSubdomainLength)) {
    errors->TooLong(path, kMaxSubdomainLength);
  } else if (!MatchesSubdomainPattern(value)) {
    SchemaPattern(path, value, kSubdomainPattern, errors);
  }
}

void SchemaPodSetName(absl::string_view path, absl::string_view value,
                      FieldErrors* errors) {
  if (value.size() > static_cast<size_t>(kMaxLabelLength)) {
    errors->TooLong(path, kMaxLabelLength);
  } else if (!MatchesLabelPattern(value)) {
    SchemaPattern(path, value, kLabelPattern, errors);
  }
}

std::optional<KubeQuantity> ReadQuantity(absl::string_view text) {
  QuantityProblem problem;
  return Read(text, &problem);
}

std::string CanonicalQuantity(const KubeQuantity& q) {
  if (q.amount == 0) return "0";
  if (q.format == KubeQuantity::Format::kBinarySi) {
    // Whole units of at least 1024 print in powers of 1024; anything else
    // as DecimalSI, so that nothing is rounded.
    std::optional<int128> units;
    if (q.scale >= 0) {
      units = Shift(q.amount, q.scale);
    } else if (const std::optional<int128> p = PowerOfTen(-q.scale);
               p.has_value() && q.amount % *p == 0) {
      units = q.amount / *p;
    }
    if (units.has_value() && (*units >= 1024 || *units <= -1024)) {
      static constexpr absl::string_view kSuffixes[] = {"",   "Ki", "Mi", "Gi",
                                                        "Ti", "Pi", "Ei"};
      int times = 0;
      while (times < 6 && *units % 1024 == 0) {
        *units /= 1024;
        ++times;
      }
      return absl::StrCat(Int128ToString(*units), kSuffixes[times]);
    }
  }
  int128 amount = q.amount;
  int exponent = q.scale;
  while (amount % 10 == 0) {
    amount /= 10;
    ++exponent;
  }
  // Make the exponent a multiple of 3 (C++'s % truncates, as Go's).
  switch (exponent % 3) {
    case 1:
    case -2:
      amount *= 10;
      exponent -= 1;
      break;
    case 2:
    case -1:
      amount *= 100;
      exponent -= 2;
      break;
    default:
      break;
  }
  std::string suffix;
  if (q.format == KubeQuantity::Format::kDecimalExponent) {
    if (exponent != 0) suffix = absl::StrCat("e", exponent);
  } else {
    static constexpr absl::string_view kSuffixes[] = {"n", "u", "m", "",  "k",
                                                      "M", "G", "T", "P", "E"};
    const int index = exponent / 3 + 3;
    suffix = index >= 0 && index < 10 ? std::string(kSuffixes[index])
                                      : absl::StrCat("e", exponent);
  }
  return absl::StrCat(Int128ToString(amount), suffix);
}

int CompareQuantities(const KubeQuantity& a, const KubeQuantity& b) {
  const int scale = std::min(a.scale, b.scale);
  const std::optional<int128> x = Shift(a.amount, a.scale - scale);
  const std::optional<int128> y = Shift(b.amount, b.scale - scale);
  if (x.has_value() && y.has_value()) return *x < *y ? -1 : (*x > *y ? 1 : 0);
  // Beyond 128 bits: far apart, so doubles tell them apart.
  const long double u = static_cast<long double>(a.amount) *
                        std::pow(10.0L, static_cast<long double>(a.scale));
  const long double v = static_cast<long double>(b.amount) *
                        std::pow(10.0L, static_cast<long double>(b.scale));
  return u < v ? -1 : (u > v ? 1 : 0);
}

std::optional<KubeQuantity> SchemaQuantity(absl::string_view path,
                                           absl::string_view text,
                                           FieldErrors* errors) {
  QuantityProblem problem;
  std::optional<KubeQuantity> q = Read(text, &problem);
  switch (problem) {
    case QuantityProblem::kNone:
      break;
    case QuantityProblem::kPattern:
      SchemaPattern(path, text, kQuantityPattern, errors);
      break;
    case QuantityProblem::kSuffix:
      errors->Invalid(path, text, "unable to parse quantity's suffix");
      break;
    case QuantityProblem::kRange:
      errors->Invalid(
          path, text,
          absl::StrCat("jobsetd holds quantities of at most ",
                       kMaxQuantityDigits, " digits and exponents of at most ",
                       kMaxQuantityExponent));
      break;
  }
  return q;
}

void NonNegativeQuantity(absl::string_view path, absl::string_view text,
                         FieldErrors* errors) {
  const std::optional<KubeQuantity> q = ReadQuantity(text);
  if (q.has_value() && q->amount < 0) {
    errors->Invalid(path, CanonicalQuantity(*q),
                    "must be greater than or equal to 0");
  }
}

void ValidateMeta(const ObjectMeta& meta, bool namespaced,
                  FieldErrors* errors) {
  if (!meta.generate_name().empty()) {
    // A prefix may end in '-': Kubernetes checks it with that dash masked.
    std::string prefix = meta.generate_name();
    if (prefix.size() > 1 && prefix.back() == '-') prefix.back() = 'a';
    for (const std::string& error : IsDns1123Subdomain(prefix)) {
      errors->Invalid("metadata.generateName", meta.generate_name(), error);
    }
  }
  if (meta.name().empty()) {
    if (meta.generate_name().empty()) {
      errors->Required("metadata.name", "name or generateName is required");
    }
  } else {
    for (const std::string& error : IsDns1123Subdomain(meta.name())) {
      errors->Invalid("metadata.name", meta.name(), error);
    }
  }
  if (!namespaced) {
    if (!meta.namespace_().empty()) {
      errors->Forbidden("metadata.namespace", "not allowed on this type");
    }
  } else if (meta.namespace_().empty()) {
    errors->Required("metadata.namespace");
  } else {
    for (const std::string& error : IsDns1123Label(meta.namespace_())) {
      errors->Invalid("metadata.namespace", meta.namespace_(), error);
    }
  }
  ValidateLabels(meta.labels(), "metadata.labels", errors);
  ValidateAnnotations(meta.annotations(), "metadata.annotations", errors);
}

void ValidateMetaUpdate(const ObjectMeta& old_meta, const ObjectMeta& new_meta,
                        FieldErrors* errors) {
  constexpr absl::string_view kImmutable = "field is immutable";
  if (new_meta.name() != old_meta.name()) {
    errors->Invalid("metadata.name", new_meta.name(), kImmutable);
  }
  if (new_meta.namespace_() != old_meta.namespace_()) {
    errors->Invalid("metadata.namespace", new_meta.namespace_(), kImmutable);
  }
  if (!new_meta.uid().empty() && new_meta.uid() != old_meta.uid()) {
    errors->Invalid("metadata.uid", new_meta.uid(), kImmutable);
  }
  ValidateLabels(new_meta.labels(), "metadata.labels", errors);
  ValidateAnnotations(new_meta.annotations(), "metadata.annotations", errors);
}

std::string ObjectName(absl::string_view kind, const ObjectMeta& meta) {
  return absl::StrCat(
      kind, " ",
      Quote(meta.name().empty() ? meta.generate_name() : meta.name()));
}

bool CelRulesApply(FieldErrors* errors) {
  const bool blocked =
      std::any_of(errors->errors().begin(), errors->errors().end(),
                  [](const FieldError& e) {
                    return absl::StartsWith(e.message, "Required value") ||
                           absl::StartsWith(e.message, "Unsupported value") ||
                           absl::StartsWith(e.message, "Too long") ||
                           absl::StartsWith(e.message, "Too many");
                  });
  if (blocked) {
    errors->Invalid("<nil>", "null",
                    "some validation rules were not checked because the "
                    "object was invalid; correct the existing errors to "
                    "complete validation");
  }
  return !blocked;
}

void SchemaTolerations(const Repeated<Toleration>& tolerations,
                       absl::string_view path, FieldErrors* errors) {
  SchemaMaxItems(path, tolerations.size(), 8, errors);
}

void CelTolerations(const Repeated<Toleration>& tolerations,
                    absl::string_view path, FieldErrors* errors) {
  auto any = [&](auto broken) {
    return std::any_of(tolerations.begin(), tolerations.end(), broken);
  };
  if (any([](const Toleration& t) {
        return t.key().empty() && t.operator_() != "Exists";
      })) {
    CelRule(path, "array",
            "operator must be Exists when 'key' is empty, which means 'match "
            "all values and all keys'",
            errors);
  }
  if (any([](const Toleration& t) {
        return t.has_toleration_seconds() && t.effect() != "NoExecute";
      })) {
    CelRule(path, "array",
            "effect must be 'NoExecute' when 'tolerationSeconds' is set",
            errors);
  }
  if (any([](const Toleration& t) {
        return !t.operator_().empty() && t.operator_() != "Equal" &&
               t.operator_() != "Exists";
      })) {
    CelRule(path, "array",
            "supported toleration values: 'Equal'(default), 'Exists'", errors);
  }
  if (any([](const Toleration& t) {
        return t.operator_() == "Exists" && !t.value().empty();
      })) {
    CelRule(path, "array", "a value must be empty when 'operator' is 'Exists'",
            errors);
  }
  if (any([](const Toleration& t) {
        return !t.effect().empty() &&
               std::find(std::begin(kTaintEffects), std::end(kTaintEffects),
                         t.effect()) == std::end(kTaintEffects);
      })) {
    CelRule(path, "array",
            "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', "
            "'NoExecute'",
            errors);
  }
}

void WebhookTolerations(const Repeated<Toleration>& tolerations,
                        absl::string_view path, FieldErrors* errors) {
  for (int i = 0; i < tolerations.size(); ++i) {
    const std::string& key = tolerations[i].key();
    if (key.empty()) continue;
    for (const std::string& error : IsQualifiedName(key)) {
      errors->Invalid(Child(Index(path, i), "key"), key, error);
    }
  }
}

}  // namespace jobset::api::kueue_internal
