#include "cli/jsonpath.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/json_quote.h"
#include "common/quote.h"
#include "google/protobuf/util/json_util.h"

namespace jobset::cli {
namespace jsonpath_internal {

using ::google::protobuf::Value;

struct Filter;

// One index or slice of `[...]`.
struct ArrayParam {
  bool slice = false;
  std::optional<int64_t> start, end;
  int64_t step = 1;
};

struct Step {
  enum class Kind { kField, kWildcard, kRecursive, kArray, kFilter };
  Kind kind = Kind::kField;
  std::vector<std::string> names;        // kField: one, or a union of names.
  std::vector<ArrayParam> params;        // kArray: a union of indices/slices.
  std::shared_ptr<const Filter> filter;  // kFilter.
};

struct Path {
  bool from_root = false;  // `$`; else the current value (`@`, `.`).
  std::vector<Step> steps;
};

struct Operand {
  std::optional<Path> path;  // Else `literal`.
  Value literal;
};

struct Filter {
  Operand left;
  std::string op;  // Empty: whether `left` exists.
  Operand right;
};

struct Node {
  enum class Kind { kText, kPath, kRange };
  Kind kind = Kind::kText;
  std::string text;
  Path path;
  std::vector<Node> body;  // kRange.
};

}  // namespace jsonpath_internal

namespace {

using ::google::protobuf::Value;
using jsonpath_internal::ArrayParam;
using jsonpath_internal::Filter;
using jsonpath_internal::Node;
using jsonpath_internal::Operand;
using jsonpath_internal::Path;
using jsonpath_internal::Step;

absl::Status ParseError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

std::string Rune(char c) {
  return absl::StrFormat("U+%04X '%c'", static_cast<unsigned char>(c), c);
}

bool IsNameEnd(char c) {
  return absl::ascii_isspace(static_cast<unsigned char>(c)) || c == '.' ||
         c == '[' || c == ']' || c == '{' || c == '}' || c == '(' || c == ')' ||
         c == ',' || c == '=' || c == '!' || c == '<' || c == '>';
}

// A cursor over the template.
class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<Node>> ParseTemplate() {
    // Flat first; `range` ... `end` are nested below.
    std::vector<Node> flat;
    std::vector<int> kinds;  // 0 node, 1 range start, 2 end.
    while (pos_ < text_.size()) {
      const size_t open = text_.find('{', pos_);
      if (open != pos_) {
        Node text;
        text.text = std::string(text_.substr(
            pos_, open == absl::string_view::npos ? absl::string_view::npos
                                                  : open - pos_));
        flat.push_back(std::move(text));
        kinds.push_back(0);
        if (open == absl::string_view::npos) break;
      }
      pos_ = open + 1;
      SkipSpace();
      if (Keyword("end")) {
        SkipSpace();
        if (!Consume('}')) return Unrecognized();
        flat.emplace_back();
        kinds.push_back(2);
        continue;
      }
      const bool range = Keyword("range");
      SkipSpace();
      Node node;
      if (!range && Peek() == '"') {
        absl::StatusOr<std::string> quoted = Quoted('"');
        if (!quoted.ok()) return quoted.status();
        node.text = *std::move(quoted);
      } else {
        absl::StatusOr<Path> path = ParsePath();
        if (!path.ok()) return path.status();
        node.kind = range ? Node::Kind::kRange : Node::Kind::kPath;
        node.path = *std::move(path);
      }
      SkipSpace();
      if (pos_ >= text_.size()) return ParseError("unclosed action");
      if (!Consume('}')) return Unrecognized();
      flat.push_back(std::move(node));
      kinds.push_back(range ? 1 : 0);
    }
    std::vector<std::vector<Node>> stack(1);
    for (size_t i = 0; i < flat.size(); ++i) {
      if (kinds[i] == 2) {
        if (stack.size() == 1) {
          return ParseError("not in range, nothing to end");
        }
        std::vector<Node> body = std::move(stack.back());
        stack.pop_back();
        stack.back().back().body = std::move(body);
      } else {
        stack.back().push_back(std::move(flat[i]));
        if (kinds[i] == 1) stack.emplace_back();
      }
    }
    if (stack.size() != 1) return ParseError("unclosed range, expect {end}");
    return std::move(stack[0]);
  }

  // A path: [$|@] then steps. Stops before anything a step cannot start
  // with.
  absl::StatusOr<Path> ParsePath() {
    Path path;
    if (Consume('$')) {
      path.from_root = true;
    } else {
      Consume('@');
    }
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '.') {
        ++pos_;
        if (Consume('.')) {
          path.steps.push_back({Step::Kind::kRecursive, {}, {}, nullptr});
          if (Peek() == '[') continue;
        }
        if (Consume('*')) {
          path.steps.push_back({Step::Kind::kWildcard, {}, {}, nullptr});
          continue;
        }
        std::string name = Name();
        if (name.empty()) {
          if (!path.steps.empty() &&
              path.steps.back().kind == Step::Kind::kRecursive) {
            return ParseError("invalid recursive descent: expect a name");
          }
          continue;  // `{.}`: the current value.
        }
        Step step;
        step.names.push_back(std::move(name));
        path.steps.push_back(std::move(step));
      } else if (c == '[') {
        ++pos_;
        absl::StatusOr<Step> step = Bracket();
        if (!step.ok()) return step.status();
        path.steps.push_back(*std::move(step));
      } else {
        break;
      }
    }
    return path;
  }

  size_t pos() const { return pos_; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }

  bool ConsumeString(absl::string_view s) {
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }

  absl::Status Unrecognized() const {
    if (pos_ >= text_.size()) return ParseError("unclosed action");
    return ParseError(
        absl::StrCat("unrecognized character in action: ", Rune(text_[pos_])));
  }

  // A quoted string with Go's escapes (\t \n \r \\ \" \').
  absl::StatusOr<std::string> Quoted(char quote) {
    if (!Consume(quote)) return Unrecognized();
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == quote) return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case 't':
          out.push_back('\t');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case '\\':
        case '"':
        case '\'':
          out.push_back(e);
          break;
        default:
          return ParseError(absl::StrCat("invalid escape \\", std::string(1, e),
                                         " in a quoted string"));
      }
    }
    return ParseError("unterminated quoted string");
  }

 private:
  bool Keyword(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    const size_t after = pos_ + word.size();
    if (after < text_.size() && !IsNameEnd(text_[after])) return false;
    pos_ = after;
    return true;
  }

  // A field name; `\.` stands for a dot in it.
  std::string Name() {
    std::string name;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '.') {
        name.push_back('.');
        pos_ += 2;
        continue;
      }
      if (IsNameEnd(c) || c == '"' || c == '\'' || c == '$' || c == '@') {
        break;
      }
      name.push_back(c);
      ++pos_;
    }
    return name;
  }

  // After `[`: `*]`, `?(filter)]`, `'name'(, 'name')*]`, or indices and
  // slices separated by commas.
  absl::StatusOr<Step> Bracket() {
    SkipSpace();
    Step step;
    if (Consume('*')) {
      SkipSpace();
      if (!Consume(']')) return ParseError("unclosed array expect ]");
      step.kind = Step::Kind::kWildcard;
      return step;
    }
    if (ConsumeString("?(")) {
      // Filters nest (`[?(@.a[?(@.b)])]`); a bound keeps a hostile template
      // from exhausting the stack.
      if (++filter_depth_ > kMaxFilterDepth) {
        return ParseError("filters nested too deeply");
      }
      absl::StatusOr<Filter> filter = ParseFilter();
      --filter_depth_;
      if (!filter.ok()) return filter.status();
      SkipSpace();
      if (!Consume(']')) return ParseError("unclosed array expect ]");
      step.kind = Step::Kind::kFilter;
      step.filter = std::make_shared<const Filter>(*std::move(filter));
      return step;
    }
    if (Peek() == '\'' || Peek() == '"') {
      while (true) {
        absl::StatusOr<std::string> name = Quoted(Peek());
        if (!name.ok()) return name.status();
        step.names.push_back(*std::move(name));
        SkipSpace();
        if (Consume(']')) return step;
        if (!Consume(',')) return ParseError("unclosed array expect ]");
        SkipSpace();
        if (Peek() != '\'' && Peek() != '"') {
          return ParseError("invalid union: expect a quoted name");
        }
      }
    }
    step.kind = Step::Kind::kArray;
    const size_t close = text_.find(']', pos_);
    if (close == absl::string_view::npos) {
      return ParseError("unclosed array expect ]");
    }
    const absl::string_view inside = text_.substr(pos_, close - pos_);
    pos_ = close + 1;
    for (absl::string_view part : absl::StrSplit(inside, ',')) {
      absl::StatusOr<ArrayParam> param = ParseArrayParam(part);
      if (!param.ok()) return param.status();
      step.params.push_back(*param);
    }
    return step;
  }

  static absl::StatusOr<ArrayParam> ParseArrayParam(absl::string_view text) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
    std::vector<absl::string_view> parts = absl::StrSplit(trimmed, ':');
    auto invalid = [&] {
      return ParseError(absl::StrCat("invalid array index ", trimmed));
    };
    if (trimmed.empty() || parts.size() > 3) return invalid();
    ArrayParam param;
    param.slice = parts.size() > 1;
    std::vector<std::optional<int64_t>> values;
    for (absl::string_view part : parts) {
      part = absl::StripAsciiWhitespace(part);
      if (part.empty()) {
        values.push_back(std::nullopt);
        continue;
      }
      int64_t v;
      if (!absl::SimpleAtoi(part, &v)) return invalid();
      values.push_back(v);
    }
    param.start = values[0];
    if (!param.slice && !param.start.has_value()) return invalid();
    if (values.size() > 1) param.end = values[1];
    if (values.size() > 2 && values[2].has_value()) {
      if (*values[2] <= 0) return invalid();
      param.step = *values[2];
    }
    return param;
  }

  // After `?(`: OPERAND [OP OPERAND] `)`.
  absl::StatusOr<Filter> ParseFilter() {
    Filter filter;
    SkipSpace();
    absl::StatusOr<Operand> left = ParseOperand();
    if (!left.ok()) return left.status();
    filter.left = *std::move(left);
    SkipSpace();
    for (absl::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (ConsumeString(op)) {
        filter.op = std::string(op);
        break;
      }
    }
    if (filter.op.empty() && Consume('=')) filter.op = "==";  // kubectl too.
    if (!filter.op.empty()) {
      SkipSpace();
      absl::StatusOr<Operand> right = ParseOperand();
      if (!right.ok()) return right.status();
      filter.right = *std::move(right);
      SkipSpace();
    }
    if (!Consume(')')) {
      if (AtEnd()) return ParseError("unterminated filter");
      return ParseError(
          absl::StrCat("unrecognized character in filter: ", Rune(Peek())));
    }
    return filter;
  }

  absl::StatusOr<Operand> ParseOperand() {
    Operand operand;
    const char c = Peek();
    if (c == '@' || c == '$') {
      absl::StatusOr<Path> path = ParsePath();
      if (!path.ok()) return path.status();
      operand.path = *std::move(path);
      return operand;
    }
    if (c == '"' || c == '\'') {
      absl::StatusOr<std::string> s = Quoted(c);
      if (!s.ok()) return s.status();
      operand.literal.set_string_value(*std::move(s));
      return operand;
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && !IsNameEnd(text_[pos_])) ++pos_;
    const absl::string_view word = text_.substr(start, pos_ - start);
    double number;
    if (word == "true" || word == "false") {
      operand.literal.set_bool_value(word == "true");
    } else if (word == "null") {
      operand.literal.set_null_value(google::protobuf::NULL_VALUE);
    } else if (!word.empty() && absl::SimpleAtod(word, &number)) {
      operand.literal.set_number_value(number);
    } else if (AtEnd()) {
      return ParseError("unterminated filter");
    } else {
      return ParseError(absl::StrCat("unrecognized filter operand ",
                                     Quote(word),
                                     " (use @.path, a quoted string, a "
                                     "number, true or false)"));
    }
    return operand;
  }

  static constexpr int kMaxFilterDepth = 32;

  absl::string_view text_;
  size_t pos_ = 0;
  int filter_depth_ = 0;
};

using Results = std::vector<const Value*>;

// An object's values in the order of their keys (kubectl's order).
Results SortedFields(const Value& value) {
  std::vector<const std::string*> keys;
  for (const auto& [key, v] : value.struct_value().fields()) {
    keys.push_back(&key);
  }
  std::sort(keys.begin(), keys.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  Results out;
  for (const std::string* key : keys) {
    out.push_back(&value.struct_value().fields().at(*key));
  }
  return out;
}

void Descendants(const Value* value, Results* out) {
  out->push_back(value);
  if (value->has_list_value()) {
    for (const Value& v : value->list_value().values()) Descendants(&v, out);
  } else if (value->has_struct_value()) {
    for (const Value* v : SortedFields(*value)) Descendants(v, out);
  }
}

std::string Kind(const Value& value) {
  switch (value.kind_case()) {
    case Value::kStructValue:
      return "an object";
    case Value::kStringValue:
      return absl::StrCat("the string ", Quote(value.string_value()));
    case Value::kNumberValue:
      return "a number";
    case Value::kBoolValue:
      return "a bool";
    default:
      return "null";
  }
}

class Evaluator {
 public:
  explicit Evaluator(const Value& root) : root_(root) {}

  absl::StatusOr<Results> Eval(const Path& path, const Value* current) const {
    Results results = {path.from_root ? &root_ : current};
    for (const Step& step : path.steps) {
      Results next;
      for (const Value* value : results) {
        if (absl::Status s = Apply(step, value, &next); !s.ok()) return s;
      }
      results = std::move(next);
    }
    return results;
  }

  absl::Status Run(const std::vector<Node>& nodes, const Value* current,
                   std::string* out) const {
    for (const Node& node : nodes) {
      if (node.kind == Node::Kind::kText) {
        absl::StrAppend(out, node.text);
        continue;
      }
      absl::StatusOr<Results> results = Eval(node.path, current);
      if (!results.ok()) return results.status();
      if (node.kind == Node::Kind::kRange) {
        for (const Value* value : *results) {
          if (absl::Status s = Run(node.body, value, out); !s.ok()) return s;
        }
        continue;
      }
      for (size_t i = 0; i < results->size(); ++i) {
        if (i > 0) absl::StrAppend(out, " ");
        const Value& value = *(*results)[i];
        if (value.has_string_value()) {
          absl::StrAppend(out, value.string_value());
        } else {
          AppendJson(value, out);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Apply(const Step& step, const Value* value, Results* out) const {
    switch (step.kind) {
      case Step::Kind::kField:
        if (value->has_struct_value()) {
          const auto& fields = value->struct_value().fields();
          for (const std::string& name : step.names) {
            auto it = fields.find(name);
            // A missing key prints nothing (kubectl allows missing keys).
            if (it != fields.end()) out->push_back(&it->second);
          }
        }
        return absl::OkStatus();
      case Step::Kind::kWildcard:
        if (value->has_list_value()) {
          for (const Value& v : value->list_value().values()) {
            out->push_back(&v);
          }
        } else if (value->has_struct_value()) {
          for (const Value* v : SortedFields(*value)) out->push_back(v);
        }
        return absl::OkStatus();
      case Step::Kind::kRecursive:
        Descendants(value, out);
        return absl::OkStatus();
      case Step::Kind::kArray:
        return Index(step, value, out);
      case Step::Kind::kFilter:
        return FilterArray(*step.filter, value, out);
    }
    return absl::OkStatus();
  }

  static absl::Status Index(const Step& step, const Value* value,
                            Results* out) {
    if (value->has_null_value()) return absl::OkStatus();
    if (!value->has_list_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Kind(*value), " is not array or slice"));
    }
    const auto& values = value->list_value().values();
    const int64_t length = values.size();
    for (const ArrayParam& param : step.params) {
      if (!param.slice) {
        int64_t i = *param.start;
        if (i < 0) i += length;
        if (i < 0 || i >= length) {
          return absl::InvalidArgumentError(
              absl::StrCat("array index out of bounds: index ", *param.start,
                           ", length ", length));
        }
        out->push_back(&values[i]);
        continue;
      }
      auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
        if (!v.has_value()) return fallback;
        int64_t i = *v < 0 ? *v + length : *v;
        return std::clamp<int64_t>(i, 0, length);
      };
      const int64_t start = clamp(param.start, 0);
      const int64_t end = clamp(param.end, length);
      for (int64_t i = start; i < end; i += param.step) {
        out->push_back(&values[i]);
      }
    }
    return absl::OkStatus();
  }

  absl::Status FilterArray(const Filter& filter, const Value* value,
                           Results* out) const {
    if (value->has_null_value()) return absl::OkStatus();
    if (!value->has_list_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          Kind(*value), " is not array or slice and cannot be filtered"));
    }
    for (const Value& element : value->list_value().values()) {
      absl::StatusOr<bool> keep = Matches(filter, &element);
      if (!keep.ok()) return keep.status();
      if (*keep) out->push_back(&element);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<bool> Matches(const Filter& filter,
                               const Value* element) const {
    absl::StatusOr<Results> left = Resolve(filter.left, element);
    if (!left.ok()) return left.status();
    if (filter.op.empty()) return !left->empty();
    absl::StatusOr<Results> right = Resolve(filter.right, element);
    if (!right.ok()) return right.status();
    if (left->empty() || right->empty()) return false;
    const Value& a = *left->front();
    const Value& b = *right->front();
    int order;  // -1, 0, 1; 2 when the two do not compare.
    if (a.has_number_value() && b.has_number_value()) {
      order = a.number_value() < b.number_value()   ? -1
              : a.number_value() > b.number_value() ? 1
                                                    : 0;
    } else if (a.has_string_value() && b.has_string_value()) {
      const int c = a.string_value().compare(b.string_value());
      order = c < 0 ? -1 : c > 0 ? 1 : 0;
    } else if (a.has_bool_value() && b.has_bool_value()) {
      order = a.bool_value() == b.bool_value() ? 0 : 2;
    } else if (a.has_null_value() && b.has_null_value()) {
      order = 0;
    } else {
      order = 2;
    }
    const std::string& op = filter.op;
    if (op == "==") return order == 0;
    if (op == "!=") return order != 0;
    if (order == 2) return false;
    if (op == "<") return order < 0;
    if (op == "<=") return order <= 0;
    if (op == ">") return order > 0;
    return order >= 0;
  }

  absl::StatusOr<Results> Resolve(const Operand& operand,
                                  const Value* element) const {
    if (operand.path.has_value()) return Eval(*operand.path, element);
    return Results{&operand.literal};
  }

  static void AppendJson(const Value& value, std::string* out) {
    switch (value.kind_case()) {
      case Value::kStringValue:
        absl::StrAppend(out, JsonQuote(value.string_value()));
        return;
      case Value::kNumberValue: {
        const double d = value.number_value();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) {
          absl::StrAppend(out, static_cast<int64_t>(d));
          return;
        }
        char buffer[64];
        auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), d);
        out->append(buffer, ec == std::errc() ? end - buffer : 0);
        return;
      }
      case Value::kBoolValue:
        absl::StrAppend(out, value.bool_value() ? "true" : "false");
        return;
      case Value::kListValue: {
        absl::StrAppend(out, "[");
        bool first = true;
        for (const Value& v : value.list_value().values()) {
          if (!first) absl::StrAppend(out, ",");
          first = false;
          AppendJson(v, out);
        }
        absl::StrAppend(out, "]");
        return;
      }
      case Value::kStructValue: {
        std::vector<std::string> keys;
        for (const auto& [key, v] : value.struct_value().fields()) {
          keys.push_back(key);
        }
        std::sort(keys.begin(), keys.end());
        absl::StrAppend(out, "{");
        for (size_t i = 0; i < keys.size(); ++i) {
          if (i > 0) absl::StrAppend(out, ",");
          absl::StrAppend(out, JsonQuote(keys[i]), ":");
          AppendJson(value.struct_value().fields().at(keys[i]), out);
        }
        absl::StrAppend(out, "}");
        return;
      }
      default:
        absl::StrAppend(out, "null");
        return;
    }
  }

  const Value& root_;
};

}  // namespace

absl::StatusOr<JsonPath> JsonPath::Parse(absl::string_view text) {
  Parser parser(text);
  absl::StatusOr<std::vector<Node>> nodes = parser.ParseTemplate();
  if (!nodes.ok()) return nodes.status();
  return JsonPath(std::make_shared<const std::vector<Node>>(*std::move(nodes)));
}

absl::StatusOr<std::string> JsonPath::Execute(const Value& data) const {
  std::string out;
  if (absl::Status s = Evaluator(data).Run(*nodes_, &data, &out); !s.ok()) {
    return s;
  }
  return out;
}

absl::StatusOr<Value> ParseJsonValue(absl::string_view json) {
  Value value;
  auto status =
      google::protobuf::util::JsonStringToMessage(std::string(json), &value);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not JSON: ", std::string(status.message())));
  }
  return value;
}

absl::StatusOr<std::string> RenderJsonPath(absl::string_view template_text,
                                           absl::string_view json) {
  absl::StatusOr<JsonPath> path = JsonPath::Parse(template_text);
  if (!path.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("error parsing jsonpath ",
                                                   template_text, ", ",
                                                   path.status().message()));
  }
  absl::StatusOr<Value> value = ParseJsonValue(json);
  if (!value.ok()) return value.status();
  absl::StatusOr<std::string> out = path->Execute(*value);
  if (!out.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("error executing jsonpath ",
                                                   Quote(template_text), ": ",
                                                   out.status().message()));
  }
  return out;
}

}  // namespace jobset::cli
