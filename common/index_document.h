// Building and reading Xapian documents of issues (schema in common/index_schema.h). Shared by
// the indexer, which writes them, and the search service, which reads them back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::index {

// BuildDocument makes the document of one issue with its comments (and tags, if set): free
// text with positions, boolean filter terms, value slots, and the serialized issue as data.
// Tags become XK (kind), XTH (primary and secondary themes), XST (sub-themes), XKW (matched llm
// keywords), and, for tagged issues (Tags.taxonomy set), XLtrue/XLfalse and XTX<taxonomy>
// (e.g. "XTXllm-dl/1", the taxonomy version the tags were made with).
// The unique term is IdTerm(repo slug, number). Throws nothing.
Xapian::Document BuildDocument(const v1::IssueWithComments& issue);

// BuildGoneDocument makes the gone database's document (index_layout.h, kGoneDirName) of an
// issue the tracker reported deleted or transferred: BuildDocument of its last known state
// with `issue.deleted()` set, plus the term XGNtransferred when `issue.transferred_to()` is set,
// else XGNdeleted. Throws nothing.
Xapian::Document BuildGoneDocument(const v1::IssueWithComments& issue);

// ReadDocument parses the data of a document made by BuildDocument.
absl::StatusOr<v1::IssueWithComments> ReadDocument(const Xapian::Document& doc);

// IndexVersion orders copies of one issue, newest last: by the issue's updated_at, then by the
// newest updated_at of its comments, then by the issue's fetched_at (all unix nanoseconds, 0
// when absent). The issue's own state comes first, so a stale copy with an older issue state
// never wins because one of its comments was edited later. A plain value; copyable.
struct IndexVersion {
  int64_t issue_updated_ns = 0;
  int64_t comments_updated_ns = 0;
  int64_t fetched_ns = 0;

  // Encode returns a fixed-width string (48 lower-case hex digits) whose byte order is the
  // version order; it is what BuildDocument stores in kVersionSlot.
  std::string Encode() const;
  // Decode parses what Encode made; nullopt for anything else.
  static std::optional<IndexVersion> Decode(absl::string_view encoded);
  // DebugString renders the three parts for logs.
  std::string DebugString() const;

  // Comparisons: lexicographic over (issue_updated_ns, comments_updated_ns, fetched_ns).
  friend bool operator<(const IndexVersion& a, const IndexVersion& b) {
    return std::tie(a.issue_updated_ns, a.comments_updated_ns, a.fetched_ns) <
           std::tie(b.issue_updated_ns, b.comments_updated_ns, b.fetched_ns);
  }
  friend bool operator>(const IndexVersion& a, const IndexVersion& b) { return b < a; }
  friend bool operator<=(const IndexVersion& a, const IndexVersion& b) { return !(b < a); }
  friend bool operator>=(const IndexVersion& a, const IndexVersion& b) { return !(a < b); }
  friend bool operator==(const IndexVersion& a, const IndexVersion& b) {
    return !(a < b) && !(b < a);
  }
  friend bool operator!=(const IndexVersion& a, const IndexVersion& b) { return !(a == b); }
};

// DocumentVersion returns the version of the issue a document was built from: decoded from
// kVersionSlot, or (a document written before the slot held IndexVersion::Encode, or with an
// unreadable slot) computed from the stored issue. The zero version when neither is readable.
IndexVersion DocumentVersion(const Xapian::Document& doc);

// IssueVersion computes the version of an issue about to be indexed.
IndexVersion IssueVersion(const v1::IssueWithComments& issue);

// NormalizeTermValue lower-cases a boolean term value (labels, logins, repos).
std::string NormalizeTermValue(const std::string& value);

}  // namespace issuescope::index
