#ifndef JOBSET_COMMON_JSON_QUOTE_H_
#define JOBSET_COMMON_JSON_QUOTE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace jobset {

// Returns `s` as a JSON string literal, quotes included: '"' and '\' are
// escaped, control characters become \n, \r, \t or \u00XX; other bytes
// (UTF-8 included) pass through.
std::string JsonQuote(absl::string_view s);

}  // namespace jobset

#endif  // JOBSET_COMMON_JSON_QUOTE_H_
