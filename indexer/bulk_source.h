// Sources of stored issues for the bulk indexer: crawler stores (IssueStore directories, read
// through their change log from the start, so the feed positions a bulk index covers are
// exact) and JSONL dumps of issuescope.v1.IssueWithComments (proto3 JSON, one issue a line).
//
// A source yields every copy it holds, tombstones included (Issue.deleted); choosing the newest
// copy of an issue across sources is the bulk indexer's job. Ownership: a source owns what it
// opened. Thread-compatible: one thread calls Next at a time.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "issuescope/v1/model.pb.h"

namespace issuescope::indexer {

// IssueSource yields stored issues in batches.
class IssueSource {
 public:
  virtual ~IssueSource() = default;
  // Next appends about `max` (> 0) issues to `out` (a store's change batch is never split) and
  // returns how many; 0 at the end. An error names the source and what was wrong (the store,
  // the JSONL line).
  virtual absl::StatusOr<size_t> Next(size_t max, std::vector<v1::IssueWithComments>* out) = 0;
  // FeedPositions returns, per crawler store id, the change-feed sequence number that the
  // issues returned so far cover (empty for sources that are not crawler stores).
  virtual std::map<std::string, uint64_t> FeedPositions() const { return {}; }
  // Describe names the source for logs and errors.
  virtual std::string Describe() const = 0;
};

// OpenStoreSource opens crawler store directories (IssueStore) for reading, in order. A store
// is opened exclusively (RocksDB's lock): a running crawler worker must be stopped first (or
// its store copied, or dumped to JSONL). Errors: INVALID_ARGUMENT when a directory holds no
// store; the store's own error otherwise, naming the directory.
absl::StatusOr<std::unique_ptr<IssueSource>> OpenStoreSource(
    const std::vector<std::string>& store_dirs);

// OpenJsonlSource opens JSONL files, in order. Blank lines are skipped; a line that is not an
// IssueWithComments is INVALID_ARGUMENT naming the file and line. NOT_FOUND for a missing file.
absl::StatusOr<std::unique_ptr<IssueSource>> OpenJsonlSource(const std::vector<std::string>& paths);

}  // namespace issuescope::indexer
