// Fuzz target: page tokens (search/page_token.h). Any string given as a page_token must decode
// to a cursor or INVALID_ARGUMENT; a decoded cursor must encode back to a token that decodes to
// the same cursor (tokens are made only by EncodePageCursor, so a decodable token is one).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "search/page_token.h"

using issuescope::search::DecodePageCursor;
using issuescope::search::EncodePageCursor;
using issuescope::search::PageCursor;
using issuescope::search::QueryFingerprint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string token(reinterpret_cast<const char*>(data), size);
  // The fingerprint of the seeds' query, so that seeds made by EncodePageCursor decode, and one
  // taken from the input itself.
  for (uint64_t fingerprint : {QueryFingerprint("memory leak"), QueryFingerprint(token)}) {
    auto cursor = DecodePageCursor(token, fingerprint);
    if (!cursor.ok()) continue;
    auto again = DecodePageCursor(EncodePageCursor(*cursor, fingerprint), fingerprint);
    if (!again.ok() || again->offset != cursor->offset || again->keyset != cursor->keyset ||
        again->sort_value != cursor->sort_value || again->number_value != cursor->number_value ||
        again->ties != cursor->ties) {
      __builtin_trap();
    }
  }
  // Round trip of a cursor made from the input (keyset values as the searcher makes them: a
  // non-empty sort value, both at most 64 bytes).
  if (size >= 10 && size <= 9 + 2 * 64) {
    PageCursor cursor;
    std::memcpy(&cursor.offset, data, 8);
    cursor.keyset = data[8] & 1;
    if (cursor.keyset) {
      const size_t half = (size - 8) / 2;
      cursor.sort_value = token.substr(9, half);
      cursor.number_value = token.substr(9 + half);
      cursor.ties = data[8] >> 1;
    }
    auto decoded = DecodePageCursor(EncodePageCursor(cursor, 42), 42);
    if (!decoded.ok() || decoded->offset != cursor.offset ||
        decoded->sort_value != cursor.sort_value || decoded->number_value != cursor.number_value) {
      __builtin_trap();
    }
    if (DecodePageCursor(EncodePageCursor(cursor, 42), 43).ok()) __builtin_trap();
  }
  return 0;
}
