// The Xapian::Registry of issuescope's own Xapian classes, by name, for Xapian's remote
// protocol: a shard server (search/shard_main.cc) unserialises from it what a searcher sends
// (the weighting scheme, posting sources, match spies). Names carry a version
// ("issuescope.RankingWeight" is version 1): a server and a searcher must run the same code, and
// a class whose serialised form changes takes a new name, so a mismatch fails with "not
// registered" instead of silently misreading.
//
// Thread-compatible: build one registry per thread (Xapian's reference counts are not atomic).
#pragma once

#include "xapian.h"

namespace issuescope::search {

// RemoteRegistry returns a registry holding Xapian's built-in classes and issuescope's.
Xapian::Registry RemoteRegistry();

}  // namespace issuescope::search
