// DocidSample must match about the asked fraction of document ids, spread evenly over the id
// range of every sub-database, and combine with other queries through skip_to.
#include "search/docid_sample.h"

#include <vector>

#include <gtest/gtest.h>

#include "xapian.h"

namespace issuescope::search {
namespace {

// Database with `n` documents; even ids carry the term "even".
Xapian::WritableDatabase Numbers(int n) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  for (int i = 1; i <= n; ++i) {
    Xapian::Document doc;
    doc.add_boolean_term("all");
    if (i % 2 == 0) doc.add_boolean_term("even");
    db.add_document(doc);
  }
  return db;
}

std::vector<Xapian::docid> Matches(const Xapian::Database& db, const Xapian::Query& query) {
  Xapian::Enquire enquire(db);
  enquire.set_query(query);
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  enquire.set_docid_order(Xapian::Enquire::ASCENDING);
  std::vector<Xapian::docid> out;
  const Xapian::MSet mset = enquire.get_mset(0, db.get_doccount() + 1);
  for (auto it = mset.begin(); it != mset.end(); ++it) out.push_back(*it);
  return out;
}

Xapian::Query Sample(double fraction, int windows) {
  return Xapian::Query((new DocidSample(fraction, windows))->release());
}

TEST(DocidSample, CoversTheFractionEvenly) {
  Xapian::WritableDatabase db = Numbers(10000);
  const std::vector<Xapian::docid> ids = Matches(db, Sample(0.05, 64));
  EXPECT_GE(ids.size(), 500u);
  EXPECT_LE(ids.size(), 500u + 64u);  // each window rounds up by less than one id
  // Every tenth of the id range holds its share.
  std::vector<int> tenths(10, 0);
  for (Xapian::docid id : ids) ++tenths[(id - 1) / 1000];
  for (int t = 0; t < 10; ++t) {
    EXPECT_GE(tenths[t], 40) << "tenth " << t;
    EXPECT_LE(tenths[t], 65) << "tenth " << t;
  }
}

TEST(DocidSample, FiltersAnotherQueryBySkipping) {
  Xapian::WritableDatabase db = Numbers(2000);
  const std::vector<Xapian::docid> sample = Matches(db, Sample(0.1, 16));
  const std::vector<Xapian::docid> both = Matches(
      db, Xapian::Query(Xapian::Query::OP_FILTER, Xapian::Query("even"), Sample(0.1, 16)));
  std::vector<Xapian::docid> expected;
  for (Xapian::docid id : sample) {
    if (id % 2 == 0) expected.push_back(id);
  }
  EXPECT_EQ(both, expected);
  EXPECT_GT(both.size(), 80u);
}

TEST(DocidSample, WholeRangeTinyFractionsAndEmptyDatabases) {
  Xapian::WritableDatabase db = Numbers(300);
  EXPECT_EQ(Matches(db, Sample(1.0, 256)).size(), 300u);
  EXPECT_EQ(Matches(db, Sample(2.5, 4)).size(), 300u);  // clamped to 1
  // More windows than the sample's size: one id per window, still about the fraction.
  const size_t small = Matches(db, Sample(0.02, 256)).size();
  EXPECT_GE(small, 6u);
  EXPECT_LE(small, 7u);
  EXPECT_EQ(Matches(db, Sample(1e-12, 8)).size(), 1u);  // at least one id
  Xapian::WritableDatabase empty(std::string(), Xapian::DB_BACKEND_INMEMORY);
  EXPECT_TRUE(Matches(empty, Sample(0.5, 8)).empty());
}

TEST(DocidSample, SamplesEverySubDatabaseAlike) {
  Xapian::WritableDatabase a = Numbers(4000);
  Xapian::WritableDatabase b = Numbers(1000);
  Xapian::Database both;
  both.add_database(a);
  both.add_database(b);
  // Ids interleave: odd ids are a's, even ids b's (the sub-databases' own ids 1..n).
  const std::vector<Xapian::docid> ids = Matches(both, Sample(0.1, 32));
  int from_a = 0, from_b = 0;
  for (Xapian::docid id : ids) (id % 2 == 1 ? from_a : from_b)++;
  EXPECT_GE(from_a, 400);
  EXPECT_LE(from_a, 432);
  EXPECT_GE(from_b, 100);
  EXPECT_LE(from_b, 132);
}

}  // namespace
}  // namespace issuescope::search
