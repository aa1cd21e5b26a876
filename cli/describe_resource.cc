// describe of a custom resource (Kueue's objects), as kubectl's generic
// describer prints one: every field of its JSON form, keys sorted and named
// in words, laid out through a tabwriter.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/describe.h"
#include "cli/output.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace jobset::cli {
namespace {

// kubectl's annotations longer than this (with their key) are cut.
constexpr size_t kMaxAnnotationLength = 140;

// Display width: UTF-8 code points, as Go's tabwriter counts.
size_t Width(absl::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

using Cells = std::vector<std::vector<std::string>>;

void WriteLines(const Cells& lines, size_t line0, size_t line1,
                const std::vector<size_t>& widths, std::string* out) {
  for (size_t i = line0; i < line1; ++i) {
    std::string line;
    for (size_t j = 0; j < lines[i].size(); ++j) {
      line += lines[i][j];
      if (j < widths.size()) {
        const size_t w = Width(lines[i][j]);
        line.append(widths[j] > w ? widths[j] - w : 0, ' ');
      }
    }
    absl::StrAppend(out, line, "\n");
  }
}

// Go's text/tabwriter (padding 2, left-aligned, as kubectl describe's): a
// column's width is set by the run of adjacent lines that have a
// tab-terminated cell in it; a line with fewer cells ends the run.
void Format(const Cells& lines, size_t line0, size_t line1,
            std::vector<size_t>* widths, std::string* out) {
  const size_t column = widths->size();
  for (size_t i = line0; i < line1; ++i) {
    if (column + 1 >= lines[i].size()) continue;
    WriteLines(lines, line0, i, *widths, out);
    line0 = i;
    size_t width = 0;
    for (; i < line1 && column + 1 < lines[i].size(); ++i) {
      width = std::max(width, Width(lines[i][column]) + 2);
    }
    widths->push_back(width);
    Format(lines, line0, i, widths, out);
    widths->pop_back();
    line0 = i;
    if (i == line1) break;
  }
  WriteLines(lines, line0, line1, *widths, out);
}

// Lines with '\t' between cells, aligned.
std::string Tabulate(const std::vector<std::string>& lines) {
  Cells cells;
  cells.reserve(lines.size());
  for (const std::string& line : lines) {
    cells.push_back(absl::StrSplit(line, '\t'));
  }
  std::vector<size_t> widths;
  std::string out;
  Format(cells, 0, cells.size(), &widths, &out);
  return out;
}

enum class CharClass { kLower, kUpper, kDigit, kOther };

CharClass ClassOf(char c) {
  if (absl::ascii_islower(c)) return CharClass::kLower;
  if (absl::ascii_isupper(c)) return CharClass::kUpper;
  if (absl::ascii_isdigit(c)) return CharClass::kDigit;
  return CharClass::kOther;
}

// kubectl's label for a field: "nominalQuota" -> "Nominal Quota",
// "apiVersion" -> "API Version", "uid" -> "UID"; a key with characters
// other than letters and '-' ("nvidia.com/gpu") as it is.
std::string Label(absl::string_view field) {
  for (char c : field) {
    if (!absl::ascii_isalpha(c) && c != '-') return std::string(field);
  }
  // Runs of one character class; the last of an upper-case run before a
  // lower-case one starts that one ("HTTPServer" -> "HTTP", "Server").
  std::vector<std::string> parts;
  for (char c : field) {
    if (parts.empty() || ClassOf(parts.back().back()) != ClassOf(c)) {
      parts.emplace_back();
    }
    parts.back() += c;
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (ClassOf(parts[i][0]) == CharClass::kUpper &&
        ClassOf(parts[i + 1][0]) == CharClass::kLower) {
      parts[i + 1].insert(parts[i + 1].begin(), parts[i].back());
      parts[i].pop_back();
    }
  }
  std::vector<std::string> words;
  for (std::string& part : parts) {
    if (part.empty()) continue;
    const std::string upper = absl::AsciiStrToUpper(part);
    if (upper == "API" || upper == "URL" || upper == "UID" || upper == "OSB" ||
        upper == "GUID") {
      part = upper;
    } else {
      part[0] = absl::ascii_toupper(part[0]);
    }
    words.push_back(std::move(part));
  }
  return absl::StrJoin(words, " ");
}

std::string Scalar(const google::protobuf::Value& value) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kStringValue:
      return value.string_value();
    case google::protobuf::Value::kBoolValue:
      return value.bool_value() ? "true" : "false";
    case google::protobuf::Value::kNumberValue: {
      // Integers as Go prints a decoded JSON integer.
      const double d = value.number_value();
      if (std::trunc(d) == d && std::fabs(d) < 9.0e15) {
        return absl::StrCat(static_cast<int64_t>(d));
      }
      return absl::StrCat(d);
    }
    default:
      return "<nil>";
  }
}

std::string Indent(int level) { return std::string(2 * level, ' '); }

// kubectl's printUnstructuredContent: `content`'s fields in key order, a
// nested object's at the next level, a list's items one after another.
// `path` is the JSONPath of `content` (".metadata"); paths in `skip` are
// left out.
void Content(const google::protobuf::Struct& content, int level,
             const std::string& path, const std::vector<std::string>& skip,
             std::vector<std::string>* lines) {
  std::vector<std::string> keys;
  for (const auto& [key, unused] : content.fields()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) {
    const std::string here = absl::StrCat(path, ".", key);
    if (std::find(skip.begin(), skip.end(), here) != skip.end()) continue;
    const google::protobuf::Value& value = content.fields().at(key);
    if (value.has_struct_value()) {
      lines->push_back(absl::StrCat(Indent(level), Label(key), ":"));
      Content(value.struct_value(), level + 1, here, skip, lines);
    } else if (value.has_list_value()) {
      lines->push_back(absl::StrCat(Indent(level), Label(key), ":"));
      for (const google::protobuf::Value& item : value.list_value().values()) {
        if (item.has_struct_value()) {
          Content(item.struct_value(), level + 1, here, skip, lines);
        } else {
          lines->push_back(absl::StrCat(Indent(level + 1), Scalar(item)));
        }
      }
    } else {
      lines->push_back(
          absl::StrCat(Indent(level), Label(key), ":\t", Scalar(value)));
    }
  }
}

void Labels(const google::protobuf::Map<std::string, std::string>& labels,
            std::vector<std::string>* lines) {
  if (labels.empty()) {
    lines->push_back("Labels:\t<none>");
    return;
  }
  std::vector<std::pair<std::string, std::string>> sorted(labels.begin(),
                                                          labels.end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    lines->push_back(absl::StrCat(i == 0 ? "Labels:" : "", "\t",
                                  sorted[i].first, "=", sorted[i].second));
  }
}

// kubectl's annotations: "key: value", or a long or multi-line value under
// its key, each line cut at 138 characters.
void Annotations(
    const google::protobuf::Map<std::string, std::string>& annotations,
    std::vector<std::string>* lines) {
  if (annotations.empty()) {
    lines->push_back("Annotations:\t<none>");
    return;
  }
  std::vector<std::pair<std::string, std::string>> sorted(annotations.begin(),
                                                          annotations.end());
  std::sort(sorted.begin(), sorted.end());
  bool first = true;
  for (auto& [key, value] : sorted) {
    const std::string title = first ? "Annotations:\t" : "\t";
    first = false;
    absl::string_view v = value;
    absl::ConsumeSuffix(&v, "\n");
    if (v.size() + key.size() + 2 <= kMaxAnnotationLength &&
        v.find('\n') == absl::string_view::npos) {
      lines->push_back(absl::StrCat(title, key, ": ", v));
      continue;
    }
    lines->push_back(absl::StrCat(title, key, ":"));
    for (absl::string_view part : absl::StrSplit(v, '\n')) {
      std::string cut(part.substr(0, kMaxAnnotationLength - 2));
      if (part.size() > kMaxAnnotationLength - 2) cut += "...";
      lines->push_back(absl::StrCat("  ", cut));
    }
  }
}

}  // namespace

std::string DescribeResource(const google::protobuf::Message& object,
                             absl::string_view api_version,
                             absl::string_view kind,
                             const std::vector<api::Event>* events,
                             absl::Time now,
                             const std::vector<std::string>& extra_lines) {
  google::protobuf::Struct content;
  // ToJson writes JSON: it parses.
  (void)google::protobuf::util::JsonStringToMessage(
      ToJson(object, api_version, kind), &content);
  google::protobuf::Struct meta;
  if (auto it = content.fields().find("metadata");
      it != content.fields().end() && it->second.has_struct_value()) {
    meta = it->second.struct_value();
  }
  auto text = [&](const char* key) {
    auto it = meta.fields().find(key);
    return it == meta.fields().end() ? std::string() : Scalar(it->second);
  };
  auto map = [&](const char* key) {
    google::protobuf::Map<std::string, std::string> out;
    auto it = meta.fields().find(key);
    if (it == meta.fields().end() || !it->second.has_struct_value()) {
      return out;
    }
    for (const auto& [k, v] : it->second.struct_value().fields()) {
      out[k] = Scalar(v);
    }
    return out;
  };
  std::vector<std::string> lines = {
      absl::StrCat("Name:\t", text("name")),
      absl::StrCat("Namespace:\t", text("namespace"))};
  Labels(map("labels"), &lines);
  Annotations(map("annotations"), &lines);
  Content(content, 0, "",
          {".metadata.name", ".metadata.namespace", ".metadata.labels",
           ".metadata.annotations"},
          &lines);
  lines.insert(lines.end(), extra_lines.begin(), extra_lines.end());
  if (events != nullptr) {
    if (events->empty()) {
      lines.push_back("Events:\t<none>");
    } else {
      lines.push_back("Events:");
      lines.push_back("  Type\tReason\tAge\tFrom\tMessage");
      lines.push_back("  ----\t------\t----\t----\t-------");
      for (const api::Event& e : *events) {
        absl::Time at = ToTime(e.event_time());
        if (at == absl::InfinitePast()) {
          at = ToTime(e.metadata().creation_timestamp());
        }
        lines.push_back(absl::StrCat("  ", e.type(), "\t", e.reason(), "\t",
                                     FormatAge(at, now), "\tjobsetd\t",
                                     absl::StripAsciiWhitespace(e.note())));
      }
    }
  }
  return Tabulate(lines);
}

}  // namespace jobset::cli
