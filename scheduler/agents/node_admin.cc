#include "scheduler/agents/node_admin.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "google/protobuf/util/message_differencer.h"
#include "scheduler/agents/agent_input.h"

namespace jobset::scheduler {
namespace {

bool SameTaints(const google::protobuf::RepeatedPtrField<api::Taint>& a,
                const google::protobuf::RepeatedPtrField<api::Taint>& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals(a[i], b[i]))
      return false;
  }
  return true;
}

absl::Status Invalid(absl::string_view field, absl::string_view value,
                     const std::vector<std::string>& errors) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": invalid value \"", CutUtf8(value, 256),
                   "\": ", absl::StrJoin(errors, "; ")));
}

absl::Status CheckTaint(absl::string_view field, const api::Taint& t,
                        bool effect_required) {
  if (std::vector<std::string> errors = api::IsQualifiedName(t.key());
      !errors.empty()) {
    return Invalid(absl::StrCat(field, ".key"), t.key(), errors);
  }
  if (std::vector<std::string> errors = api::IsValidLabelValue(t.value());
      !errors.empty()) {
    return Invalid(absl::StrCat(field, ".value"), t.value(), errors);
  }
  if ((effect_required || !t.effect().empty()) && t.effect() != "NoSchedule" &&
      t.effect() != "PreferNoSchedule" && t.effect() != "NoExecute") {
    return Invalid(absl::StrCat(field, ".effect"), t.effect(),
                   {"supported values: \"NoSchedule\", "
                    "\"PreferNoSchedule\", \"NoExecute\""});
  }
  return absl::OkStatus();
}

// kubectl's Taint.ToString: "key=value:Effect", "key:Effect", "key".
std::string TaintString(const api::Taint& t) {
  std::string s = t.key();
  if (!t.value().empty()) absl::StrAppend(&s, "=", t.value());
  if (!t.effect().empty()) absl::StrAppend(&s, ":", t.effect());
  return s;
}

// A record stored before NodeRecord.admin existed takes the taints its
// registration had: they were the node's when jobsetd was upgraded.
void EnsureAdmin(api::NodeRecord& record) {
  if (record.has_admin()) return;
  *record.mutable_admin()->mutable_taints() = record.registration().taints();
}

}  // namespace

std::map<std::string, std::string> EffectiveLabels(
    const api::NodeRecord& record) {
  std::map<std::string, std::string> labels;
  const std::set<std::string> removed(record.admin().removed_labels().begin(),
                                      record.admin().removed_labels().end());
  for (const auto& [key, value] : record.registration().labels()) {
    // A record stored before NodeRestriction may hold restricted labels the
    // node set itself: they never count.
    if (IsRestrictedNodeLabel(key) || removed.contains(key)) continue;
    labels[key] = value;
  }
  for (const auto& [key, value] : record.admin().labels()) labels[key] = value;
  return labels;
}

std::vector<api::Taint> EffectiveTaints(const api::NodeRecord& record) {
  const auto& taints = record.has_admin() ? record.admin().taints()
                                          : record.registration().taints();
  return {taints.begin(), taints.end()};
}

api::NodeRegistration EffectiveRegistration(const api::NodeRecord& record) {
  api::NodeRegistration r = record.registration();
  r.clear_labels();
  for (auto& [key, value] : EffectiveLabels(record))
    (*r.mutable_labels())[key] = value;
  r.clear_taints();
  for (api::Taint& t : EffectiveTaints(record)) *r.add_taints() = t;
  return r;
}

bool MergeHello(const api::NodeRegistration& hello, api::NodeRecord& record,
                bool* taints_ignored) {
  bool changed = false;
  if (!record.has_admin()) {
    // A new node registers with its taints (kubelet's
    // --register-with-taints); one stored before NodeRestriction keeps the
    // taints it had. From here on only an admin changes them.
    *record.mutable_admin()->mutable_taints() =
        record.has_registration() ? record.registration().taints()
                                  : hello.taints();
    changed = true;
  }
  *taints_ignored = !SameTaints(hello.taints(), record.admin().taints());
  api::NodeRegistration reported = hello;
  reported.clear_taints();
  if (!google::protobuf::util::MessageDifferencer::Equals(record.registration(),
                                                          reported)) {
    *record.mutable_registration() = std::move(reported);
    changed = true;
  }
  return changed;
}

absl::Status ApplyLabels(const api::LabelNodeRequest& request,
                         api::NodeRecord& record) {
  const std::string& node = request.name();
  const std::map<std::string, std::string> current = EffectiveLabels(record);
  std::vector<std::string> conflicts;
  for (const auto& [key, value] : request.labels()) {
    const std::string field = absl::StrCat("labels[", CutUtf8(key, 256), "]");
    if (std::vector<std::string> errors = api::IsQualifiedName(key);
        !errors.empty()) {
      return Invalid(field, key, errors);
    }
    if (std::vector<std::string> errors = api::IsValidLabelValue(value);
        !errors.empty()) {
      return Invalid(field, value, errors);
    }
    auto it = current.find(key);
    if (!request.overwrite() && it != current.end() && it->second != value) {
      conflicts.push_back(absl::StrCat("'", key, "' already has a value (",
                                       it->second,
                                       "), and --overwrite is false"));
    }
  }
  std::sort(conflicts.begin(), conflicts.end());
  if (!conflicts.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(conflicts, ", "));
  }
  for (const std::string& key : request.remove()) {
    if (std::vector<std::string> errors = api::IsQualifiedName(key);
        !errors.empty()) {
      return Invalid(absl::StrCat("remove[", CutUtf8(key, 256), "]"), key,
                     errors);
    }
    if (request.labels().contains(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("can not both modify and remove the label \"", key,
                       "\" of node ", node, " in the same command"));
    }
  }
  api::NodeRecord edited = record;
  EnsureAdmin(edited);
  api::NodeAdminSpec& admin = *edited.mutable_admin();
  std::set<std::string> removed(admin.removed_labels().begin(),
                                admin.removed_labels().end());
  for (const auto& [key, value] : request.labels()) {
    (*admin.mutable_labels())[key] = value;
    removed.erase(key);
  }
  for (const std::string& key : request.remove()) {
    admin.mutable_labels()->erase(key);
    // Hidden only while the node reports it: a node may later set a label
    // of that name itself (an admin's own is simply gone).
    if (edited.registration().labels().contains(key)) removed.insert(key);
  }
  if (admin.labels_size() > kMaxNodeLabels) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "node ", node, ": ", admin.labels_size(),
        " labels set by admins exceed the limit of ", kMaxNodeLabels));
  }
  if (removed.size() > static_cast<size_t>(kMaxNodeLabels)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "node ", node, ": ", removed.size(),
        " labels removed by admins exceed the limit of ", kMaxNodeLabels));
  }
  admin.clear_removed_labels();
  for (const std::string& key : removed) admin.add_removed_labels(key);
  record = std::move(edited);
  return absl::OkStatus();
}

absl::Status ApplyTaints(const api::TaintNodeRequest& request,
                         api::NodeRecord& record) {
  const std::string& node = request.name();
  for (int i = 0; i < request.add_size(); ++i) {
    if (absl::Status s = CheckTaint(absl::StrCat("add[", i, "]"),
                                    request.add(i), /*effect_required=*/true);
        !s.ok()) {
      return s;
    }
    for (int j = 0; j < i; ++j) {
      if (request.add(j).key() == request.add(i).key() &&
          request.add(j).effect() == request.add(i).effect()) {
        return absl::InvalidArgumentError(
            absl::StrCat("duplicated taints with the same key and effect: ",
                         TaintString(request.add(i))));
      }
    }
  }
  for (int i = 0; i < request.remove_size(); ++i) {
    if (absl::Status s =
            CheckTaint(absl::StrCat("remove[", i, "]"), request.remove(i),
                       /*effect_required=*/false);
        !s.ok()) {
      return s;
    }
  }
  api::NodeRecord edited = record;
  EnsureAdmin(edited);
  const auto& old = edited.admin().taints();
  auto same = [](const api::Taint& a, const api::Taint& b) {
    return a.key() == b.key() && a.effect() == b.effect();
  };
  if (!request.overwrite()) {
    std::vector<std::string> exists;
    for (const api::Taint& add : request.add()) {
      for (const api::Taint& t : old) {
        if (same(add, t)) {
          exists.push_back(add.key());
          break;
        }
      }
    }
    if (!exists.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Node ", node, " already has ", absl::StrJoin(exists, ","),
          " taint(s) with same effect(s) and --overwrite is false"));
    }
  }
  // kubectl's ReorganizeTaints: the new ones, then the old ones they do not
  // replace, then the removals.
  std::vector<api::Taint> taints(request.add().begin(), request.add().end());
  for (const api::Taint& t : old) {
    if (std::none_of(request.add().begin(), request.add().end(),
                     [&](const api::Taint& a) { return same(a, t); })) {
      taints.push_back(t);
    }
  }
  std::vector<std::string> not_found;
  for (const api::Taint& remove : request.remove()) {
    auto matches = [&](const api::Taint& t) {
      return t.key() == remove.key() &&
             (remove.effect().empty() || t.effect() == remove.effect());
    };
    const auto end = std::remove_if(taints.begin(), taints.end(), matches);
    if (end == taints.end()) {
      api::Taint shown = remove;
      shown.clear_value();
      not_found.push_back(
          absl::StrCat("taint \"", TaintString(shown), "\" not found"));
    }
    taints.erase(end, taints.end());
  }
  if (!not_found.empty()) {
    return absl::NotFoundError(absl::StrJoin(not_found, ", "));
  }
  if (taints.size() > static_cast<size_t>(kMaxNodeTaints)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("node ", node, ": ", taints.size(),
                     " taints exceed the limit of ", kMaxNodeTaints));
  }
  api::NodeAdminSpec& admin = *edited.mutable_admin();
  admin.clear_taints();
  for (api::Taint& t : taints) *admin.add_taints() = std::move(t);
  record = std::move(edited);
  return absl::OkStatus();
}

}  // namespace jobset::scheduler
