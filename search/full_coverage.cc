#include "search/full_coverage.h"

#include <utility>

#include "search/match_split.h"

namespace issuescope::search {
namespace {

// TermPostings matches the documents of one term, read through Database::postlist_begin: the
// term's own posting list in every shard, which the matcher does not swap.
class TermPostings : public Xapian::PostingSource {
 public:
  explicit TermPostings(std::string term) : term_(std::move(term)) {}
  void init(const Xapian::Database& db) override {
    it_ = db.postlist_begin(term_);
    end_ = db.postlist_end(term_);
    termfreq_ = db.get_termfreq(term_);
    started_ = false;
  }
  Xapian::doccount get_termfreq_min() const override { return termfreq_; }
  Xapian::doccount get_termfreq_est() const override { return termfreq_; }
  Xapian::doccount get_termfreq_max() const override { return termfreq_; }
  void next(double /*min_wt*/) override {
    if (started_) {
      ++it_;
    } else {
      started_ = true;
    }
  }
  void skip_to(Xapian::docid did, double /*min_wt*/) override {
    started_ = true;
    it_.skip_to(did);
  }
  bool at_end() const override { return started_ && it_ == end_; }
  Xapian::docid get_docid() const override { return *it_; }
  TermPostings* clone() const override { return new TermPostings(term_); }
  // For Xapian's remote protocol (search/remote_registry.h).
  std::string name() const override { return "issuescope.TermPostings"; }
  std::string serialise() const override { return term_; }
  TermPostings* unserialise_with_registry(const std::string& serialised,
                                          const Xapian::Registry& /*r*/) const override {
    return new TermPostings(serialised);
  }
  std::string get_description() const override { return "TermPostings(" + term_ + ")"; }

 private:
  const std::string term_;
  Xapian::PostingIterator it_, end_;
  Xapian::doccount termfreq_ = 0;
  bool started_ = false;
};

// SomeShardIsRisky is true when a shard of `db` has `term` in every document and gaps in its
// document ids: the case Xapian 1.4.22 fails on.
bool SomeShardIsRisky(const Xapian::Database& db, const std::string& term) {
  bool risky = false;
  VisitShards(db, [&](const Xapian::Database& shard) {
    const Xapian::doccount documents = shard.get_doccount();
    if (documents > 0 && shard.get_lastdocid() != documents &&
        shard.get_termfreq(term) == documents) {
      risky = true;
    }
  });
  return risky;
}

}  // namespace

Xapian::Query FilterTerm(const Xapian::Database& db, const std::string& term) {
  const Xapian::doccount documents = db.get_doccount();
  const Xapian::doccount termfreq = db.get_termfreq(term);
  if (documents == 0 || termfreq == 0) return Xapian::Query(term);
  // Every document of every shard: the same matches, from the real all-documents list (a
  // fresh match-all: copying the static Query::MatchAll from several threads races on its
  // reference count).
  if (termfreq == documents) return Xapian::Query(std::string());
  if (db.size() < 2) return Xapian::Query(term);  // not in every document of the one database
  // Sharded: the swap happens per shard, where the term may be in every document.
  if (SomeShardIsRisky(db, term)) return Xapian::Query((new TermPostings(term))->release());
  return Xapian::Query(term);
}

bool HasDeletedDocuments(const Xapian::Database& db) {
  if (db.size() < 2) return db.get_lastdocid() != db.get_doccount();
  for (const ShardShare& shard : ListShards(db)) {
    if (shard.last_docid != shard.documents) return true;
  }
  return false;
}

CountingWeight::CountingWeight() { need_stat(WDF); }

CountingWeight* CountingWeight::clone() const { return new CountingWeight(); }

std::string CountingWeight::name() const { return "issuescope::CountingWeight"; }

void CountingWeight::init(double /*factor*/) {}

double CountingWeight::get_sumpart(Xapian::termcount, Xapian::termcount,
                                   Xapian::termcount) const {
  return 0;
}

double CountingWeight::get_maxpart() const { return 0; }

double CountingWeight::get_sumextra(Xapian::termcount, Xapian::termcount) const { return 0; }

double CountingWeight::get_maxextra() const { return 0; }

void SetUnrankedScheme(Xapian::Enquire& enquire, const Xapian::Database& db) {
  if (HasDeletedDocuments(db)) {
    enquire.set_weighting_scheme(CountingWeight());
  } else {
    enquire.set_weighting_scheme(Xapian::BoolWeight());
  }
}

void RegisterFullCoverageSources(Xapian::Registry* registry) {
  registry->register_posting_source(TermPostings(std::string()));
}

}  // namespace issuescope::search
