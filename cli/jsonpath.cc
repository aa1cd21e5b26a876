#include "cli/jsonpath.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/jsonpath_parser.h"
#include "common/json_quote.h"
#include "common/quote.h"
#include "google/protobuf/util/json_util.h"

namespace jobset::cli {
namespace {

using ::google::protobuf::Value;
using jsonpath_internal::ArrayParam;
using jsonpath_internal::Filter;
using jsonpath_internal::Node;
using jsonpath_internal::Operand;
using jsonpath_internal::Path;
using jsonpath_internal::Step;

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
  absl::StatusOr<std::vector<Node>> nodes =
      jsonpath_internal::ParseTemplate(text);
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
