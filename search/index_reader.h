// Opening an index for searching (the indexer writes it: common/index_layout.h).
#pragma once

#include <string>

#include "xapian.h"

namespace issuescope::search {

// OpenIndexForReading opens an index directory for searching: the stub when the directory has
// one, else the directory as one database. Throws what Xapian throws (DatabaseOpeningError
// while the index does not exist yet); callers convert at their edge.
Xapian::Database OpenIndexForReading(const std::string& index_dir);

}  // namespace issuescope::search
