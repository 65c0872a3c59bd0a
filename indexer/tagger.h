// Tagger: the place where taxonomy tagging plugs into indexing. IndexWriter calls it on every
// issue just before building its Xapian document; without one (the default), issues keep the
// tags they arrived with (the crawler's store leaves them empty).
//
// Implementations are owned by the caller, must outlive the IndexWriter, and are called under
// the writer's mutex (one call at a time).
#pragma once

#include "issuescope/v1/model.pb.h"

namespace issuescope::indexer {

class Tagger {
 public:
  virtual ~Tagger() = default;
  // Tag fills `issue->issue().tags()` from the issue's text, labels and comments.
  virtual void Tag(v1::IssueWithComments* issue) = 0;
};

}  // namespace issuescope::indexer
