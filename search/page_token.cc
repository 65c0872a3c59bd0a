#include "search/page_token.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace issuescope::search {
namespace {

constexpr char kTokenVersion[] = "p1";

absl::Status Malformed() {
  return absl::InvalidArgumentError(
      "page_token is malformed; pass the next_page_token of a previous response unchanged");
}

}  // namespace

uint64_t QueryFingerprint(absl::string_view query) {
  uint64_t hash = 14695981039346656037ULL;  // FNV-1a offset basis
  for (unsigned char c : query) {
    hash ^= c;
    hash *= 1099511628211ULL;  // FNV prime
  }
  return hash;
}

std::string EncodePageToken(uint64_t offset, uint64_t fingerprint) {
  return absl::WebSafeBase64Escape(
      absl::StrCat(kTokenVersion, ":", offset, ":", absl::Hex(fingerprint)));
}

absl::StatusOr<uint64_t> DecodePageToken(absl::string_view token, uint64_t fingerprint) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) return Malformed();
  std::vector<absl::string_view> parts = absl::StrSplit(raw, ':');
  uint64_t offset = 0;
  uint64_t token_fingerprint = 0;
  if (parts.size() != 3 || parts[0] != kTokenVersion || !absl::SimpleAtoi(parts[1], &offset) ||
      !absl::SimpleHexAtoi(parts[2], &token_fingerprint)) {
    return Malformed();
  }
  if (token_fingerprint != fingerprint) {
    return absl::InvalidArgumentError(
        "page_token belongs to a different query; page tokens are valid only with the query "
        "that produced them");
  }
  return offset;
}

}  // namespace issuescope::search
