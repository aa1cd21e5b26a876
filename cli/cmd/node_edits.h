#ifndef JOBSET_CLI_CMD_NODE_EDITS_H_
#define JOBSET_CLI_CMD_NODE_EDITS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/agent.pb.h"

// `jobsetctl label node` and `jobsetctl taint node`: their arguments read as
// kubectl reads them, and the word each prints. Pure functions.
namespace jobset::cli {

// Reads `label node NAME` arguments: "k=v" sets, "k-" removes
// (kubectl's parseLabels). kInvalidArgument with kubectl's messages:
// "invalid label spec: ...", "invalid label value: ...", "unknown label
// spec: ...", "can not both modify and remove a label in the same command",
// "at least one label update is required".
absl::StatusOr<api::LabelNodeRequest> ParseLabelArgs(
    const std::string& node, const std::vector<std::string>& specs,
    bool overwrite);

// Reads `taint node NAME` arguments: "key=value:Effect" or "key:Effect"
// adds, "key:Effect-" and "key-" remove (kubectl's ParseTaints).
// kInvalidArgument with kubectl's messages: "invalid taint spec: ...",
// "invalid taint effect: ...", "duplicated taints with the same key and
// effect: ...", "at least one taint update is required".
absl::StatusOr<api::TaintNodeRequest> ParseTaintArgs(
    const std::string& node, const std::vector<std::string>& specs,
    bool overwrite);

// What kubectl label prints after "node/NAME ": "labeled", "unlabeled"
// (only fewer labels, without --overwrite) or "not labeled" (no change),
// from the node's labels `before` and `after`.
std::string LabelOutcome(const api::Node& before, const api::Node& after,
                         bool overwrite);

// What kubectl taint prints after "node/NAME ": "modified" (added and
// removed, or --overwrite), "tainted" (added) or "untainted".
std::string TaintOutcome(const api::TaintNodeRequest& request);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_NODE_EDITS_H_
