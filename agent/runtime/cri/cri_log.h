#ifndef JOBSET_AGENT_RUNTIME_CRI_CRI_LOG_H_
#define JOBSET_AGENT_RUNTIME_CRI_CRI_LOG_H_

// Reading CRI container log files (containers-cri.md §2): lines of
// "<RFC3339Nano time> <stdout|stderr> <tags> <text>\n", where the first tag
// is F (a full line, its newline stripped) or P (a piece of a longer line).
// Thread-compatible; no I/O.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace jobset::agent::cri {

// Returns the output `raw` holds: each line's text, with its newline back
// for F lines. Only whole lines are decoded: `*consumed` is the number of
// bytes of `raw` read (up to and including its last newline), so the next
// read starts there. A line that does not parse is passed through as is.
std::string DecodeCriLog(absl::string_view raw, size_t* consumed);

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_CRI_LOG_H_
