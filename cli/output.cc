#include "cli/output.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/json_quote.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "yaml-cpp/yaml.h"

namespace jobset::cli {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;

// yaml-cpp tags a quoted scalar (every JSON string) "!"; the numbers,
// booleans and nulls of protobuf's JSON are plain.
bool IsString(const YAML::Node& node) { return node.Tag() == "!"; }

YAML::Node StringNode(absl::string_view s) {
  YAML::Node node(std::string{s});
  node.SetTag("!");
  return node;
}

// Protobuf's JSON mapping writes 64-bit integers as strings; Kubernetes
// writes them as numbers (metadata.generation, activeDeadlineSeconds).
// Unquotes them, guided by the message's descriptor.
void UnquoteInt64(const Descriptor* descriptor, YAML::Node node) {
  if (!node.IsMap() || descriptor->file()->package() == "google.protobuf") {
    return;
  }
  for (auto entry : node) {
    const std::string key = entry.first.Scalar();
    const FieldDescriptor* field = nullptr;
    for (int i = 0; i < descriptor->field_count(); ++i) {
      if (descriptor->field(i)->json_name() == key)
        field = descriptor->field(i);
    }
    if (field == nullptr || field->is_map()) continue;
    YAML::Node value = entry.second;
    const bool int64 = field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
                       field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
    if (int64) {
      if (field->is_repeated()) {
        for (size_t i = 0; i < value.size(); ++i) {
          value[i] = YAML::Node(value[i].Scalar());
        }
      } else {
        node[key] = YAML::Node(value.Scalar());
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (size_t i = 0; i < value.size(); ++i) {
          UnquoteInt64(field->message_type(), value[i]);
        }
      } else {
        UnquoteInt64(field->message_type(), value);
      }
    }
  }
}

YAML::Node ObjectNode(const google::protobuf::Message& message,
                      absl::string_view api_version, absl::string_view kind) {
  std::string json;
  // The message types are our own, so printing cannot fail.
  (void)google::protobuf::util::MessageToJsonString(message, &json);
  YAML::Node parsed = YAML::Load(json);
  UnquoteInt64(message.GetDescriptor(), parsed);
  const YAML::Node& lookup = parsed;  // const: operator[] adds no key
  if (api_version.empty() || lookup["apiVersion"]) return parsed;
  YAML::Node object(YAML::NodeType::Map);
  object["apiVersion"] = StringNode(api_version);
  object["kind"] = StringNode(kind);
  for (auto entry : parsed) object[entry.first.Scalar()] = entry.second;
  return object;
}

void EmitJson(const YAML::Node& node, int indent, std::string* out) {
  const std::string pad(static_cast<size_t>(indent + 4), ' ');
  const std::string close_pad(static_cast<size_t>(indent), ' ');
  if (node.IsMap()) {
    if (node.size() == 0) {
      *out += "{}";
      return;
    }
    *out += "{\n";
    bool first = true;
    for (auto entry : node) {
      if (!first) *out += ",\n";
      first = false;
      absl::StrAppend(out, pad, JsonQuote(entry.first.Scalar()), ": ");
      EmitJson(entry.second, indent + 4, out);
    }
    absl::StrAppend(out, "\n", close_pad, "}");
  } else if (node.IsSequence()) {
    if (node.size() == 0) {
      *out += "[]";
      return;
    }
    *out += "[\n";
    for (size_t i = 0; i < node.size(); ++i) {
      if (i > 0) *out += ",\n";
      *out += pad;
      EmitJson(node[i], indent + 4, out);
    }
    absl::StrAppend(out, "\n", close_pad, "]");
  } else if (node.IsScalar()) {
    *out += IsString(node) ? JsonQuote(node.Scalar()) : node.Scalar();
  } else {
    *out += "null";
  }
}

// The field of `descriptor` that protobuf's JSON names `key`; nullptr when
// none (or no descriptor).
const FieldDescriptor* FieldByJsonName(const Descriptor* descriptor,
                                       absl::string_view key) {
  if (descriptor == nullptr) return nullptr;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (descriptor->field(i)->json_name() == key) return descriptor->field(i);
  }
  return nullptr;
}

void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// Rewrites protobuf's compact JSON of one message in jobsetctl's layout
// (ObjectNode's content, EmitJson's layout) in one pass, without building
// a document: 64-bit integers unquoted as ObjectNode does, strings decoded
// and quoted again by JsonQuote, 4-space indentation. Every step returns
// false on text that is not JSON (never protobuf's; the caller then takes
// the document path).
class JsonReformatter {
 public:
  explicit JsonReformatter(absl::string_view in) : in_(in) {}

  // One message of type `descriptor` at `indent`, with apiVersion and kind
  // first when `api_version` is set and the message has no apiVersion.
  bool Message(const Descriptor* descriptor, absl::string_view api_version,
               absl::string_view kind, int indent, std::string* out) {
    // The top level's members are gathered first: whether apiVersion is
    // among them decides what comes first.
    std::vector<std::pair<std::string, std::string>> members;
    if (!Accept('{')) return false;
    if (!Peek('}')) {
      do {
        std::string key, value;
        if (!String(&key) || !Accept(':') ||
            !Member(descriptor, key, indent, &value)) {
          return false;
        }
        members.emplace_back(std::move(key), std::move(value));
      } while (Accept(','));
    }
    if (!Accept('}')) return false;
    SkipSpace();
    if (pos_ != in_.size()) return false;
    const bool has_api_version =
        std::any_of(members.begin(), members.end(),
                    [](const auto& m) { return m.first == "apiVersion"; });
    if (!api_version.empty() && !has_api_version) {
      std::string kind_value = JsonQuote(kind);
      for (auto it = members.begin(); it != members.end(); ++it) {
        if (it->first == "kind") {
          kind_value = std::move(it->second);
          members.erase(it);
          break;
        }
      }
      members.insert(members.begin(), {{"apiVersion", JsonQuote(api_version)},
                                       {"kind", std::move(kind_value)}});
    }
    if (members.empty()) {
      *out += "{}";
      return true;
    }
    const std::string pad(static_cast<size_t>(indent + 4), ' ');
    *out += "{\n";
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) *out += ",\n";
      absl::StrAppend(out, pad, JsonQuote(members[i].first), ": ",
                      members[i].second);
    }
    absl::StrAppend(out, "\n", std::string(static_cast<size_t>(indent), ' '),
                    "}");
    return true;
  }

 private:
  // How a value is written: as a message of `descriptor` (nullptr: as it
  // is), or, for a 64-bit integer field, its string unquoted.
  struct Shape {
    const Descriptor* descriptor = nullptr;
    bool unquote = false;
  };

  // The value of member `key` of a message of type `descriptor`.
  bool Member(const Descriptor* descriptor, absl::string_view key, int indent,
              std::string* out) {
    Shape shape;
    // Well-known types (Timestamp, Duration, Struct) keep their JSON form.
    if (descriptor != nullptr &&
        descriptor->file()->package() != "google.protobuf") {
      const FieldDescriptor* field = FieldByJsonName(descriptor, key);
      if (field != nullptr && !field->is_map()) {
        shape.unquote = field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
                        field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
        if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          shape.descriptor = field->message_type();
        }
      }
    }
    return Value(shape, indent + 4, /*element=*/false, out);
  }

  // A value at `indent`; `element`: inside an array (a repeated field's
  // shape applies to its elements).
  bool Value(const Shape& shape, int indent, bool element, std::string* out) {
    SkipSpace();
    if (pos_ >= in_.size()) return false;
    const char c = in_[pos_];
    if (c == '{') {
      return Container('{', '}', indent, out, [&] {
        std::string key;
        if (!String(&key) || !Accept(':')) return false;
        absl::StrAppend(out, JsonQuote(key), ": ");
        return Member(shape.descriptor, key, indent, out);
      });
    }
    if (c == '[') {
      return Container('[', ']', indent, out, [&] {
        // Nested arrays (none in protobuf's JSON but a Struct's) are
        // written as they are.
        return Value(element ? Shape{} : shape, indent + 4, true, out);
      });
    }
    if (c == '"') {
      std::string text;
      if (!String(&text)) return false;
      *out += shape.unquote && !text.empty() ? text : JsonQuote(text);
      return true;
    }
    // A number, true, false or null: copied as it is.
    const size_t start = pos_;
    while (pos_ < in_.size() && !absl::ascii_isspace(in_[pos_]) &&
           in_[pos_] != ',' && in_[pos_] != '}' && in_[pos_] != ']') {
      ++pos_;
    }
    if (pos_ == start) return false;
    absl::StrAppend(out, in_.substr(start, pos_ - start));
    return true;
  }

  // An object's members or an array's elements, `open` at the cursor: one
  // per line at `indent` + 4, written by `item`; "{}" or "[]" when none.
  template <typename Item>
  bool Container(char open, char close, int indent, std::string* out,
                 const Item& item) {
    ++pos_;
    if (Accept(close)) {
      absl::StrAppend(out, absl::string_view(&open, 1),
                      absl::string_view(&close, 1));
      return true;
    }
    absl::StrAppend(out, absl::string_view(&open, 1), "\n");
    bool first = true;
    do {
      if (!first) *out += ",\n";
      first = false;
      out->append(static_cast<size_t>(indent + 4), ' ');
      if (!item()) return false;
    } while (Accept(','));
    if (!Accept(close)) return false;
    *out += '\n';
    out->append(static_cast<size_t>(indent), ' ');
    *out += close;
    return true;
  }

  // A string literal, decoded.
  bool String(std::string* out) {
    if (!Accept('"')) return false;
    while (pos_ < in_.size()) {
      const char c = in_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= in_.size()) return false;
      const char e = in_[pos_++];
      // The one-letter escapes, then \uXXXX.
      static constexpr absl::string_view kEscaped = "\"\\/bfnrt";
      static constexpr absl::string_view kMeant = "\"\\/\b\f\n\r\t";
      if (const size_t i = kEscaped.find(e); i != absl::string_view::npos) {
        out->push_back(kMeant[i]);
        continue;
      }
      if (e != 'u') return false;
      uint32_t code;
      if (!Hex4(&code)) return false;
      // A surrogate pair is one code point.
      if (code >= 0xD800 && code < 0xDC00 && pos_ + 1 < in_.size() &&
          in_[pos_] == '\\' && in_[pos_ + 1] == 'u') {
        const size_t save = pos_;
        pos_ += 2;
        uint32_t low;
        if (Hex4(&low) && low >= 0xDC00 && low < 0xE000) {
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else {
          pos_ = save;
        }
      }
      AppendUtf8(code, out);
    }
    return false;
  }

  bool Hex4(uint32_t* code) {
    if (pos_ + 4 > in_.size()) return false;
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = in_[pos_++];
      if (!absl::ascii_isxdigit(h)) return false;
      *code = *code * 16 + (absl::ascii_isdigit(h)
                                ? h - '0'
                                : absl::ascii_tolower(h) - 'a' + 10);
    }
    return true;
  }

  void SkipSpace() {
    while (pos_ < in_.size() && absl::ascii_isspace(in_[pos_])) ++pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < in_.size() && in_[pos_] == c;
  }
  bool Accept(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }

  absl::string_view in_;
  size_t pos_ = 0;
};

// `message` as JSON at `indent` (ToJson's layout), appended to `out`.
void AppendMessageJson(const google::protobuf::Message& message,
                       absl::string_view api_version, absl::string_view kind,
                       int indent, std::string* out) {
  std::string json;
  // The message types are our own, so printing cannot fail.
  (void)google::protobuf::util::MessageToJsonString(message, &json);
  std::string formatted;
  if (JsonReformatter(json).Message(message.GetDescriptor(), api_version, kind,
                                    indent, &formatted)) {
    *out += formatted;
    return;
  }
  EmitJson(ObjectNode(message, api_version, kind), indent, out);
}

// True when YAML would read the plain scalar `s` as something other than
// this string (a number, boolean or null), or cannot write it plain.
bool NeedsQuotes(absl::string_view s) {
  if (s.empty()) return true;
  static constexpr absl::string_view kWords[] = {
      "null", "~",    "true",  "false", "yes", "no", "on",
      "off",  ".inf", "-.inf", ".nan",  "y",   "n"};
  const std::string lower = absl::AsciiStrToLower(s);
  for (absl::string_view w : kWords) {
    if (lower == w) return true;
  }
  double d;
  if (absl::SimpleAtod(s, &d)) return true;
  if (absl::StartsWith(s, "0x") || absl::StartsWith(s, "0o")) return true;
  return false;
}

// Whether `s` reads back unchanged from the literal block yaml-cpp writes
// ("|": its last line break kept, any more dropped; no indentation
// indicator, so a first line may not start with a space). Else it is
// written double-quoted.
bool ReadsBackAsLiteral(absl::string_view s) {
  return absl::EndsWith(s, "\n") && !absl::EndsWith(s, "\n\n") &&
         s.front() != ' ' && s.front() != '\t' && s.front() != '\n' &&
         !absl::StrContains(s, '\r') && !absl::StrContains(s, " \n");
}

void EmitYaml(const YAML::Node& node, YAML::Emitter* out) {
  if (node.IsMap()) {
    if (node.size() == 0) {
      *out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
      return;
    }
    *out << YAML::BeginMap;
    for (auto entry : node) {
      *out << YAML::Key << entry.first.Scalar() << YAML::Value;
      EmitYaml(entry.second, out);
    }
    *out << YAML::EndMap;
  } else if (node.IsSequence()) {
    if (node.size() == 0) {
      *out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
      return;
    }
    *out << YAML::BeginSeq;
    for (size_t i = 0; i < node.size(); ++i) EmitYaml(node[i], out);
    *out << YAML::EndSeq;
  } else if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (!IsString(node)) {
      *out << s;
    } else if (absl::StrContains(s, '\n')) {
      *out << (ReadsBackAsLiteral(s) ? YAML::Literal : YAML::DoubleQuoted) << s;
    } else if (NeedsQuotes(s)) {
      *out << YAML::DoubleQuoted << s;
    } else {
      *out << s;
    }
  } else {
    *out << YAML::Null;
  }
}

std::string Render(const YAML::Node& node, bool yaml) {
  if (yaml) {
    YAML::Emitter out;
    out.SetIndent(2);
    out.SetSeqFormat(YAML::Block);
    EmitYaml(node, &out);
    return absl::StrCat(out.c_str(), "\n");
  }
  std::string json;
  EmitJson(node, 0, &json);
  json += "\n";
  return json;
}

const api::Condition* FindCondition(
    const google::protobuf::RepeatedPtrField<api::Condition>& conditions,
    absl::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

std::string Age(const api::ObjectMeta& meta, absl::Time now) {
  return FormatAge(ToTime(meta.creation_timestamp()), now);
}

std::string OrNone(const std::string& s) { return s.empty() ? "<none>" : s; }
std::string OrUnknown(const std::string& s) {
  return s.empty() ? "<unknown>" : s;
}

}  // namespace

std::string FormatTable(const std::vector<Row>& rows) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const Row& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) {
        line += std::string(widths[i] - row[i].size() + 3, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

absl::Time ToTime(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() == 0 && timestamp.nanos() == 0) {
    return absl::InfinitePast();
  }
  return absl::FromUnixSeconds(timestamp.seconds()) +
         absl::Nanoseconds(timestamp.nanos());
}

std::string FormatAge(absl::Time since, absl::Time now) {
  if (since == absl::InfinitePast()) return "<unknown>";
  const absl::Duration d = now - since;
  const int64_t seconds = absl::ToInt64Seconds(d);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return absl::StrCat(seconds, "s");
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    return seconds % 60 == 0 ? absl::StrCat(minutes, "m")
                             : absl::StrCat(minutes, "m", seconds % 60, "s");
  }
  if (minutes < 180) return absl::StrCat(minutes, "m");
  const int64_t hours = minutes / 60;
  if (hours < 8) {
    return minutes % 60 == 0 ? absl::StrCat(hours, "h")
                             : absl::StrCat(hours, "h", minutes % 60, "m");
  }
  if (hours < 48) return absl::StrCat(hours, "h");
  const int64_t days = hours / 24;
  if (hours < 24 * 8) {
    return hours % 24 == 0 ? absl::StrCat(days, "d")
                           : absl::StrCat(days, "d", hours % 24, "h");
  }
  if (hours < 24 * 365 * 2) return absl::StrCat(days, "d");
  if (hours < 24 * 365 * 8) {
    return days % 365 == 0 ? absl::StrCat(days / 365, "y")
                           : absl::StrCat(days / 365, "y", days % 365, "d");
  }
  return absl::StrCat(days / 365, "y");
}

std::vector<Row> JobSetRows(const std::vector<api::JobSet>& jobsets,
                            absl::Time now) {
  std::vector<Row> rows = {
      {"NAME", "TERMINALSTATE", "RESTARTS", "COMPLETED", "SUSPENDED", "AGE"}};
  for (const api::JobSet& js : jobsets) {
    const api::Condition* completed =
        FindCondition(js.status().conditions(), "Completed");
    rows.push_back({js.metadata().name(), js.status().terminal_state(),
                    absl::StrCat(js.status().restarts()),
                    completed == nullptr ? "" : completed->status(),
                    js.spec().has_suspend()
                        ? (js.spec().suspend() ? "true" : "false")
                        : "",
                    Age(js.metadata(), now)});
  }
  return rows;
}

std::vector<Row> JobRows(const std::vector<api::Job>& jobs, absl::Time now) {
  std::vector<Row> rows = {
      {"NAME", "STATUS", "COMPLETIONS", "ACTIVE", "FAILED", "AGE"}};
  for (const api::Job& job : jobs) {
    std::string status = "Running";
    for (absl::string_view type : {"Complete", "Failed", "Suspended"}) {
      const api::Condition* c = FindCondition(job.status().conditions(), type);
      if (c != nullptr && c->status() == "True") status = std::string(type);
    }
    const int completions =
        job.spec().has_completions()
            ? job.spec().completions()
            : (job.spec().has_parallelism() ? job.spec().parallelism() : 1);
    rows.push_back({job.metadata().name(), status,
                    absl::StrCat(job.status().succeeded(), "/", completions),
                    absl::StrCat(job.status().active()),
                    absl::StrCat(job.status().failed()),
                    Age(job.metadata(), now)});
  }
  return rows;
}

namespace {

// A container's state, "waiting", "running" or "terminated" (or ""), and
// the reason it gives. Read from Kubernetes' form (state.waiting.reason,
// state.terminated.reason); a jobsetd older than that served its flat form
// (ContainerStatus fields 4-10), read when `state` is unset.
struct ContainerStateOf {
  absl::string_view state;
  absl::string_view reason;
};
ContainerStateOf StateOf(const api::ContainerStatus& c) {
  if (!c.has_state()) return {c.flat_state(), c.reason()};
  const api::ContainerState& s = c.state();
  if (s.has_running()) return {"running", ""};
  if (s.has_terminated()) return {"terminated", s.terminated().reason()};
  if (s.has_waiting()) return {"waiting", s.waiting().reason()};
  return {"", ""};
}

}  // namespace

// The STATUS column without jobsetd's additions.
std::string PodPhaseText(const api::Pod& pod);

std::string PodStatusText(const api::Pod& pod) {
  std::string text = PodPhaseText(pod);
  // jobsetd's straggler detection (our addition): a pod flagged slower than
  // its gang says so, as a cordoned node's status does.
  for (const api::Condition& c : pod.status().conditions()) {
    if (c.type() == "Straggler" && c.status() == "True") {
      absl::StrAppend(&text, ",Straggler");
    }
  }
  return text;
}

std::string PodPhaseText(const api::Pod& pod) {
  const api::PodStatus& status = pod.status();
  if (status.phase() == "Failed" || status.phase() == "Running" ||
      status.phase() == "Pending") {
    for (const api::ContainerStatus& c : status.container_statuses()) {
      const ContainerStateOf s = StateOf(c);
      if (s.state != "running" && !s.reason.empty() &&
          !(s.state == "terminated" && s.reason == "Completed" &&
            status.phase() != "Failed")) {
        return std::string(s.reason);
      }
    }
  }
  if (!status.reason().empty()) return status.reason();
  if (status.phase().empty()) return "Pending";
  if (status.phase() == "Succeeded") return "Completed";
  return status.phase();
}

std::vector<Row> PodRows(const std::vector<api::Pod>& pods, absl::Time now,
                         bool wide) {
  std::vector<Row> rows = {{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}};
  if (wide) {
    rows[0].insert(rows[0].end(),
                   {"IP", "NODE", "NOMINATED NODE", "READINESS GATES"});
  }
  for (const api::Pod& pod : pods) {
    int ready = 0;
    int restarts = 0;
    for (const api::ContainerStatus& c : pod.status().container_statuses()) {
      ready += c.ready() ? 1 : 0;
      restarts += c.restart_count();
    }
    Row row = {pod.metadata().name(),
               absl::StrCat(ready, "/", pod.spec().containers_size()),
               PodStatusText(pod), absl::StrCat(restarts),
               Age(pod.metadata(), now)};
    if (wide) {
      const std::string& ip = pod.status().pod_ip().empty()
                                  ? pod.status().host_ip()
                                  : pod.status().pod_ip();
      row.insert(row.end(), {OrNone(ip), OrNone(pod.spec().node_name()),
                             "<none>", "<none>"});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string NodeStatusText(const api::Node& node) {
  std::string status = "Unknown";
  for (const api::NodeCondition& c : node.status().conditions()) {
    if (c.type() == "Ready")
      status = c.status() == "True" ? "Ready" : "NotReady";
  }
  if (node.spec().unschedulable()) status += ",SchedulingDisabled";
  return status;
}

std::string NodeRolesText(const api::Node& node) {
  constexpr absl::string_view kRolePrefix = "node-role.kubernetes.io/";
  std::set<std::string> roles;
  for (const auto& [key, value] : node.metadata().labels()) {
    if (absl::StartsWith(key, kRolePrefix) && key.size() > kRolePrefix.size()) {
      roles.insert(key.substr(kRolePrefix.size()));
    } else if (key == "kubernetes.io/role" && !value.empty()) {
      roles.insert(value);
    }
  }
  return roles.empty() ? "<none>" : absl::StrJoin(roles, ",");
}

std::vector<Row> NodeRows(const std::vector<api::Node>& nodes, absl::Time now,
                          bool wide) {
  std::vector<Row> rows = {{"NAME", "STATUS", "ROLES", "AGE", "VERSION"}};
  if (wide) {
    rows[0].insert(rows[0].end(), {"INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                                   "KERNEL-VERSION", "CONTAINER-RUNTIME"});
  }
  for (const api::Node& node : nodes) {
    const api::NodeSystemInfo& info = node.status().node_info();
    // One word, so that the columns after it can be cut by blanks.
    std::vector<absl::string_view> words = absl::StrSplit(
        info.kubelet_version(), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    Row row = {node.metadata().name(), NodeStatusText(node),
               NodeRolesText(node), Age(node.metadata(), now),
               words.empty() ? "" : absl::StrJoin(words, "/")};
    if (wide) {
      std::string internal, external;
      for (const api::NodeAddress& a : node.status().addresses()) {
        if (a.type() == "InternalIP" && internal.empty())
          internal = a.address();
        if (a.type() == "ExternalIP" && external.empty())
          external = a.address();
      }
      row.insert(row.end(),
                 {OrNone(internal), OrNone(external),
                  OrUnknown(info.os_image()), OrUnknown(info.kernel_version()),
                  OrUnknown(info.container_runtime_version())});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Row> TokenRows(const std::vector<api::TokenInfo>& tokens,
                           absl::Time now) {
  std::vector<Row> rows = {{"NAME", "ID", "GROUPS", "AGE", "EXPIRES"}};
  for (const api::TokenInfo& token : tokens) {
    const absl::Time expires = ToTime(token.expiration_timestamp());
    std::string expiry = "<never>";
    if (expires != absl::InfinitePast()) {
      expiry = expires <= now ? "expired"
                              : absl::StrCat("in ", FormatAge(now, expires));
    }
    rows.push_back(
        {token.name(), token.id(),
         token.groups().empty() ? "<none>" : absl::StrJoin(token.groups(), ","),
         FormatAge(ToTime(token.creation_timestamp()), now), expiry});
  }
  return rows;
}

std::vector<Row> RbacRows(const std::vector<api::RbacObject>& objects,
                          bool namespaces, absl::Time now) {
  std::vector<Row> rows;
  rows.push_back(namespaces ? Row{"NAMESPACE", "NAME", "AGE"}
                            : Row{"NAME", "AGE"});
  for (const api::RbacObject& object : objects) {
    const api::ObjectMeta& meta = object.has_role()
                                      ? object.role().metadata()
                                      : object.binding().metadata();
    Row row;
    if (namespaces) row.push_back(meta.namespace_());
    row.push_back(meta.name());
    row.push_back(FormatAge(ToTime(meta.creation_timestamp()), now));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Row> NamespaceRows(const std::vector<api::Namespace>& namespaces,
                               absl::Time now) {
  std::vector<Row> rows = {{"NAME", "STATUS", "AGE"}};
  for (const api::Namespace& ns : namespaces) {
    rows.push_back(
        {ns.metadata().name(), "Active",
         FormatAge(ToTime(ns.metadata().creation_timestamp()), now)});
  }
  return rows;
}

std::vector<Row> SecretRows(const std::vector<api::Secret>& secrets,
                            absl::Time now) {
  std::vector<Row> rows = {{"NAME", "TYPE", "DATA", "AGE"}};
  for (const api::Secret& secret : secrets) {
    rows.push_back(
        {secret.metadata().name(), secret.type(),
         absl::StrCat(secret.data_size()),
         FormatAge(ToTime(secret.metadata().creation_timestamp()), now)});
  }
  return rows;
}

std::vector<Row> ConfigMapRows(const std::vector<api::ConfigMap>& config_maps,
                               absl::Time now) {
  std::vector<Row> rows = {{"NAME", "DATA", "AGE"}};
  for (const api::ConfigMap& cm : config_maps) {
    rows.push_back(
        {cm.metadata().name(),
         absl::StrCat(cm.data_size() + cm.binary_data_size()),
         FormatAge(ToTime(cm.metadata().creation_timestamp()), now)});
  }
  return rows;
}

std::vector<Row> EventRows(const std::vector<api::Event>& events,
                           absl::Time now) {
  std::vector<Row> rows = {
      {"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}};
  for (const api::Event& event : events) {
    absl::Time at = ToTime(event.event_time());
    if (at == absl::InfinitePast()) {
      at = ToTime(event.metadata().creation_timestamp());
    }
    rows.push_back({FormatAge(at, now), event.type(), event.reason(),
                    event.regarding(), event.note()});
  }
  return rows;
}

std::string ToJson(const google::protobuf::Message& message,
                   absl::string_view api_version, absl::string_view kind) {
  std::string json;
  AppendMessageJson(message, api_version, kind, 0, &json);
  json += "\n";
  return json;
}

std::string ToYaml(const google::protobuf::Message& message,
                   absl::string_view api_version, absl::string_view kind) {
  return Render(ObjectNode(message, api_version, kind), /*yaml=*/true);
}

std::string ToList(const std::vector<const google::protobuf::Message*>& items,
                   absl::string_view api_version, absl::string_view kind,
                   bool yaml) {
  if (!yaml) {
    // A list of a thousand JobSets is megabytes: written straight from
    // protobuf's JSON, not through a document (see JsonReformatter).
    std::string json = "{\n    \"apiVersion\": \"v1\",\n    \"items\": ";
    if (items.empty()) {
      json += "[]";
    } else {
      json += "[\n";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) json += ",\n";
        json += "        ";
        AppendMessageJson(*items[i], api_version, kind, 8, &json);
      }
      json += "\n    ]";
    }
    json += ",\n    \"kind\": \"List\"\n}\n";
    return json;
  }
  YAML::Node list(YAML::NodeType::Map);
  list["apiVersion"] = StringNode("v1");
  YAML::Node nodes(YAML::NodeType::Sequence);
  for (const google::protobuf::Message* item : items) {
    nodes.push_back(ObjectNode(*item, api_version, kind));
  }
  list["items"] = nodes;
  list["kind"] = StringNode("List");
  return Render(list, yaml);
}

std::string FormatJsonDocument(absl::string_view json, bool yaml) {
  return Render(YAML::Load(std::string(json)), yaml);
}

}  // namespace jobset::cli
