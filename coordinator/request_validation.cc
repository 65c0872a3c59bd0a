#include "coordinator/request_validation.h"

#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/host_port.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "common/status_macros.h"

namespace issuescope::coordinator {
namespace {

bool ValidPort(absl::string_view port) {
  int value = 0;
  if (port.empty() || port.size() > 5) return false;
  for (char c : port) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(port, &value) && value >= 1 && value <= 65535;
}

bool ValidHost(absl::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char c : host) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) {
      return false;
    }
  }
  return true;
}

// PercentDecode undoes the URI escapes gRPC writes into peers ("%5B::1%5D"); a malformed
// escape is left as it is.
std::string PercentDecode(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    int value = 0;
    if (text[i] == '%' && i + 2 < text.size() &&
        absl::SimpleHexAtoi(text.substr(i + 1, 2), &value)) {
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// IsWildcardStoreAddress says whether a registered store address names no dialable host.
bool IsWildcardStoreAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:")) return false;
  absl::StatusOr<HostPort> split = SplitHostPort(address);
  return split.ok() && IsWildcardHost(split->host);
}

}  // namespace

absl::StatusOr<std::string> ResolveStoreAddress(absl::string_view address,
                                                absl::string_view peer) {
  if (!IsWildcardStoreAddress(address)) return std::string(address);
  const int port = SplitHostPort(address)->port;
  if (port < 1) {
    return absl::InvalidArgumentError(absl::StrCat("store_address '", address,
                                                   "' has no port (1..65535)"));
  }
  const std::string decoded = PercentDecode(peer);
  absl::string_view rest = decoded;
  std::string host;
  if (absl::ConsumePrefix(&rest, "ipv4:") || absl::ConsumePrefix(&rest, "ipv6:")) {
    absl::StatusOr<HostPort> split = SplitHostPort(rest);
    if (split.ok()) host = split->host;
  }
  absl::string_view mapped = host;
  if (absl::ConsumePrefix(&mapped, "::ffff:") && absl::StrContains(mapped, '.')) {
    host = std::string(mapped);
  }
  if (IsWildcardHost(host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store_address '", address, "' leaves the host to the coordinator, but the call came "
        "from '", absl::CEscape(peer.substr(0, 200)), "', not over IP: give the worker "
        "--advertise-address HOST:PORT"));
  }
  return JoinHostPort(host, port);
}

absl::Status ValidateCursor(const v1::Cursor& cursor, absl::Time now, absl::string_view field) {
  const absl::Time limit = now + kCursorSkew;
  for (const auto& [name, has, ts] :
       {std::make_tuple("issues_since", cursor.has_issues_since(), cursor.issues_since()),
        std::make_tuple("comments_since", cursor.has_comments_since(), cursor.comments_since())}) {
    if (!has) continue;
    const absl::Time t = FromProto(ts);
    if (t > limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".", name, " ", FormatRfc3339(t), " lies after the coordinator's clock (",
          FormatRfc3339(now), ") by more than ", absl::FormatDuration(kCursorSkew),
          ": refused, it would hide every issue updated until then"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateWorkerId(absl::string_view id, absl::string_view field) {
  bool ok = !id.empty() && id.size() <= 64;
  for (char c : id) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) {
      ok = false;
    }
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " '", absl::CEscape(id.substr(0, 80)),
                                                 "' must match [A-Za-z0-9._-]{1,64}"));
}

absl::Status ValidateStoreAddress(absl::string_view address) {
  if (address.empty() || address == kInProcessStoreAddress) return absl::OkStatus();
  if (IsWildcardStoreAddress(address)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store_address '", absl::CEscape(address.substr(0, 200)),
        "' names no host the indexer can dial (send :PORT over gRPC and the coordinator uses "
        "the address the worker connects from)"));
  }
  if (absl::StartsWith(address, "unix:") && address.size() > 5) return absl::OkStatus();
  bool ok = false;
  if (absl::StartsWith(address, "[")) {
    size_t close = address.find("]:");
    ok = close != absl::string_view::npos && close > 1 && ValidPort(address.substr(close + 2));
  } else {
    size_t colon = address.rfind(':');
    ok = colon != absl::string_view::npos && ValidHost(address.substr(0, colon)) &&
         ValidPort(address.substr(colon + 1));
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("store_address '", absl::CEscape(address.substr(0, 200)),
                   "' is not HOST:PORT (port 1..65535), [IPV6]:PORT or unix:PATH"));
}

absl::StatusOr<std::string> NormalizeSpec(const v1::RepositorySpec& spec, absl::string_view field) {
  if (!spec.has_repo()) return absl::InvalidArgumentError(absl::StrCat(field, ".repo is missing"));
  const v1::RepositoryRef& repo = spec.repo();
  if (repo.tracker() != v1::TRACKER_GITHUB && repo.tracker() != v1::TRACKER_GITLAB &&
      repo.tracker() != v1::TRACKER_GITEE) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".repo.tracker ", static_cast<int>(repo.tracker()),
                     " is not a known tracker (github, gitlab or gitee)"));
  }
  if (repo.owner().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".repo.owner is empty"));
  }
  if (repo.name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".repo.name is empty"));
  }
  auto parsed =
      ParseRepoSpec(absl::StrCat(TrackerName(repo.tracker()), ":", repo.owner(), "/", repo.name()));
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".repo: ", parsed.status().message()));
  }
  const std::string& url = repo.api_url();
  if (!url.empty() && !absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".repo.api_url '",
                                                   absl::CEscape(url.substr(0, 200)),
                                                   "' must start with http:// or https://"));
  }
  if (spec.recrawl_interval_s() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".recrawl_interval_s is negative (", spec.recrawl_interval_s(), ")"));
  }
  if (spec.full_recrawl_interval_s() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".full_recrawl_interval_s is negative (",
                                                   spec.full_recrawl_interval_s(), ")"));
  }
  return RepoSlug(repo);
}

absl::StatusOr<std::string> NormalizeSlug(absl::string_view slug, absl::string_view field) {
  auto repo = ParseRepoSpec(slug);
  if (!repo.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", repo.status().message()));
  }
  return RepoSlug(*repo);
}

absl::StatusOr<std::set<std::string>> NormalizeSlugs(
    const google::protobuf::RepeatedPtrField<std::string>& slugs) {
  std::set<std::string> out;
  for (int i = 0; i < slugs.size(); ++i) {
    ASSIGN_OR_RETURN(std::string slug,
                     NormalizeSlug(slugs[i], absl::StrCat("repo_slugs[", i, "]")));
    out.insert(std::move(slug));
  }
  return out;
}

absl::StatusOr<std::string> ValidateLeaseRef(const v1::LeaseRef& lease, absl::string_view field) {
  auto slug = NormalizeSlug(lease.repo(), absl::StrCat(field, ".repo"));
  if (!slug.ok()) return slug.status();
  if (lease.epoch() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".epoch is 0 (epochs start at 1)"));
  }
  return slug;
}

}  // namespace issuescope::coordinator
