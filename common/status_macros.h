// Status helpers: RETURN_IF_ERROR and ASSIGN_OR_RETURN, which our Abseil (20220623) lacks.
//
//   RETURN_IF_ERROR(store.Put(issue));
//   ASSIGN_OR_RETURN(Issue issue, ParseIssue(json));
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ISSUESCOPE_CONCAT_INNER(a, b) a##b
#define ISSUESCOPE_CONCAT(a, b) ISSUESCOPE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status issuescope_status_ = (expr);      \
    if (!issuescope_status_.ok()) return issuescope_status_; \
  } while (0)

#define ISSUESCOPE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) return std::move(tmp).status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ISSUESCOPE_ASSIGN_OR_RETURN_IMPL(ISSUESCOPE_CONCAT(issuescope_statusor_, __LINE__), lhs, expr)
