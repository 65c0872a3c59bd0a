// The weighting scheme of ranked free-text search (a Xapian::Weight), used by FetchPage
// (search/pager.h) and the counting passes.
//
// Thread-safety: as any Xapian::Weight, one object per Enquire (Xapian clones it per term).
#pragma once

#include <string>

#include "xapian.h"

namespace issuescope::search {

// RankingWeight is the weighting of free-text matches: BM25 with k1 = index::kRankingK1 and
// no document-length term at query time (b = 0): the length is already folded into each term's
// wdf when indexing (common/index_text.h: section weights, the title's weight, BM25's b
// against a fixed pivot), so scoring a match needs only its terms' wdf, never its document's
// length, which was most of the cost of weighing every match (docs/BENCHMARKS.md, "Search
// latency"). The idf is computed as Xapian's BM25Weight does (a term in more than half the
// documents keeps a small positive weight). A match's part is read from a per-term table for
// small wdfs (Xapian's BM25Weight divides for every posting), and quantised to 2^-36 so that
// a split search ranks exactly as one pass (search/match_split.h).
class RankingWeight : public Xapian::Weight {
 public:
  RankingWeight();
  RankingWeight* clone() const override;
  void init(double factor) override;
  std::string name() const override { return "issuescope.RankingWeight"; }
  std::string serialise() const override { return ""; }
  RankingWeight* unserialise(const std::string& serialised) const override;
  double get_sumpart(Xapian::termcount wdf, Xapian::termcount doclen,
                     Xapian::termcount uniqterms) const override;
  double get_maxpart() const override;
  double get_sumextra(Xapian::termcount doclen, Xapian::termcount uniqterms) const override;
  double get_maxextra() const override;

 private:
  static constexpr Xapian::termcount kTable = 64;
  // Part is termweight · wdf / (k1 + wdf).
  double Part(Xapian::termcount wdf) const;
  // PartOf is Part quantised, and at least one quantum when wdf > 0 (and the term weighs).
  double PartOf(Xapian::termcount wdf) const;
  // kQuantumScale is 2^36: weights are multiples of its inverse. Fine enough that postings of
  // different wdf keep different weights even for a word in every document (idf near 0): when a
  // million postings weigh the same, Xapian's matcher compares each one with the page's last
  // (measured: `python` at 1M issues, 70 ms with 2^-20, docs/BENCHMARKS.md).
  static constexpr double kQuantumScale = 68719476736.0;
  // Quantized rounds a weight to a multiple of 1 / kQuantumScale.
  static double Quantized(double w);
  double termweight_ = 0;
  double table_[kTable] = {};
};

}  // namespace issuescope::search
