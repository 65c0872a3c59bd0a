// Working around a bug of Xapian 1.4.22 (Debian 12's libxapian30): when a term indexes every
// document of a database (or of one shard of a sharded one) and Xapian will not use its wdf (a
// weightless filter, or any term under BoolWeight), the matcher swaps the term's posting list
// for the database's all-documents list, renamed to the term. Where documents were deleted
// (docids with gaps) that list is read chunk by chunk, and its second chunk fails the name
// check: DatabaseCorruptError "Unexpected end of posting list for '<term>'" — for `repo:o/r` on
// an index of one repository, `is:issue` on an index without pull requests, `is:deleted` on a
// gone database, as soon as one issue was deleted. The database itself is sound (xapian-check
// finds nothing) and a contiguous one is never affected.
//
// FilterTerm builds every weightless term filter of the query language; CountingWeight
// replaces BoolWeight in unranked passes over an index with deleted documents, so the text
// terms of those passes keep their own posting lists. tests/search/full_coverage_test.cc
// reproduces the bug and checks both. Plain functions; thread-safe.
#pragma once

#include <string>

#include "xapian.h"

namespace issuescope::search {

// FilterTerm is the query of a weightless filter on `term` over `db`, equal in matches to
// Xapian::Query(term): match-all when the term indexes every document of `db`; a posting source
// over the term's own posting list (never swapped) when `db` is sharded and some shard with
// deleted documents has the term in every document (found by a probe set up in each shard: one
// small Enquire); else the plain term. Throws what Xapian throws.
Xapian::Query FilterTerm(const Xapian::Database& db, const std::string& term);

// HasDeletedDocuments is true when some shard of `db` has gaps in its document ids (documents
// were deleted). Throws what Xapian throws.
bool HasDeletedDocuments(const Xapian::Database& db);

// CountingWeight weighs every match 0, as BoolWeight does, but asks Xapian for wdfs, so no text
// term is swapped for the all-documents list. Slower than BoolWeight per posting: unranked
// passes use it only over an index with deleted documents (UnrankedScheme).
class CountingWeight : public Xapian::Weight {
 public:
  CountingWeight();
  CountingWeight* clone() const override;
  std::string name() const override;
  void init(double factor) override;
  double get_sumpart(Xapian::termcount wdf, Xapian::termcount doclen,
                     Xapian::termcount uniqterms) const override;
  double get_maxpart() const override;
  double get_sumextra(Xapian::termcount doclen, Xapian::termcount uniqterms) const override;
  double get_maxextra() const override;
};

// SetUnrankedScheme sets the weighting scheme of an unranked pass over `db`: BoolWeight, or
// CountingWeight when `db` has deleted documents. Throws what Xapian throws.
void SetUnrankedScheme(Xapian::Enquire& enquire, const Xapian::Database& db);

// RegisterFullCoverageSources adds FilterTerm's posting source to a registry for Xapian's
// remote protocol (search/remote_registry.h).
void RegisterFullCoverageSources(Xapian::Registry* registry);

}  // namespace issuescope::search
