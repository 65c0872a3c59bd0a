#include "ranking_weight.h"

#include <algorithm>
#include <cmath>

#include "common/index_text.h"

namespace issuescope::search {

RankingWeight::RankingWeight() {
  need_stat(COLLECTION_SIZE);
  need_stat(RSET_SIZE);
  need_stat(TERMFREQ);
  need_stat(RELTERMFREQ);
  need_stat(WDF);
  need_stat(WDF_MAX);
  need_stat(WQF);
}

RankingWeight* RankingWeight::clone() const { return new RankingWeight(); }

RankingWeight* RankingWeight::unserialise(const std::string& /*serialised*/) const {
  return new RankingWeight();
}

void RankingWeight::init(double factor) {
  constexpr double k1 = index::kRankingK1, k3 = 1;
  // Robertson–Spärck Jones idf without relevance information, as Xapian's BM25Weight: a term
  // in more than half the documents would weigh less than nothing; ratios below 2 are mapped
  // into [1, 2) so that every term keeps a small positive weight.
  const double tf = get_termfreq();
  double ratio = (get_collection_size() - tf + 0.5) / (tf + 0.5);
  if (ratio < 2) ratio = ratio * 0.5 + 1;
  const double wqf = get_wqf();
  termweight_ = std::log(ratio) * factor * ((k3 + 1) * wqf / (k3 + wqf)) * (k1 + 1);
  for (Xapian::termcount wdf = 0; wdf < kTable; ++wdf) table_[wdf] = PartOf(wdf);
}

// Weights are multiples of 2^-36, so that adding a document's parts gives the same score in any
// order (exactly, while a score stays below 2^17: doubles carry 53 bits): Xapian's matcher
// regroups the sum as it prunes (an OR decays to AND_MAYBE, …), and a split search
// (search/match_split.h) must rank exactly as one pass, ties included.
double RankingWeight::Quantized(double w) {
  constexpr double kScale = kQuantumScale;
  return std::round(w * kScale) / kScale;
}

double RankingWeight::Part(Xapian::termcount wdf) const {
  constexpr double k1 = index::kRankingK1;
  const double w = wdf;
  return termweight_ * (w / (k1 + w));
}

double RankingWeight::PartOf(Xapian::termcount wdf) const {
  // A posting that weighs something in the text (wdf > 0) never rounds to 0: a word in nearly
  // every document (`python` in every environment dump) has a tiny idf, and were all its
  // postings to weigh exactly 0, Xapian's matcher could not tell the few that count from the
  // rest and would keep every one of a million postings as a candidate.
  constexpr double kQuantum = 1.0 / kQuantumScale;
  if (wdf == 0 || termweight_ <= 0) return 0;
  return std::max(kQuantum, Quantized(Part(wdf)));
}

double RankingWeight::get_sumpart(Xapian::termcount wdf, Xapian::termcount /*doclen*/,
                                  Xapian::termcount /*uniqterms*/) const {
  return wdf < kTable ? table_[wdf] : PartOf(wdf);
}

double RankingWeight::get_maxpart() const {
  return PartOf(get_wdf_upper_bound()) + 1.0 / kQuantumScale;
}

double RankingWeight::get_sumextra(Xapian::termcount /*doclen*/,
                                   Xapian::termcount /*uniqterms*/) const {
  return 0;
}

double RankingWeight::get_maxextra() const { return 0; }

}  // namespace issuescope::search
