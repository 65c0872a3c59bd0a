#include "page_token.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/hash.h"

namespace issuescope::search {
namespace {

constexpr char kOffsetVersion[] = "p1";
constexpr char kKeysetVersion[] = "k1";
// Longest serialized value a cursor carries (sortable_serialise makes at most 9 bytes).
constexpr size_t kMaxValueBytes = 64;

absl::Status Malformed() {
  return absl::InvalidArgumentError(
      "page_token is malformed; pass the next_page_token of a previous response unchanged");
}

bool ParseHexBytes(absl::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0 || hex.size() > 2 * kMaxValueBytes ||
      hex.find_first_not_of("0123456789abcdef") != absl::string_view::npos) {
    return false;
  }
  *out = absl::HexStringToBytes(hex);
  return true;
}

}  // namespace

uint64_t QueryFingerprint(absl::string_view query) {
  return Fnv1a(query);
}

std::string EncodePageCursor(const PageCursor& cursor, uint64_t fingerprint) {
  if (!cursor.keyset) {
    return absl::WebSafeBase64Escape(
        absl::StrCat(kOffsetVersion, ":", cursor.offset, ":", absl::Hex(fingerprint)));
  }
  return absl::WebSafeBase64Escape(absl::StrCat(
      kKeysetVersion, ":", cursor.offset, ":", absl::BytesToHexString(cursor.sort_value), ":",
      absl::BytesToHexString(cursor.number_value), ":", cursor.ties, ":",
      absl::Hex(fingerprint)));
}

absl::StatusOr<PageCursor> DecodePageCursor(absl::string_view token, uint64_t fingerprint) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) return Malformed();
  std::vector<absl::string_view> parts = absl::StrSplit(raw, ':');
  PageCursor cursor;
  uint64_t token_fingerprint = 0;
  if (parts.size() == 3 && parts[0] == kOffsetVersion) {
    if (!absl::SimpleAtoi(parts[1], &cursor.offset) ||
        !absl::SimpleHexAtoi(parts[2], &token_fingerprint)) {
      return Malformed();
    }
  } else if (parts.size() == 6 && parts[0] == kKeysetVersion) {
    cursor.keyset = true;
    if (!absl::SimpleAtoi(parts[1], &cursor.offset) ||
        !ParseHexBytes(parts[2], &cursor.sort_value) || cursor.sort_value.empty() ||
        !ParseHexBytes(parts[3], &cursor.number_value) ||
        !absl::SimpleAtoi(parts[4], &cursor.ties) ||
        !absl::SimpleHexAtoi(parts[5], &token_fingerprint)) {
      return Malformed();
    }
  } else {
    return Malformed();
  }
  if (token_fingerprint != fingerprint) {
    return absl::InvalidArgumentError(
        "page_token belongs to a different query; page tokens are valid only with the query "
        "that produced them");
  }
  return cursor;
}

}  // namespace issuescope::search
