#ifndef JOBSET_API_HOST_TABLE_H_
#define JOBSET_API_HOST_TABLE_H_

// The wire form of a JobSet attempt's host table (proto/agent.proto,
// PodAssignment.hosts_table): an api::HostTable, serialized and then
// zlib-compressed. jobsetd encodes an attempt's table once and sends the same
// bytes to every pod of the attempt; the agent decodes them at its input
// boundary (agent/runtime/pod_input.h), within a hard bound on what they
// inflate to, since they are untrusted. Pure functions; thread-safe.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/agent.pb.h"

namespace jobset::api {

// The most a table may take once inflated (serialized HostTable bytes):
// 100,000 entries (the agent's kMaxHostEntries) of two 100-byte names each
// fit three times over.
inline constexpr int64_t kMaxHostTableBytes = int64_t{64} << 20;

// Returns `table` serialized and zlib-compressed (the zlib format,
// RFC 1950).
std::string EncodeHostTable(const HostTable& table);

// Returns the table `bytes` hold (EncodeHostTable's form). Never allocates
// more than `max_bytes` (+1) for the inflated form: kInvalidArgument, naming
// `field`, the sizes and the limit, when the bytes inflate to more than
// `max_bytes`, are not zlib data, are cut short, are followed by other bytes,
// or do not parse as a HostTable. The entries themselves are not checked.
absl::StatusOr<HostTable> DecodeHostTable(
    absl::string_view field, absl::string_view bytes,
    int64_t max_bytes = kMaxHostTableBytes);

}  // namespace jobset::api

#endif  // JOBSET_API_HOST_TABLE_H_
