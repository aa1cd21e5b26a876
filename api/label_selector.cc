#include "api/label_selector.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "api/names.h"

namespace jobset::api {
namespace {

using Operator = LabelSelector::Operator;
using Requirement = LabelSelector::Requirement;

// The tokens of k8s.io/apimachinery/pkg/labels' lexer.
enum class TokenKind {
  kEnd,
  kIdentifier,
  kIn,     // "in"
  kNotIn,  // "notin"
  kNot,    // "!"
  kEquals,
  kDoubleEquals,
  kNotEquals,
  kOpenParen,
  kCloseParen,
  kComma,
  kGreaterThan,
  kLessThan,
};

struct Token {
  TokenKind kind;
  absl::string_view text;
  size_t offset;
};

bool IsWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool IsSpecialSymbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

// Splits `selector` into tokens, always ending with kEnd. As in Kubernetes,
// an identifier is any run of characters that are neither whitespace nor
// special symbols; the key and value checks reject what does not belong.
std::vector<Token> Lex(absl::string_view selector) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (true) {
    while (i < selector.size() && IsWhitespace(selector[i])) ++i;
    if (i == selector.size()) break;
    const size_t start = i;
    const char c = selector[i];
    TokenKind kind;
    if (IsSpecialSymbol(c)) {
      const bool equals_next =
          i + 1 < selector.size() && selector[i + 1] == '=';
      switch (c) {
        case '=':
          kind = equals_next ? TokenKind::kDoubleEquals : TokenKind::kEquals;
          i += equals_next ? 2 : 1;
          break;
        case '!':
          kind = equals_next ? TokenKind::kNotEquals : TokenKind::kNot;
          i += equals_next ? 2 : 1;
          break;
        case '(':
          kind = TokenKind::kOpenParen;
          ++i;
          break;
        case ')':
          kind = TokenKind::kCloseParen;
          ++i;
          break;
        case ',':
          kind = TokenKind::kComma;
          ++i;
          break;
        case '>':
          kind = TokenKind::kGreaterThan;
          ++i;
          break;
        default:
          kind = TokenKind::kLessThan;
          ++i;
          break;
      }
    } else {
      while (i < selector.size() && !IsWhitespace(selector[i]) &&
             !IsSpecialSymbol(selector[i])) {
        ++i;
      }
      const absl::string_view word = selector.substr(start, i - start);
      kind = word == "in"      ? TokenKind::kIn
             : word == "notin" ? TokenKind::kNotIn
                               : TokenKind::kIdentifier;
    }
    tokens.push_back({kind, selector.substr(start, i - start), start});
  }
  tokens.push_back({TokenKind::kEnd, "", selector.size()});
  return tokens;
}

// Returns whether `token` can stand where a value is expected: there "in" and
// "notin" are plain words, as in Kubernetes' parser.
bool IsValueWord(const Token& token) {
  return token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kIn ||
         token.kind == TokenKind::kNotIn;
}

// Describes a token for an error message: `"("` or `end of string`.
std::string Describe(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of string";
  return absl::StrCat("\"", absl::CHexEscape(token.text), "\"");
}

class Parser {
 public:
  explicit Parser(absl::string_view selector)
      : selector_(selector), tokens_(Lex(selector)) {}

  absl::StatusOr<std::vector<Requirement>> Parse() {
    std::vector<Requirement> requirements;
    if (Peek().kind == TokenKind::kEnd) return requirements;
    while (true) {
      absl::StatusOr<Requirement> requirement = ParseRequirement();
      if (!requirement.ok()) return requirement.status();
      requirements.push_back(*std::move(requirement));
      const Token& token = Next();
      if (token.kind == TokenKind::kEnd) break;
      if (token.kind != TokenKind::kComma) {
        return Error(token, absl::StrCat("expected \",\" or end of string but "
                                         "found ",
                                         Describe(token)));
      }
      // A trailing comma is an error, as in Kubernetes.
      if (Peek().kind == TokenKind::kEnd) {
        return Error(Peek(),
                     "expected a requirement after \",\" but found "
                     "end of string");
      }
    }
    return requirements;
  }

 private:
  const Token& Peek() const { return tokens_[next_]; }
  // Returns the next token and moves past it; kEnd repeats forever.
  const Token& Next() {
    const Token& token = tokens_[next_];
    if (token.kind != TokenKind::kEnd) ++next_;
    return token;
  }

  // `label selector "<selector>": <what> at offset <n>[: <detail>]`.
  absl::Status Error(const Token& at, absl::string_view what,
                     absl::string_view detail = "") const {
    return absl::InvalidArgumentError(absl::StrCat(
        "label selector \"", absl::CHexEscape(selector_), "\": ", what,
        " at offset ", at.offset, detail.empty() ? "" : ": ", detail));
  }

  absl::Status CheckKey(const Token& token) const {
    std::vector<std::string> problems = IsQualifiedName(token.text);
    if (problems.empty()) return absl::OkStatus();
    return Error(token, absl::StrCat("invalid key ", Describe(token)),
                 absl::StrJoin(problems, "; "));
  }

  absl::Status CheckValue(const Token& token, absl::string_view key) const {
    std::vector<std::string> problems = IsValidLabelValue(token.text);
    if (problems.empty()) return absl::OkStatus();
    return Error(token,
                 absl::StrCat("invalid value ", Describe(token), " for key \"",
                              key, "\""),
                 absl::StrJoin(problems, "; "));
  }

  absl::StatusOr<Requirement> ParseRequirement() {
    const Token& first = Next();
    if (first.kind == TokenKind::kNot) {
      const Token& key = Next();
      if (key.kind != TokenKind::kIdentifier) {
        return Error(key, absl::StrCat("expected a key after \"!\" but found ",
                                       Describe(key)));
      }
      if (absl::Status status = CheckKey(key); !status.ok()) return status;
      return Requirement{std::string(key.text), Operator::kDoesNotExist, {}};
    }
    if (first.kind != TokenKind::kIdentifier) {
      return Error(first, absl::StrCat("expected a key or \"!\" but found ",
                                       Describe(first)));
    }
    if (absl::Status status = CheckKey(first); !status.ok()) return status;
    Requirement requirement{std::string(first.text), Operator::kExists, {}};

    const Token& op = Peek();
    switch (op.kind) {
      case TokenKind::kEnd:
      case TokenKind::kComma:
        return requirement;
      case TokenKind::kEquals:
      case TokenKind::kDoubleEquals:
      case TokenKind::kNotEquals: {
        Next();
        requirement.op = op.kind == TokenKind::kNotEquals ? Operator::kNotEquals
                                                          : Operator::kEquals;
        absl::StatusOr<std::string> value = ParseExactValue(requirement.key);
        if (!value.ok()) return value.status();
        requirement.values.push_back(*std::move(value));
        return requirement;
      }
      case TokenKind::kIn:
      case TokenKind::kNotIn: {
        Next();
        requirement.op =
            op.kind == TokenKind::kIn ? Operator::kIn : Operator::kNotIn;
        absl::StatusOr<std::vector<std::string>> values =
            ParseValueList(op, requirement.key);
        if (!values.ok()) return values.status();
        requirement.values = *std::move(values);
        return requirement;
      }
      case TokenKind::kGreaterThan:
      case TokenKind::kLessThan:
        return Error(
            op, absl::StrCat("operator ", Describe(op), " is not supported"));
      default:
        return Error(
            op, absl::StrCat("expected an operator (=, ==, !=, in, "
                             "notin), \",\" or end of string after "
                             "key \"",
                             requirement.key, "\" but found ", Describe(op)));
    }
  }

  // Parses the value after "=", "==" or "!=". Nothing before "," or the end
  // is the empty value.
  absl::StatusOr<std::string> ParseExactValue(absl::string_view key) {
    const Token& token = Peek();
    if (token.kind == TokenKind::kEnd || token.kind == TokenKind::kComma) {
      return std::string();
    }
    Next();
    if (!IsValueWord(token)) {
      return Error(token, absl::StrCat("expected a value for key \"", key,
                                       "\" but found ", Describe(token)));
    }
    if (absl::Status status = CheckValue(token, key); !status.ok()) {
      return status;
    }
    return std::string(token.text);
  }

  // Parses "(v1,v2,...)" after `op` ("in" or "notin"). An empty entry
  // between commas, or before a trailing one, is the empty value, as in
  // Kubernetes; "()" is an error.
  absl::StatusOr<std::vector<std::string>> ParseValueList(
      const Token& op, absl::string_view key) {
    const Token& open = Next();
    if (open.kind != TokenKind::kOpenParen) {
      return Error(open, absl::StrCat("expected \"(\" after ", Describe(op),
                                      " but found ", Describe(open)));
    }
    std::vector<std::string> values;
    bool expect_value = true;
    while (true) {
      const Token& token = Next();
      if (token.kind == TokenKind::kEnd) {
        return Error(token, "missing \")\"");
      }
      if (expect_value && IsValueWord(token)) {
        if (absl::Status status = CheckValue(token, key); !status.ok()) {
          return status;
        }
        values.emplace_back(token.text);
        expect_value = false;
      } else if (token.kind == TokenKind::kComma) {
        if (expect_value) values.emplace_back();
        expect_value = true;
      } else if (token.kind == TokenKind::kCloseParen) {
        if (values.empty()) {
          return Error(open,
                       absl::StrCat(Describe(op), " needs at least one value"));
        }
        // "(a,)": the entry after the last comma is empty.
        if (expect_value) values.emplace_back();
        break;
      } else {
        return Error(
            token,
            absl::StrCat(expect_value ? "expected a value, " : "expected ",
                         "\",\" or \")\" but found ", Describe(token)));
      }
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
  }

  absl::string_view selector_;
  std::vector<Token> tokens_;
  size_t next_ = 0;
};

// Joins the values of an "in" or "notin" list. A list of only the empty
// value is written ",", because Parse rejects "()".
std::string JoinValueList(const std::vector<std::string>& values) {
  if (values.size() == 1 && values.front().empty()) return ",";
  return absl::StrJoin(values, ",");
}

}  // namespace

bool LabelSelector::Requirement::Matches(
    const google::protobuf::Map<std::string, std::string>& labels) const {
  const auto it = labels.find(key);
  const bool present = it != labels.end();
  const auto listed = [&] {
    return std::binary_search(values.begin(), values.end(), it->second);
  };
  switch (op) {
    case Operator::kEquals:
    case Operator::kIn:
      return present && listed();
    case Operator::kNotEquals:
    case Operator::kNotIn:
      return !present || !listed();
    case Operator::kExists:
      return present;
    case Operator::kDoesNotExist:
      return !present;
  }
  return false;
}

std::string LabelSelector::Requirement::ToString() const {
  switch (op) {
    case Operator::kEquals:
      return absl::StrCat(key, "=", values.empty() ? "" : values.front());
    case Operator::kNotEquals:
      return absl::StrCat(key, "!=", values.empty() ? "" : values.front());
    case Operator::kIn:
      return absl::StrCat(key, " in (", JoinValueList(values), ")");
    case Operator::kNotIn:
      return absl::StrCat(key, " notin (", JoinValueList(values), ")");
    case Operator::kExists:
      return key;
    case Operator::kDoesNotExist:
      return absl::StrCat("!", key);
  }
  return key;
}

absl::StatusOr<LabelSelector> LabelSelector::Parse(absl::string_view selector) {
  absl::StatusOr<std::vector<Requirement>> requirements =
      Parser(selector).Parse();
  if (!requirements.ok()) return requirements.status();
  // Kubernetes orders requirements by key; the order does not change what
  // matches, and it makes ToString canonical.
  std::stable_sort(
      requirements->begin(), requirements->end(),
      [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return LabelSelector(*std::move(requirements));
}

bool LabelSelector::Matches(
    const google::protobuf::Map<std::string, std::string>& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return r.Matches(labels); });
}

std::string LabelSelector::ToString() const {
  return absl::StrJoin(requirements_, ",",
                       [](std::string* out, const Requirement& r) {
                         out->append(r.ToString());
                       });
}

}  // namespace jobset::api
