#include "cli/selectors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jobset::cli {
namespace {

using ::google::protobuf::Value;

// Splits at unescaped `sep`; escapes (`\x`) stay in the parts.
std::vector<std::string> SplitUnescaped(absl::string_view text, char sep) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      parts.back().push_back(text[i]);
      parts.back().push_back(text[++i]);
    } else if (text[i] == sep) {
      parts.emplace_back();
    } else {
      parts.back().push_back(text[i]);
    }
  }
  return parts;
}

std::string Unescape(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    out.push_back(text[i]);
  }
  return out;
}

// The first unescaped occurrence of `op` in `term`, or npos.
size_t FindOperator(absl::string_view term, absl::string_view op) {
  for (size_t i = 0; i + op.size() <= term.size(); ++i) {
    if (term[i] == '\\') {
      ++i;
      continue;
    }
    if (term.substr(i, op.size()) == op) return i;
  }
  return absl::string_view::npos;
}

}  // namespace

absl::StatusOr<FieldSelector> FieldSelector::Parse(
    absl::string_view selector, const std::vector<std::string>& supported) {
  FieldSelector result;
  if (absl::StripAsciiWhitespace(selector).empty()) return result;
  for (const std::string& term : SplitUnescaped(selector, ',')) {
    Requirement requirement;
    size_t at = std::string::npos;
    size_t length = 0;
    // "!=" before "==" before "=", as Kubernetes tries them.
    for (absl::string_view op : {"!=", "==", "="}) {
      at = FindOperator(term, op);
      if (at != std::string::npos) {
        length = op.size();
        requirement.equals = op != "!=";
        break;
      }
    }
    if (at == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid selector: '", selector, "'; can't understand '", term, "'"));
    }
    requirement.field = Unescape(
        absl::StripAsciiWhitespace(absl::string_view(term).substr(0, at)));
    requirement.value = Unescape(absl::string_view(term).substr(at + length));
    if (std::find(supported.begin(), supported.end(), requirement.field) ==
        supported.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field label not supported: ", requirement.field));
    }
    result.requirements_.push_back(std::move(requirement));
  }
  return result;
}

bool FieldSelector::Matches(const Value& object) const {
  for (const Requirement& r : requirements_) {
    if ((FieldText(object, r.field) == r.value) != r.equals) return false;
  }
  return true;
}

std::string FieldText(const Value& object, absl::string_view path) {
  const Value* value = &object;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (!value->has_struct_value()) return "";
    const auto& fields = value->struct_value().fields();
    auto it = fields.find(std::string(part));
    if (it == fields.end()) return "";
    value = &it->second;
  }
  switch (value->kind_case()) {
    case Value::kStringValue:
      return value->string_value();
    case Value::kBoolValue:
      return value->bool_value() ? "true" : "false";
    case Value::kNumberValue: {
      const double d = value->number_value();
      if (d == std::floor(d) && std::fabs(d) < 1e15) {
        return absl::StrCat(static_cast<int64_t>(d));
      }
      return absl::StrCat(d);
    }
    default:
      return "";
  }
}

google::protobuf::Map<std::string, std::string> LabelsOf(const Value& object) {
  google::protobuf::Map<std::string, std::string> labels;
  if (!object.has_struct_value()) return labels;
  auto meta = object.struct_value().fields().find("metadata");
  if (meta == object.struct_value().fields().end() ||
      !meta->second.has_struct_value()) {
    return labels;
  }
  auto found = meta->second.struct_value().fields().find("labels");
  if (found == meta->second.struct_value().fields().end() ||
      !found->second.has_struct_value()) {
    return labels;
  }
  for (const auto& [key, value] : found->second.struct_value().fields()) {
    if (value.has_string_value()) labels[key] = value.string_value();
  }
  return labels;
}

}  // namespace jobset::cli
