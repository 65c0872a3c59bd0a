#include "crawler/http_transport.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace issuescope::crawler {

std::string HttpHeaders::Get(absl::string_view name) const {
  for (const auto& [k, v] : entries) {
    if (absl::EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

bool HttpHeaders::Has(absl::string_view name) const {
  for (const auto& entry : entries) {
    if (absl::EqualsIgnoreCase(entry.first, name)) return true;
  }
  return false;
}

absl::Status HttpStatusToStatus(int http_status, absl::string_view what, bool rate_limited) {
  if ((http_status >= 200 && http_status < 300) || http_status == 304) return absl::OkStatus();
  const std::string msg = absl::StrCat(what, ": HTTP ", http_status);
  if (http_status == 429 || (http_status >= 500 && http_status < 600)) {
    return absl::UnavailableError(msg);
  }
  switch (http_status) {
    case 404: return absl::NotFoundError(msg);
    case 410: return absl::NotFoundError(absl::StrCat(msg, " (gone)"));
    case 401: return absl::UnauthenticatedError(msg);
    case 403:
      return rate_limited ? absl::ResourceExhaustedError(absl::StrCat(msg, " (rate limited)"))
                          : absl::PermissionDeniedError(msg);
    case 422: return absl::InvalidArgumentError(msg);
    default: break;
  }
  // FAILED_PRECONDITION is kept for fencing (a stale lease epoch), so the worker can tell a
  // fenced crawl from a tracker's refusal.
  if (http_status >= 400 && http_status < 500) {
    return absl::InvalidArgumentError(absl::StrCat(msg, " (refused by the tracker)"));
  }
  if (http_status >= 300 && http_status < 400) {
    return absl::UnknownError(absl::StrCat(msg, " (unexpected redirect)"));
  }
  return absl::UnknownError(absl::StrCat(msg, " (unexpected status)"));
}

}  // namespace issuescope::crawler
