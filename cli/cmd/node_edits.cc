#include "cli/cmd/node_edits.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/names.h"

namespace jobset::cli {
namespace {

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(std::string(what));
}

bool IsEffect(absl::string_view effect) {
  return effect == "NoSchedule" || effect == "PreferNoSchedule" ||
         effect == "NoExecute";
}

// kubectl's parseTaint: "key=value:Effect" or "key:Effect".
absl::StatusOr<api::Taint> ParseTaint(const std::string& spec) {
  std::vector<std::string> parts = absl::StrSplit(spec, ':');
  if (parts.size() != 2) {
    return Invalid(absl::StrCat("invalid taint spec: ", spec));
  }
  api::Taint taint;
  if (!IsEffect(parts[1])) {
    return Invalid(absl::StrCat("invalid taint effect: ", parts[1],
                                ", unsupported taint effect"));
  }
  taint.set_effect(parts[1]);
  std::vector<std::string> kv =
      absl::StrSplit(parts[0], absl::MaxSplits('=', 1));
  taint.set_key(kv[0]);
  if (kv.size() == 2) taint.set_value(kv[1]);
  std::vector<std::string> errors = api::IsQualifiedName(taint.key());
  if (kv.size() == 2) {
    for (std::string& e : api::IsValidLabelValue(taint.value()))
      errors.push_back(std::move(e));
  }
  if (!errors.empty()) {
    return Invalid(absl::StrCat("invalid taint spec: ", spec, ", ",
                                absl::StrJoin(errors, "; ")));
  }
  return taint;
}

}  // namespace

absl::StatusOr<api::LabelNodeRequest> ParseLabelArgs(
    const std::string& node, const std::vector<std::string>& specs,
    bool overwrite) {
  api::LabelNodeRequest request;
  request.set_name(node);
  request.set_overwrite(overwrite);
  std::set<std::string> removed;
  for (const std::string& spec : specs) {
    if (absl::StrContains(spec, '=')) {
      std::vector<std::string> kv =
          absl::StrSplit(spec, absl::MaxSplits('=', 1));
      if (std::vector<std::string> errors = api::IsQualifiedName(kv[0]);
          !errors.empty()) {
        return Invalid(absl::StrCat("invalid label spec: ", spec, ", ",
                                    absl::StrJoin(errors, "; ")));
      }
      if (std::vector<std::string> errors = api::IsValidLabelValue(kv[1]);
          !errors.empty()) {
        return Invalid(absl::StrCat("invalid label value: \"", spec,
                                    "\": ", absl::StrJoin(errors, "; ")));
      }
      (*request.mutable_labels())[kv[0]] = kv[1];
    } else if (absl::EndsWith(spec, "-") && spec.size() > 1) {
      const std::string key = spec.substr(0, spec.size() - 1);
      if (std::vector<std::string> errors = api::IsQualifiedName(key);
          !errors.empty()) {
        return Invalid(absl::StrCat("invalid label spec: ", spec, ", ",
                                    absl::StrJoin(errors, "; ")));
      }
      if (removed.insert(key).second) request.add_remove(key);
    } else {
      return Invalid(absl::StrCat("unknown label spec: ", spec));
    }
  }
  for (const std::string& key : removed) {
    if (request.labels().contains(key)) {
      return Invalid(
          "can not both modify and remove a label in the same command");
    }
  }
  if (request.labels().empty() && request.remove().empty()) {
    return Invalid("at least one label update is required");
  }
  return request;
}

absl::StatusOr<api::TaintNodeRequest> ParseTaintArgs(
    const std::string& node, const std::vector<std::string>& specs,
    bool overwrite) {
  api::TaintNodeRequest request;
  request.set_name(node);
  request.set_overwrite(overwrite);
  for (const std::string& spec : specs) {
    if (absl::EndsWith(spec, "-")) {
      const std::string body = spec.substr(0, spec.size() - 1);
      std::vector<std::string> parts = absl::StrSplit(body, ':');
      api::Taint* remove = request.add_remove();
      remove->set_key(parts[0]);
      if (parts.size() > 2 || (parts.size() == 2 && !IsEffect(parts[1]))) {
        return Invalid(absl::StrCat("invalid taint spec: ", spec));
      }
      if (parts.size() == 2) remove->set_effect(parts[1]);
      if (!api::IsQualifiedName(remove->key()).empty()) {
        return Invalid(absl::StrCat("invalid taint spec: ", spec));
      }
      continue;
    }
    absl::StatusOr<api::Taint> taint = ParseTaint(spec);
    if (!taint.ok()) return taint.status();
    for (const api::Taint& added : request.add()) {
      if (added.key() == taint->key() && added.effect() == taint->effect()) {
        return Invalid(absl::StrCat(
            "duplicated taints with the same key and effect: ", spec));
      }
    }
    *request.add_add() = *std::move(taint);
  }
  if (request.add().empty() && request.remove().empty()) {
    return Invalid("at least one taint update is required");
  }
  return request;
}

std::string LabelOutcome(const api::Node& before, const api::Node& after,
                         bool overwrite) {
  const auto& old_labels = before.metadata().labels();
  const auto& new_labels = after.metadata().labels();
  bool same = old_labels.size() == new_labels.size();
  for (const auto& [key, value] : old_labels) {
    if (!same) break;
    auto it = new_labels.find(key);
    same = it != new_labels.end() && it->second == value;
  }
  if (same) return "not labeled";
  if (!overwrite && new_labels.size() < old_labels.size()) return "unlabeled";
  return "labeled";
}

std::string TaintOutcome(const api::TaintNodeRequest& request) {
  const bool added = !request.add().empty();
  const bool removed = !request.remove().empty();
  if ((added && removed) || request.overwrite()) return "modified";
  return added ? "tainted" : "untainted";
}

}  // namespace jobset::cli
