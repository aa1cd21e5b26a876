#include "api/manifest.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "api/defaults.h"
#include "api/field_errors.h"
#include "common/quote.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "proto/options.pb.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"
#include "yaml-cpp/yaml.h"

namespace jobset::api {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::Reflection;

// Bounds on the work one document may cause: YAML aliases can make a small
// input expand into a huge tree, and deep nesting exhausts the stack.
constexpr int64_t kMaxNodes = 2'000'000;
constexpr int kMaxDepth = 100;

// yaml-cpp tags plain (unquoted) scalars "?"; quoted ones "!".
bool IsPlain(const YAML::Node& node) { return node.Tag() == "?"; }

bool IsNullScalar(absl::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// YAML 1.1 booleans, as Kubernetes' YAML decoder reads them.
bool ParseBool(absl::string_view s, bool* out) {
  for (absl::string_view t :
       {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
    if (s == t) return *out = true;
  }
  for (absl::string_view f :
       {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
    if (s == f) {
      *out = false;
      return true;
    }
  }
  return false;
}

// A YAML 1.2 core-schema number:
// [-+]?(digits[.digits]|.digits)([eE][-+]?digits)?, 0x/0o integers, or
// .inf/.nan.
bool LooksNumeric(absl::string_view s) {
  if (absl::StartsWith(s, "0x") || absl::StartsWith(s, "0o")) {
    return s.size() > 2;
  }
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  for (absl::string_view special :
       {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"}) {
    if (s == special) return true;
  }
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
    return i - start;
  };
  size_t mantissa_digits = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa_digits += digits();
  }
  if (mantissa_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// Decodes standard base64 with padding, as Go's base64.StdEncoding (which
// Kubernetes uses for []byte fields) does: '\r' and '\n' are skipped, any
// other byte outside the alphabet, a bad padding or a short last quantum is
// an error naming the input byte, as Go's "illegal base64 data at input
// byte N".
bool DecodeBase64(absl::string_view in, std::string* out, size_t* bad_at) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out->clear();
  out->reserve(in.size() / 4 * 3);
  uint32_t quantum = 0;
  int have = 0;     // Sextets in `quantum`.
  int padding = 0;  // '=' seen in this quantum.
  size_t last = 0;  // Where the current quantum started.
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '\r' || c == '\n') continue;
    if (have + padding == 0) last = i;
    if (c == '=') {
      // Padding only after two or three sextets, and only to the quantum's
      // end.
      if (have < 2) {
        *bad_at = i;
        return false;
      }
      ++padding;
      if (have + padding > 4) {
        *bad_at = i;
        return false;
      }
      if (have + padding == 4) {
        if (have == 2) out->push_back(static_cast<char>(quantum >> 4));
        if (have == 3) {
          out->push_back(static_cast<char>(quantum >> 10));
          out->push_back(static_cast<char>((quantum >> 2) & 0xff));
        }
        // Nothing but line breaks may follow the padding.
        for (size_t j = i + 1; j < in.size(); ++j) {
          if (in[j] != '\r' && in[j] != '\n') {
            *bad_at = j;
            return false;
          }
        }
        return true;
      }
      continue;
    }
    const int v = value(c);
    if (v < 0 || padding > 0) {
      *bad_at = i;
      return false;
    }
    quantum = (quantum << 6) | static_cast<uint32_t>(v);
    if (++have == 4) {
      out->push_back(static_cast<char>(quantum >> 16));
      out->push_back(static_cast<char>((quantum >> 8) & 0xff));
      out->push_back(static_cast<char>(quantum & 0xff));
      quantum = 0;
      have = 0;
    }
  }
  if (have + padding != 0) {
    *bad_at = last;
    return false;
  }
  return true;
}

// A plain scalar that YAML reads as something other than a string.
std::string NonStringKind(absl::string_view s) {
  bool b;
  if (IsNullScalar(s)) return "null";
  if (ParseBool(s, &b)) return "a boolean";
  if (LooksNumeric(s)) return "a number";
  return "";
}

std::string NodeKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "an object";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "null";
  }
}

// Edit distance, for "did you mean" hints on misspelled field names.
int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int substitution =
          diagonal +
          (absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]) ? 0
                                                                          : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

// Converts a yaml-cpp node tree into a protobuf message by reflection, using
// the JSON names of the fields, and records every problem with its path.
class Converter {
 public:
  Converter(FieldErrors* errors, std::vector<std::string>* warnings)
      : errors_(errors), warnings_(warnings) {}

  // Fills `message` from the mapping `node`.
  void ToMessage(const YAML::Node& node, const std::string& path,
                 Message* message, int depth) {
    if (!Enter(path, depth)) return;
    const Descriptor* descriptor = message->GetDescriptor();
    if (descriptor->full_name() == "google.protobuf.Timestamp") {
      ToTimestamp(node, path, message);
      return;
    }
    if (descriptor->full_name() == "google.protobuf.Struct") {
      ToStruct(node, path, message, depth);
      return;
    }
    ForEachEntry(node, path, Child, "field",
                 [&](const std::string& key, const std::string& field_path,
                     const YAML::Node& value) {
                   const FieldDescriptor* field = FindField(descriptor, key);
                   if (field == nullptr) {
                     UnknownField(descriptor, key, field_path);
                   } else if (!value.IsNull()) {  // `field:` means unset
                     ToField(value, field_path, message, field, depth + 1);
                   }
                   return true;
                 });
  }

 private:
  // Calls `visit(key, entry_path, value)` for each entry of the mapping
  // `node`, where entry_path = make_path(path, key), until it returns false.
  // Reports a node that is not a mapping, keys that are not strings, and
  // duplicates ("duplicate <noun>").
  template <typename Visit>
  void ForEachEntry(const YAML::Node& node, const std::string& path,
                    std::string (*make_path)(absl::string_view,
                                             absl::string_view),
                    absl::string_view noun, Visit visit) {
    if (!node.IsMap()) {
      errors_->Add(path,
                   absl::StrCat("expected an object, got ", Describe(node)));
      return;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        errors_->Add(path, "object keys must be strings");
        continue;
      }
      const std::string key = entry.first.Scalar();
      const std::string entry_path = make_path(path, key);
      if (!seen.insert(key).second) {
        errors_->Add(entry_path, absl::StrCat("duplicate ", noun));
        continue;
      }
      if (!visit(key, entry_path, entry.second)) return;
    }
  }

  // Reports a field the message does not declare: a warning when Kubernetes
  // has it and jobsetd ignores it, an error otherwise.
  void UnknownField(const Descriptor* descriptor, const std::string& key,
                    const std::string& path) {
    if (!IsIgnored(descriptor, key)) {
      errors_->Add(path, UnknownFieldMessage(descriptor, key));
    } else if (warnings_ != nullptr) {
      warnings_->push_back(absl::StrCat(path, ": ignored by jobsetd"));
    }
  }

  bool Enter(const std::string& path, int depth) {
    if (++nodes_ > kMaxNodes) {
      if (!too_big_) errors_->Add(path, "document has too many nodes");
      too_big_ = true;
      return false;
    }
    if (depth > kMaxDepth) {
      errors_->Add(
          path, absl::StrCat("nested more than ", kMaxDepth, " levels deep"));
      return false;
    }
    return true;
  }

  static std::string Describe(const YAML::Node& node) {
    if (node.IsScalar()) return Quote(node.Scalar());
    return NodeKind(node);
  }

  static const FieldDescriptor* FindField(const Descriptor* descriptor,
                                          absl::string_view json_name) {
    for (int i = 0; i < descriptor->field_count(); ++i) {
      if (descriptor->field(i)->json_name() == json_name) {
        return descriptor->field(i);
      }
    }
    return nullptr;
  }

  static bool IsIgnored(const Descriptor* descriptor, absl::string_view key) {
    const auto& options = descriptor->options();
    for (int i = 0; i < options.ExtensionSize(ignored_field); ++i) {
      if (options.GetExtension(ignored_field, i) == key) return true;
    }
    return false;
  }

  static std::string UnknownFieldMessage(const Descriptor* descriptor,
                                         absl::string_view key) {
    std::string best;
    int best_distance = 3;  // Suggest only close matches.
    for (int i = 0; i < descriptor->field_count(); ++i) {
      const std::string& name = descriptor->field(i)->json_name();
      const int d = EditDistance(key, name);
      if (d < best_distance) {
        best_distance = d;
        best = name;
      }
    }
    if (best.empty()) return "unknown field";
    return absl::StrCat("unknown field (did you mean \"", best, "\"?)");
  }

  void ToField(const YAML::Node& node, const std::string& path,
               Message* message, const FieldDescriptor* field, int depth) {
    const Reflection* reflection = message->GetReflection();
    if (field->is_map()) {
      const Descriptor* entry_type = field->message_type();
      const bool numbers_allowed =
          field->options().GetExtension(::jobset::api::int_or_string);
      ForEachEntry(node, path, Key, "key",
                   [&](const std::string& key, const std::string& entry_path,
                       const YAML::Node& value) {
                     if (!Enter(entry_path, depth)) return false;
                     Message* entry = reflection->AddMessage(message, field);
                     entry->GetReflection()->SetString(
                         entry, entry_type->FindFieldByName("key"), key);
                     StoreValue(value, entry_path, entry,
                                entry_type->FindFieldByName("value"),
                                numbers_allowed, depth + 1);
                     return true;
                   });
      return;
    }
    if (field->is_repeated()) {
      if (!node.IsSequence()) {
        errors_->Add(path,
                     absl::StrCat("expected a list, got ", Describe(node)));
        return;
      }
      for (size_t i = 0; i < node.size(); ++i) {
        const std::string item_path = Index(path, static_cast<int64_t>(i));
        if (node[i].IsNull()) {
          errors_->Add(item_path, "list items must not be null");
          continue;
        }
        StoreValue(node[i], item_path, message, field,
                   field->options().GetExtension(int_or_string), depth + 1);
      }
      return;
    }
    StoreValue(node, path, message, field,
               field->options().GetExtension(int_or_string), depth);
  }

  // Reads a scalar for a string field. Numbers are accepted for
  // int-or-string fields; otherwise a plain scalar that YAML reads as a
  // number, boolean or null is an error, as in Kubernetes.
  bool ReadString(const YAML::Node& node, const std::string& path,
                  bool int_or_string, std::string* out) {
    if (!node.IsScalar()) {
      errors_->Add(path,
                   absl::StrCat("expected a string, got ", NodeKind(node)));
      return false;
    }
    const std::string& s = node.Scalar();
    if (IsPlain(node)) {
      const std::string kind = NonStringKind(s);
      if (!kind.empty() && !(int_or_string && kind == "a number")) {
        errors_->Invalid(path, s,
                         absl::StrCat("expected a string, got ", kind,
                                      " (quote the value)"));
        return false;
      }
    }
    *out = s;
    return true;
  }

  // Reads a plain decimal integer within [min, max]. 64-bit integers may
  // also be quoted, as protobuf's JSON mapping writes them. A plain
  // integer with a leading 0 (or 0o) of octal digits is octal, as the YAML
  // 1.1 that kubectl reads has it (`defaultMode: 0400` is 256).
  bool ReadInt(const YAML::Node& node, const std::string& path, int64_t min,
               int64_t max, int64_t* out) {
    const bool quoted_ok = max > std::numeric_limits<int32_t>::max();
    if (!node.IsScalar() || !(IsPlain(node) || quoted_ok)) {
      errors_->Add(path,
                   absl::StrCat("expected an integer, got ", Describe(node)));
      return false;
    }
    const std::string& s = node.Scalar();
    if (IsPlain(node)) {
      absl::string_view digits = s;
      const bool negative = absl::ConsumePrefix(&digits, "-");
      if (!negative) absl::ConsumePrefix(&digits, "+");
      if ((absl::ConsumePrefix(&digits, "0o") ||
           (digits.size() > 1 && absl::ConsumePrefix(&digits, "0"))) &&
          !digits.empty() && digits.size() <= 21 &&
          digits.find_first_not_of("01234567") == absl::string_view::npos) {
        uint64_t octal = 0;
        for (char c : digits)
          octal = octal * 8 + static_cast<uint64_t>(c - '0');
        const int64_t v = negative ? -static_cast<int64_t>(octal)
                                   : static_cast<int64_t>(octal);
        if (octal >
                static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
            v < min || v > max) {
          errors_->Invalid(path, s,
                           absl::StrCat("out of range: must be between ", min,
                                        " and ", max));
          return false;
        }
        *out = v;
        return true;
      }
    }
    const bool digits_only =
        !s.empty() &&
        s.find_first_not_of("0123456789", s[0] == '-' || s[0] == '+') ==
            std::string::npos &&
        s.size() > static_cast<size_t>(s[0] == '-' || s[0] == '+');
    int64_t v = 0;
    if (!digits_only) {
      errors_->Invalid(path, s, "expected an integer");
      return false;
    }
    if (!absl::SimpleAtoi(s, &v) || v < min || v > max) {
      errors_->Invalid(
          path, s,
          absl::StrCat("out of range: must be between ", min, " and ", max));
      return false;
    }
    *out = v;
    return true;
  }

  bool ReadBool(const YAML::Node& node, const std::string& path, bool* out) {
    if (node.IsScalar() && IsPlain(node) && ParseBool(node.Scalar(), out)) {
      return true;
    }
    errors_->Add(path, absl::StrCat("expected a boolean (true or false), got ",
                                    Describe(node)));
    return false;
  }

  // Reads one value of `field`'s type from `node` and sets it, or appends it
  // when the field is repeated.
  void StoreValue(const YAML::Node& node, const std::string& path,
                  Message* message, const FieldDescriptor* field,
                  bool int_or_string, int depth) {
    const Reflection* r = message->GetReflection();
    const bool add = field->is_repeated();
    int64_t i = 0;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string s;
        if (!ReadString(node, path, int_or_string, &s)) return;
        if (field->type() == FieldDescriptor::TYPE_BYTES) {
          // Bytes are base64 in Kubernetes' JSON and YAML. The value is
          // not quoted back: it may be a Secret's.
          std::string decoded;
          size_t bad_at = 0;
          if (!DecodeBase64(s, &decoded, &bad_at)) {
            errors_->Add(path,
                         absl::StrCat("Invalid value: illegal base64 data at "
                                      "input byte ",
                                      bad_at));
            return;
          }
          s = std::move(decoded);
        }
        add ? r->AddString(message, field, std::move(s))
            : r->SetString(message, field, std::move(s));
        return;
      }
      case FieldDescriptor::CPPTYPE_INT32:
        if (!ReadInt(node, path, std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max(), &i)) {
          return;
        }
        add ? r->AddInt32(message, field, static_cast<int32_t>(i))
            : r->SetInt32(message, field, static_cast<int32_t>(i));
        return;
      case FieldDescriptor::CPPTYPE_INT64:
        if (!ReadInt(node, path, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), &i)) {
          return;
        }
        add ? r->AddInt64(message, field, i) : r->SetInt64(message, field, i);
        return;
      case FieldDescriptor::CPPTYPE_BOOL: {
        bool b = false;
        if (!ReadBool(node, path, &b)) return;
        add ? r->AddBool(message, field, b) : r->SetBool(message, field, b);
        return;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        ToMessage(node, path,
                  add ? r->AddMessage(message, field)
                      : r->MutableMessage(message, field),
                  depth);
        return;
      default:
        // The API uses only the types above; proto/README.md says so.
        errors_->Add(path, "field type not supported by the manifest loader");
        return;
    }
  }

  void ToTimestamp(const YAML::Node& node, const std::string& path,
                   Message* message) {
    std::string text;
    if (!ReadString(node, path, false, &text)) return;
    absl::Time t;
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, text, &t, &error)) {
      errors_->Invalid(path, text,
                       "expected an RFC 3339 time such as "
                       "2026-01-02T15:04:05Z");
      return;
    }
    auto* ts = static_cast<google::protobuf::Timestamp*>(message);
    const int64_t seconds = absl::ToUnixSeconds(t);
    ts->set_seconds(seconds);
    ts->set_nanos(static_cast<int32_t>(
        absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds))));
  }

  // Opaque objects (google.protobuf.Struct) keep whatever the manifest says.
  void ToStruct(const YAML::Node& node, const std::string& path,
                Message* message, int depth) {
    auto* fields =
        static_cast<google::protobuf::Struct*>(message)->mutable_fields();
    ForEachEntry(node, path, Child, "field",
                 [&](const std::string& key, const std::string& entry_path,
                     const YAML::Node& value) {
                   ToValue(value, entry_path, &(*fields)[key], depth + 1);
                   return true;
                 });
  }

  void ToValue(const YAML::Node& node, const std::string& path,
               google::protobuf::Value* value, int depth) {
    if (!Enter(path, depth)) return;
    if (node.IsMap()) {
      ToStruct(node, path, value->mutable_struct_value(), depth);
    } else if (node.IsSequence()) {
      auto* list = value->mutable_list_value();
      for (size_t i = 0; i < node.size(); ++i) {
        ToValue(node[i], Index(path, static_cast<int64_t>(i)),
                list->add_values(), depth + 1);
      }
    } else if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      bool b = false;
      double d = 0;
      if (IsPlain(node) && IsNullScalar(s)) {
        value->set_null_value(google::protobuf::NULL_VALUE);
      } else if (IsPlain(node) && ParseBool(s, &b)) {
        value->set_bool_value(b);
      } else if (IsPlain(node) && LooksNumeric(s) && absl::SimpleAtod(s, &d)) {
        value->set_number_value(d);
      } else {
        value->set_string_value(s);
      }
    } else {
      value->set_null_value(google::protobuf::NULL_VALUE);
    }
  }

  FieldErrors* errors_;
  std::vector<std::string>* warnings_;
  int64_t nodes_ = 0;
  bool too_big_ = false;
};

absl::Status CheckSize(absl::string_view text) {
  if (text.size() > kMaxManifestBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("manifest is ", text.size(), " bytes, over the limit of ",
                     kMaxManifestBytes, " bytes (1.5 MiB)"));
  }
  return absl::OkStatus();
}

// Walks the document events of `text` without building nodes, and throws
// YAML::ParserException at a document that starts where the previous one
// did. yaml-cpp 0.7 never consumes a "," outside a flow collection (", a",
// "{} ,"): each HandleNextDocument returns another empty document at the
// same place, so YAML::LoadAll loops for ever and fills memory (found by
// fuzz/manifest_fuzzer).
class ProgressCheck final : public YAML::EventHandler {
 public:
  static void Run(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    ProgressCheck check;
    while (parser.HandleNextDocument(check)) {
    }
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (mark.pos == last_start_) {
      throw YAML::ParserException(mark,
                                  "unexpected \",\" or a document "
                                  "that never ends");
    }
    last_start_ = mark.pos;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  int last_start_ = -1;
};

absl::StatusOr<std::vector<YAML::Node>> ParseYaml(absl::string_view text) {
  try {
    const std::string input(text);
    ProgressCheck::Run(input);
    return YAML::LoadAll(input);
  } catch (const YAML::DeepRecursion& e) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "manifest is nested too deeply at line ", e.mark.line + 1));
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "manifest is not valid YAML or JSON: line ", e.mark.line + 1,
        ", column ", e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest is not valid YAML or JSON: ", e.what()));
  }
}

absl::Status ConvertDocument(const YAML::Node& node, absl::string_view what,
                             Message* message,
                             std::vector<std::string>* warnings) {
  FieldErrors errors;
  Converter(&errors, warnings).ToMessage(node, "", message, 0);
  if (errors.empty()) return absl::OkStatus();
  const bool too_big = absl::c_any_of(errors.errors(), [](const FieldError& e) {
    return absl::StrContains(e.message, "too many nodes") ||
           absl::StrContains(e.message, "levels deep");
  });
  absl::Status status = errors.ToStatus(what);
  return too_big ? absl::ResourceExhaustedError(status.message()) : status;
}

// Reads the one non-empty document of `text`.
absl::StatusOr<YAML::Node> ParseOneDocument(absl::string_view text) {
  if (absl::Status s = CheckSize(text); !s.ok()) return s;
  absl::StatusOr<std::vector<YAML::Node>> docs = ParseYaml(text);
  if (!docs.ok()) return docs.status();
  std::vector<YAML::Node> non_empty;
  for (const YAML::Node& doc : *docs) {
    if (!doc.IsNull()) non_empty.push_back(doc);
  }
  if (non_empty.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected exactly one document, got ", non_empty.size()));
  }
  return non_empty[0];
}

}  // namespace

absl::Status ParseManifestDocument(absl::string_view text, Message* message,
                                   std::vector<std::string>* warnings) {
  absl::StatusOr<YAML::Node> doc = ParseOneDocument(text);
  if (!doc.ok()) return doc.status();
  return ConvertDocument(*doc, "document", message, warnings);
}

absl::StatusOr<DocumentType> ReadDocumentType(absl::string_view text) {
  absl::StatusOr<YAML::Node> doc = ParseOneDocument(text);
  if (!doc.ok()) return doc.status();
  DocumentType type;
  if (!doc->IsMap()) return type;
  for (const auto& entry : *doc) {
    if (!entry.first.IsScalar() || !entry.second.IsScalar()) continue;
    if (entry.first.Scalar() == "apiVersion") {
      type.api_version = entry.second.Scalar();
    } else if (entry.first.Scalar() == "kind") {
      type.kind = entry.second.Scalar();
    }
  }
  return type;
}

absl::StatusOr<std::vector<ManifestObject>> LoadManifest(
    absl::string_view text) {
  if (absl::Status s = CheckSize(text); !s.ok()) return s;
  absl::StatusOr<std::vector<YAML::Node>> docs = ParseYaml(text);
  if (!docs.ok()) return docs.status();
  std::vector<ManifestObject> objects;
  for (size_t i = 0; i < docs->size(); ++i) {
    const YAML::Node& doc = (*docs)[i];
    if (doc.IsNull()) continue;
    const std::string what = absl::StrCat("manifest document ", i + 1);
    ManifestObject object;
    object.document = static_cast<int>(i + 1);
    absl::Status s =
        ConvertDocument(doc, what, &object.jobset, &object.warnings);
    if (!s.ok()) return s;
    FieldErrors type_errors;
    if (object.jobset.kind() != kKind) {
      type_errors.NotSupported("kind", object.jobset.kind(), {kKind});
    }
    if (object.jobset.api_version() != kApiVersion) {
      type_errors.NotSupported("apiVersion", object.jobset.api_version(),
                               {kApiVersion});
    }
    if (absl::Status s = type_errors.ToStatus(what); !s.ok()) return s;
    objects.push_back(std::move(object));
  }
  return objects;
}

}  // namespace jobset::api
