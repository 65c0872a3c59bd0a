// Tagger: the place where taxonomy tagging plugs into indexing. IndexWriter calls it on every
// issue just before building its Xapian document; without one (the default), issues keep the
// tags they arrived with (the crawler's store leaves them empty). The Retagger calls it again on
// stored documents when the tagger's Fingerprint differs from the one the index records.
//
// Implementations are owned by the caller and must outlive the IndexWriter / Retagger. Tag may
// be called from several threads at once (one per shard writer, and the re-tagger), so
// implementations must be safe for concurrent use (TaxonomyTagger is immutable).
#pragma once

#include <string>

#include "issuescope/v1/model.pb.h"

namespace issuescope::indexer {

class Tagger {
 public:
  virtual ~Tagger() = default;
  // Tag fills `issue->issue().tags()` from the issue's title, body, labels and repository; the
  // comments are not read.
  virtual void Tag(v1::IssueWithComments* issue) = 0;
  // Fingerprint identifies what the tags depend on (taxonomy version and file bytes, model);
  // the index records it (index::kTaggerMetadataKey) and is re-tagged when it changes.
  // "" (the default) means "unversioned": such a tagger never triggers a re-tag.
  virtual std::string Fingerprint() const { return std::string(); }
};

}  // namespace issuescope::indexer
