#include "proximity.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "common/text_tokens.h"

namespace issuescope::search {

std::vector<std::string> ProximityTerms(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const std::string& w : words) {
    for (const TextToken& t : Tokens(w)) {
      if (t.kind == TextToken::Kind::kWord) {
        out.push_back(t.text);
      } else {
        out.insert(out.end(), t.parts.begin(), t.parts.end());
      }
    }
  }
  if (out.size() < 2) out.clear();
  return out;
}

namespace {

// Positions reads up to kMaxPositionsRead positions of `term` in `did` (empty when absent).
std::vector<Xapian::termpos> Positions(const Xapian::Database& db, Xapian::docid did,
                                       const std::string& term) {
  std::vector<Xapian::termpos> out;
  try {
    for (Xapian::PositionIterator p = db.positionlist_begin(did, term),
                                  end = db.positionlist_end(did, term);
         p != end && out.size() < kMaxPositionsRead; ++p) {
      out.push_back(*p);
    }
  } catch (const Xapian::DatabaseModifiedError&) {
    throw;
  } catch (const Xapian::RangeError&) {
    out.clear();  // the term is not in this document
  } catch (const Xapian::DocNotFoundError&) {
    out.clear();
  }
  return out;
}

// PairCredit is 1 when some position of `b` follows one of `a` directly, kNearCredit when one
// lies within kNearDistance of one of `a`, else 0. Both lists are ascending.
double PairCredit(const std::vector<Xapian::termpos>& a, const std::vector<Xapian::termpos>& b) {
  if (a.empty() || b.empty()) return 0;
  bool near = false;
  size_t j = 0;
  for (const Xapian::termpos p : a) {
    // First position of b at or after p - kNearDistance.
    const Xapian::termpos low = p > kNearDistance ? p - kNearDistance : 0;
    while (j < b.size() && b[j] < low) ++j;
    for (size_t k = j; k < b.size() && b[k] <= p + kNearDistance; ++k) {
      if (b[k] == p + 1) return 1.0;
      if (b[k] != p) near = true;
    }
  }
  return near ? kNearCredit : 0.0;
}

}  // namespace

double PairProximity(const Xapian::Database& db, Xapian::docid did,
                     const std::vector<std::string>& terms) {
  if (terms.size() < 2) return 0;
  std::map<std::string, std::vector<Xapian::termpos>> positions;
  for (const std::string& term : terms) {
    if (positions.find(term) == positions.end()) positions.emplace(term, Positions(db, did, term));
  }
  double credit = 0;
  for (size_t i = 0; i + 1 < terms.size(); ++i) {
    credit += PairCredit(positions[terms[i]], positions[terms[i + 1]]);
  }
  const double pairs = credit / static_cast<double>(terms.size() - 1);
  if (pairs < 1.0) return pairs;
  // Every pair adjacent: is the whole query one phrase somewhere?
  for (const Xapian::termpos start : positions[terms[0]]) {
    bool all = true;
    for (size_t i = 1; i < terms.size() && all; ++i) {
      const std::vector<Xapian::termpos>& p = positions[terms[i]];
      all = std::binary_search(p.begin(), p.end(), start + static_cast<Xapian::termpos>(i));
    }
    if (all) return 1.0 + kPhraseCredit;
  }
  return pairs;
}

}  // namespace issuescope::search
