#include "cli/jsonpath_parser.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/quote.h"

namespace jobset::cli::jsonpath_internal {
namespace {

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

}  // namespace

absl::StatusOr<std::vector<Node>> ParseTemplate(absl::string_view text) {
  return Parser(text).ParseTemplate();
}

}  // namespace jobset::cli::jsonpath_internal
