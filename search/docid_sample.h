// DocidSample is a Xapian PostingSource matching an evenly spread sample of each (sub-)database's
// document ids: `windows` equal windows of consecutive ids, one at the start of each of
// `windows` equal stretches of the id range, together covering `fraction` of it. ANDed with a
// query (OP_FILTER), the matcher visits only the query's matches inside the windows, skipping
// the rest with skip_to, so counting facets of a query with a million matches over a sample
// costs about as much as over the sample's size. Many narrow windows keep the sample stratified
// by position: an index filled repository by repository (or shard by shard) is sampled evenly,
// not its first-indexed part.
//
// With a sharded index (a stub database) Xapian clones the source per shard and document ids
// are the shard's own, so every shard is sampled in the same proportion.
#pragma once

#include <string>
#include <vector>

#include "xapian.h"

namespace issuescope::search {

// kSampleWindows is the number of windows per database the search service samples with.
inline constexpr int kSampleWindows = 256;

class DocidSample : public Xapian::PostingSource {
 public:
  // DocidSample covers `fraction` (clamped to (0, 1]) of each database's id range with
  // `windows` windows (at least 1).
  DocidSample(double fraction, int windows);

  // fraction is the covered fraction asked for.
  double fraction() const { return fraction_; }

  // PostingSource.
  void init(const Xapian::Database& db) override;
  Xapian::doccount get_termfreq_min() const override;
  Xapian::doccount get_termfreq_est() const override;
  Xapian::doccount get_termfreq_max() const override;
  void next(double min_wt) override;
  void skip_to(Xapian::docid did, double min_wt) override;
  bool at_end() const override;
  Xapian::docid get_docid() const override;
  DocidSample* clone() const override;
  std::string get_description() const override;
  // For Xapian's remote protocol (search/remote_registry.h).
  std::string name() const override { return "issuescope.DocidSample"; }
  std::string serialise() const override;
  DocidSample* unserialise_with_registry(const std::string& serialised,
                                         const Xapian::Registry& registry) const override;

 private:
  // Settle moves current_ to the first id at or after it that lies in a window.
  void Settle();

  const double fraction_;
  const int windows_;
  // [first, last] of each window, ascending; set by init.
  std::vector<std::pair<Xapian::docid, Xapian::docid>> ranges_;
  Xapian::doccount covered_ = 0;
  size_t window_ = 0;          // index of the window current_ lies in (or the next one)
  Xapian::docid current_ = 0;  // 0 before the first next/skip_to
  bool at_end_ = false;
};

}  // namespace issuescope::search
