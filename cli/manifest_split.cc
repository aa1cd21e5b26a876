#include "cli/manifest_split.h"

#include <exception>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/config_objects.h"
#include "api/kueue_manifest.h"
#include "api/manifest.h"
#include "api/namespace_manifest.h"
#include "api/rbac_manifest.h"
#include "yaml-cpp/yaml.h"

namespace jobset::cli {
namespace {

bool IsSeparator(absl::string_view line) {
  absl::ConsumeSuffix(&line, "\r");
  return line == "---" || absl::StartsWith(line, "--- ") ||
         absl::StartsWith(line, "---\t");
}

bool IsContent(absl::string_view line) {
  line = absl::StripLeadingAsciiWhitespace(line);
  return !line.empty() && line[0] != '#';
}

enum class DocKind { kOther, kRbac, kNamespace, kSecret, kConfigMap, kKueue };

// What `text`, one document, is (by its top-level kind and apiVersion).
DocKind KindOf(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return DocKind::kOther;
    const YAML::Node kind = root["kind"];
    const YAML::Node version = root["apiVersion"];
    if (!kind.IsScalar() || !version.IsScalar()) return DocKind::kOther;
    if (api::IsRbacKind(kind.Scalar()) &&
        absl::StartsWith(version.Scalar(), "rbac.authorization.k8s.io/")) {
      return DocKind::kRbac;
    }
    if (api::IsNamespaceKind(version.Scalar(), kind.Scalar())) {
      return DocKind::kNamespace;
    }
    if (api::IsSecretKind(version.Scalar(), kind.Scalar())) {
      return DocKind::kSecret;
    }
    if (api::IsConfigMapKind(version.Scalar(), kind.Scalar())) {
      return DocKind::kConfigMap;
    }
    if (api::IsKueueKind(kind.Scalar()) &&
        absl::StartsWith(version.Scalar(), "kueue.x-k8s.io/")) {
      return DocKind::kKueue;
    }
    return DocKind::kOther;
  } catch (const std::exception&) {
    return DocKind::kOther;
  }
}

}  // namespace

SplitDocuments SplitByKind(absl::string_view text) {
  SplitDocuments out;
  if (text.size() > api::kMaxManifestBytes) {
    out.rest = std::string(text);
    return out;
  }
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  // Each chunk: [begin, end) line indexes; a separator line starts one (its
  // rest of line is content).
  struct Chunk {
    size_t begin, end;
  };
  std::vector<Chunk> chunks;
  size_t begin = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (IsSeparator(lines[i]) && i != begin) {
      chunks.push_back({begin, i});
      begin = i;
    }
  }
  chunks.push_back({begin, lines.size()});
  int document = 0;
  for (const Chunk& chunk : chunks) {
    bool content = false;
    std::string chunk_text;
    for (size_t i = chunk.begin; i < chunk.end; ++i) {
      absl::string_view line = lines[i];
      if (i == chunk.begin && IsSeparator(line)) line = line.substr(3);
      if (IsContent(line)) content = true;
      absl::StrAppend(&chunk_text, line, "\n");
    }
    if (!content) continue;
    ++document;
    const DocKind kind = KindOf(chunk_text);
    if (kind == DocKind::kOther) continue;
    std::vector<RbacDocument>& taken =
        kind == DocKind::kRbac        ? out.rbac
        : kind == DocKind::kNamespace ? out.namespaces
        : kind == DocKind::kSecret    ? out.secrets
        : kind == DocKind::kKueue     ? out.kueue
                                      : out.config_maps;
    taken.push_back({document, chunk_text});
    // Blank it, keeping one null document and the line count.
    bool replaced = false;
    for (size_t i = chunk.begin; i < chunk.end; ++i) {
      if (i == chunk.begin && IsSeparator(lines[i])) {
        lines[i] = "--- ~";
        replaced = true;
        continue;
      }
      lines[i] = replaced ? "" : "~";
      replaced = true;
    }
  }
  out.rest = out.rbac.empty() && out.namespaces.empty() &&
                     out.secrets.empty() && out.config_maps.empty() &&
                     out.kueue.empty()
                 ? std::string(text)
                 : absl::StrJoin(lines, "\n");
  return out;
}

}  // namespace jobset::cli
