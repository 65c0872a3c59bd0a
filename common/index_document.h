// Building and reading Xapian documents of issues (schema in common/index_schema.h). Shared by
// the indexer, which writes them, and the search service, which reads them back.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::index {

// BuildDocument makes the document of one issue with its comments (and tags, if set): free
// text with positions, boolean filter terms, value slots, and the serialized issue as data.
// The unique term is IdTerm(repo slug, number). Throws nothing.
Xapian::Document BuildDocument(const v1::IssueWithComments& issue);

// ReadDocument parses the data of a document made by BuildDocument.
absl::StatusOr<v1::IssueWithComments> ReadDocument(const Xapian::Document& doc);

// DocumentVersion returns the version a document was built from: the newest updated_at (in
// unix nanoseconds) of the issue and its comments. 0 when absent.
int64_t DocumentVersion(const Xapian::Document& doc);

// IssueVersion computes the same version for an issue about to be indexed.
int64_t IssueVersion(const v1::IssueWithComments& issue);

// NormalizeTermValue lower-cases a boolean term value (labels, logins, repos).
std::string NormalizeTermValue(const std::string& value);

}  // namespace issuescope::index
