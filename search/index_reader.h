// Opening an index for searching (the indexer writes it: common/index_layout.h).
#pragma once

#include <string>

#include "xapian.h"

namespace issuescope::search {

// OpenIndexForReading opens an index directory for searching: the stub when the directory has
// one, else the directory as one database. Throws what Xapian throws (DatabaseOpeningError
// while the index does not exist yet); callers convert at their edge.
Xapian::Database OpenIndexForReading(const std::string& index_dir);

// OpenGoneForReading opens the gone databases (common/index_layout.h, kGoneDirName) of every
// local database of an index as one database; an empty in-memory one when no issue has gone
// yet. Throws what Xapian throws.
Xapian::Database OpenGoneForReading(const std::string& index_dir);

// NamesGoneIssues is true when `query` has the qualifier `is:deleted` or `is:transferred`
// (anywhere, negated or not): such a query searches the gone issues instead of the live ones.
// False for a query that does not lex (the live search reports its error).
bool NamesGoneIssues(const std::string& query);

}  // namespace issuescope::search
