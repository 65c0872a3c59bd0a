// Proximity (search/proximity.h): the query's positional terms, and the credit a document earns
// for holding neighbouring query words adjacent, near, or as the whole phrase, on documents
// indexed as the indexer does (index::BuildDocument) in a real Xapian database.
#include "search/proximity.h"

#include <string>
#include <vector>

#include "common/index_document.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ProximityTermsTest, WordsAndIdentifierPartsInQueryOrder) {
  EXPECT_THAT(ProximityTerms({"KV", "cache"}), ElementsAre("kv", "cache"));
  EXPECT_THAT(ProximityTerms({"pin_memory()", "Slow"}), ElementsAre("pin", "memory", "slow"));
  EXPECT_THAT(ProximityTerms({"RuntimeError"}), ElementsAre("runtime", "error"));
  // One word, or nothing searchable: no proximity to weigh.
  EXPECT_THAT(ProximityTerms({"cache"}), IsEmpty());
  EXPECT_THAT(ProximityTerms({"--", "()"}), IsEmpty());
  EXPECT_THAT(ProximityTerms({}), IsEmpty());
}

class PairProximityTest : public ::testing::Test {
 protected:
  PairProximityTest() : db_(std::string(), Xapian::DB_BACKEND_INMEMORY) {}

  // Add indexes an issue with `body` (title "report") and returns its document id.
  Xapian::docid Add(const std::string& body) {
    testing::IssueSpec spec{v1::TRACKER_GITHUB, "o", "r", ++number_, "report", body, {},
                            v1::ISSUE_STATE_OPEN, false, "alice", {},
                            "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", 0, {}};
    return db_.add_document(index::BuildDocument(testing::MakeIssue(spec)));
  }
  double F(Xapian::docid did, const std::vector<std::string>& terms) {
    return PairProximity(db_, did, terms);
  }

  Xapian::WritableDatabase db_;
  int64_t number_ = 0;
};

TEST_F(PairProximityTest, AdjacentNearFarAndWholePhrase) {
  const Xapian::docid phrase = Add("the kv cache is full");
  const Xapian::docid reversed = Add("the cache kv is full");
  const Xapian::docid near = Add("kv blocks the cache");
  const Xapian::docid far = Add("kv blocks up all of the cache");
  const Xapian::docid absent = Add("kv only");
  // Two words adjacent in order are the whole query as a phrase: both credits.
  EXPECT_DOUBLE_EQ(F(phrase, {"kv", "cache"}), 1.0 + kPhraseCredit);
  // The other order, or three positions apart, is near.
  EXPECT_DOUBLE_EQ(F(reversed, {"kv", "cache"}), kNearCredit);
  EXPECT_DOUBLE_EQ(F(near, {"kv", "cache"}), kNearCredit);
  EXPECT_DOUBLE_EQ(F(far, {"kv", "cache"}), 0.0);
  EXPECT_DOUBLE_EQ(F(absent, {"kv", "cache"}), 0.0);
  EXPECT_DOUBLE_EQ(F(phrase, {"kv"}), 0.0);
  EXPECT_DOUBLE_EQ(F(phrase, {}), 0.0);
}

TEST_F(PairProximityTest, FractionOfPairsAndPhraseOnlyWhenWhole) {
  // Every pair adjacent, but never all three in one run: pairs only.
  const Xapian::docid split = Add("out of luck and plenty of memory");
  const Xapian::docid whole = Add("cuda out of memory again");
  const Xapian::docid half = Add("out of disk space and then memory");
  EXPECT_DOUBLE_EQ(F(split, {"out", "of", "memory"}), 1.0);
  EXPECT_DOUBLE_EQ(F(whole, {"out", "of", "memory"}), 1.0 + kPhraseCredit);
  EXPECT_DOUBLE_EQ(F(half, {"out", "of", "memory"}), 0.5);
  // A repeated query word is weighed per pair.
  EXPECT_DOUBLE_EQ(F(whole, {"out", "of", "out"}), 0.5 * (1.0 + kNearCredit));
}

TEST_F(PairProximityTest, FieldsAndSectionsAreNotOnePhrase) {
  // The title ends with "kv", the body starts with "cache": a gap of positions between fields.
  testing::IssueSpec spec{v1::TRACKER_GITHUB, "o", "r", 99, "slow kv", "cache misses", {},
                          v1::ISSUE_STATE_OPEN, false, "alice", {},
                          "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", 0, {}};
  const Xapian::docid did = db_.add_document(index::BuildDocument(testing::MakeIssue(spec)));
  EXPECT_DOUBLE_EQ(F(did, {"kv", "cache"}), 0.0);
  EXPECT_DOUBLE_EQ(F(did, {"slow", "kv"}), 1.0 + kPhraseCredit);
}

TEST_F(PairProximityTest, LongDocumentsAreBoundedAndStillWeighed) {
  std::string body;
  for (size_t i = 0; i < kMaxPositionsRead + 10; ++i) body += "kv ";
  body += "kv cache";
  const Xapian::docid did = Add(body);
  // The adjacent pair lies past the positions read: no credit, and no failure.
  EXPECT_DOUBLE_EQ(F(did, {"kv", "cache"}), 0.0);
  const Xapian::docid early = Add("kv cache " + body);
  EXPECT_DOUBLE_EQ(F(early, {"kv", "cache"}), 1.0 + kPhraseCredit);
}

TEST_F(PairProximityTest, DocumentThatIsGoneEarnsNothing) {
  const Xapian::docid did = Add("the kv cache");
  db_.delete_document(did);
  EXPECT_DOUBLE_EQ(F(did, {"kv", "cache"}), 0.0);
}

}  // namespace
}  // namespace issuescope::search
