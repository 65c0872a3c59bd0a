// The byte layout of the crawler store's RocksDB keys and change records, in one place for the
// store (issue_store.cc, issue_store_read.cc) and its raw pages (raw_pages.cc). Numbers are
// 8-byte big-endian, so RocksDB's byte order is numeric order; a repository's rows share the
// prefix "<slug>\0".
//
// Plain functions; thread-safe. Internal to the crawler's store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "issuescope/v1/store.pb.h"
#include "rocksdb/slice.h"

namespace issuescope::crawler::store_keys {

// kMaxSlugLength bounds a repository slug in a key.
inline constexpr size_t kMaxSlugLength = 512;

// PutBE64 appends `v` as 8 big-endian bytes.
inline void PutBE64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

// GetBE64 reads 8 big-endian bytes from the start of `p` (fewer when `p` is shorter).
inline uint64_t GetBE64(absl::string_view p) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < p.size(); ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// BE64 is PutBE64 into a new string.
inline std::string BE64(uint64_t v) {
  std::string out;
  PutBE64(&out, v);
  return out;
}

// IssuePrefix is the prefix of every row of a repository: "<slug>\0".
inline std::string IssuePrefix(absl::string_view slug) {
  return absl::StrCat(slug, absl::string_view("\0", 1));
}

// IssueRowKey is an issue's key: IssuePrefix + BE64(number).
inline std::string IssueRowKey(absl::string_view slug, int64_t number) {
  std::string key = IssuePrefix(slug);
  PutBE64(&key, static_cast<uint64_t>(number));
  return key;
}

// CommentKey is a comment's key: IssueRowKey + BE64(comment id).
inline std::string CommentKey(absl::string_view slug, int64_t number, int64_t id) {
  std::string key = IssueRowKey(slug, number);
  PutBE64(&key, static_cast<uint64_t>(id));
  return key;
}

// EncodeChange is a change record: kind (1 byte), BE64 number, repo slug.
inline std::string EncodeChange(v1::ChangeKind kind, absl::string_view slug, int64_t number) {
  std::string out(1, static_cast<char>(kind));
  PutBE64(&out, static_cast<uint64_t>(number));
  out.append(slug.data(), slug.size());
  return out;
}

inline bool StartsWith(const rocksdb::Slice& s, const std::string& prefix) {
  return s.starts_with(rocksdb::Slice(prefix));
}

// CheckSlug is INVALID_ARGUMENT for a slug that cannot be a key prefix (empty, too long, NUL).
inline absl::Status CheckSlug(absl::string_view slug) {
  if (slug.empty()) return absl::InvalidArgumentError("empty repository slug");
  if (slug.size() > kMaxSlugLength || slug.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed repository slug \"", absl::CHexEscape(slug.substr(0, 64)), "\""));
  }
  return absl::OkStatus();
}

}  // namespace issuescope::crawler::store_keys
