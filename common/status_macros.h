#ifndef JOBSET_COMMON_STATUS_MACROS_H_
#define JOBSET_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) and returns it from the enclosing function
// if it is not OK.
#define JOBSET_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status jobset_status_ = (expr);          \
    if (!jobset_status_.ok()) return jobset_status_; \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); returns its status from the
// enclosing function if it is not OK, otherwise moves the value into `lhs`,
// which may be a declaration: JOBSET_ASSIGN_OR_RETURN(auto x, Parse(s));
#define JOBSET_ASSIGN_OR_RETURN(lhs, rexpr) \
  JOBSET_ASSIGN_OR_RETURN_IMPL_(            \
      JOBSET_STATUS_MACROS_CONCAT_(jobset_statusor_, __LINE__), lhs, rexpr)

#define JOBSET_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#define JOBSET_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define JOBSET_STATUS_MACROS_CONCAT_(x, y) \
  JOBSET_STATUS_MACROS_CONCAT_INNER_(x, y)

#endif  // JOBSET_COMMON_STATUS_MACROS_H_
