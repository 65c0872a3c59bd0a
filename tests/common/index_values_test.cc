// Values the index stores per document (common/index_facets.h, common/index_document.h): the
// facet slot's encoding and the version that orders copies of one issue.
#include <string>
#include <utility>
#include <vector>

#include "common/index_document.h"
#include "common/index_facets.h"
#include "common/index_schema.h"
#include "common/time_util.h"
#include "gtest/gtest.h"

namespace issuescope::index {
namespace {

v1::IssueWithComments Issue() {
  v1::IssueWithComments iwc;
  v1::Issue* issue = iwc.mutable_issue();
  issue->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  issue->mutable_repo()->set_owner("vllm-project");
  issue->mutable_repo()->set_name("vLLM");
  issue->set_number(12);
  issue->add_labels("bug");
  issue->add_labels("Bug");  // deduplicated after lower-casing
  issue->add_labels("rocm");
  issue->set_state(v1::ISSUE_STATE_CLOSED);
  issue->set_author("Alice");
  *issue->mutable_created_at() = ToProto(absl::FromUnixSeconds(1704067200));  // 2024-01-01
  issue->mutable_tags()->set_taxonomy("llm-dl/1");
  issue->mutable_tags()->set_kind("bug");
  issue->mutable_tags()->set_theme("bug.memory");
  issue->mutable_tags()->add_secondary_themes("bug.performance");
  issue->mutable_tags()->set_llm(true);
  return iwc;
}

TEST(IndexValuesTest, FacetValuesOfAnIssue) {
  const FacetValues v = IssueFacetValues(Issue());
  auto of = [&](FacetField f) { return v[static_cast<size_t>(f)]; };
  EXPECT_EQ(of(FacetField::kRepo), std::vector<std::string>{"github:vllm-project/vllm"});
  EXPECT_EQ(of(FacetField::kLabel), (std::vector<std::string>{"bug", "rocm"}));
  EXPECT_EQ(of(FacetField::kState), std::vector<std::string>{"closed"});
  EXPECT_EQ(of(FacetField::kType), std::vector<std::string>{"issue"});
  EXPECT_EQ(of(FacetField::kTheme), (std::vector<std::string>{"bug.memory", "bug.performance"}));
  EXPECT_EQ(of(FacetField::kLlm), std::vector<std::string>{"true"});
  EXPECT_EQ(of(FacetField::kAuthor), std::vector<std::string>{"alice"});
  EXPECT_EQ(of(FacetField::kYear), std::vector<std::string>{"2024"});
  EXPECT_EQ(of(FacetField::kTracker), std::vector<std::string>{"github"});
}

TEST(IndexValuesTest, UntaggedIssuesHaveNoLlmFacet) {
  v1::IssueWithComments iwc = Issue();
  iwc.mutable_issue()->clear_tags();
  EXPECT_TRUE(IssueFacetValues(iwc)[static_cast<size_t>(FacetField::kLlm)].empty());
}

TEST(IndexValuesTest, FacetSlotRoundTripsAndRejectsMalformedValues) {
  const FacetValues v = IssueFacetValues(Issue());
  const std::string encoded = EncodeFacetValues(v);
  std::optional<FacetValues> back = DecodeFacetValues(encoded);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, v);
  EXPECT_FALSE(DecodeFacetValues("").has_value());
  EXPECT_FALSE(DecodeFacetValues(encoded.substr(0, encoded.size() - 1)).has_value());  // no NUL
  EXPECT_FALSE(DecodeFacetValues(std::string("Zvalue\0", 7)).has_value());  // unknown code
}

TEST(IndexValuesTest, FacetNamesAreFound) {
  for (const FacetInfo& info : FacetInfos()) {
    const FacetInfo* found = FindFacet(info.name);
    ASSERT_NE(found, nullptr) << info.name;
    EXPECT_EQ(found->field, info.field);
    EXPECT_NE(FacetNames().find(info.name), std::string::npos);
  }
  EXPECT_EQ(FindFacet("Repo"), nullptr);  // exact, lower case
  EXPECT_EQ(FindFacet("nope"), nullptr);
}

TEST(IndexValuesTest, VersionsOrderByIssueThenCommentsThenFetch) {
  const IndexVersion a{100, 500, 900};
  const IndexVersion b{100, 600, 1};    // a comment edited later
  const IndexVersion c{101, 0, 0};      // the issue itself is newer: wins over any comment
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(a, (IndexVersion{100, 500, 900}));
  EXPECT_NE(a, (IndexVersion{100, 500, 901}));
  // The encoding sorts as the versions do, negative times included.
  const IndexVersion before_epoch{-5, 0, 0};
  const IndexVersion versions[] = {before_epoch, IndexVersion{}, a, b, c};
  for (size_t i = 0; i + 1 < std::size(versions); ++i) {
    EXPECT_LT(versions[i].Encode(), versions[i + 1].Encode()) << i;
  }
  for (const IndexVersion& v : versions) {
    EXPECT_EQ(v.Encode().size(), 48u);
    std::optional<IndexVersion> back = IndexVersion::Decode(v.Encode());
    ASSERT_TRUE(back.has_value()) << v.DebugString();
    EXPECT_EQ(*back, v);
  }
}

TEST(IndexValuesTest, MalformedVersionsDoNotDecode) {
  const std::string good = IndexVersion{1, 2, 3}.Encode();
  EXPECT_FALSE(IndexVersion::Decode("").has_value());
  EXPECT_FALSE(IndexVersion::Decode(good.substr(1)).has_value());
  std::string upper = good;
  upper[47] = 'G';
  EXPECT_FALSE(IndexVersion::Decode(upper).has_value());
  std::string capital = good;
  capital[0] = 'A';
  EXPECT_FALSE(IndexVersion::Decode(capital).has_value());
  EXPECT_FALSE(IndexVersion::Decode("1700000000").has_value());  // the old decimal slot
}

TEST(IndexValuesTest, IssueVersionReadsTheIssueAndItsNewestComment) {
  v1::IssueWithComments iwc = Issue();
  *iwc.mutable_issue()->mutable_updated_at() = ToProto(absl::FromUnixSeconds(10));
  *iwc.mutable_issue()->mutable_fetched_at() = ToProto(absl::FromUnixSeconds(30));
  *iwc.add_comments()->mutable_updated_at() = ToProto(absl::FromUnixSeconds(20));
  *iwc.add_comments()->mutable_updated_at() = ToProto(absl::FromUnixSeconds(15));
  const IndexVersion v = IssueVersion(iwc);
  EXPECT_EQ(v.issue_updated_ns, 10'000'000'000);
  EXPECT_EQ(v.comments_updated_ns, 20'000'000'000);
  EXPECT_EQ(v.fetched_ns, 30'000'000'000);
}


// SortKey orders as the pair (value, number) does, ascending, with an empty value first and
// zero bytes inside values (sortable_serialise makes them) kept in order; reversed, as the pair
// descending. Checked over every pair of a set of values that includes prefixes of each other.
TEST(SortKeyTest, OrdersAsThePairOfValueAndNumber) {
  const std::vector<std::string> values = {
      "", std::string("\0", 1), std::string("\0\0", 2), std::string("\0\xff", 2), "a",
      std::string("a\0", 2), "ab", "b", Xapian::sortable_serialise(0),
      Xapian::sortable_serialise(1), Xapian::sortable_serialise(7), Xapian::sortable_serialise(1e9)};
  const std::vector<std::string> numbers = {Xapian::sortable_serialise(1),
                                            Xapian::sortable_serialise(5),
                                            Xapian::sortable_serialise(12)};
  int compared = 0;
  for (const std::string& a : values) {
    for (const std::string& n : numbers) {
      for (const std::string& b : values) {
        for (const std::string& m : numbers) {
          const std::pair<std::string, std::string> left(a, n), right(b, m);
          EXPECT_EQ(SortKey(a, n) < SortKey(b, m), left < right)
              << testing::PrintToString(a) << "," << testing::PrintToString(n) << " vs "
              << testing::PrintToString(b) << "," << testing::PrintToString(m);
          EXPECT_EQ(SortKey(a, n) == SortKey(b, m), left == right);
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 12 * 3 * 12 * 3);
}

// Every document carries the three sort keys, made from its own slots.
TEST(SortKeyTest, BuildDocumentStoresTheSortKeys) {
  const Xapian::Document doc = BuildDocument(Issue());
  const std::string number = doc.get_value(kNumberSlot);
  ASSERT_FALSE(number.empty());
  EXPECT_EQ(doc.get_value(kCreatedSortSlot), SortKey(doc.get_value(kCreatedSlot), number));
  EXPECT_EQ(doc.get_value(kUpdatedSortSlot), SortKey(doc.get_value(kUpdatedSlot), number));
  EXPECT_EQ(doc.get_value(kCommentsSortSlot), SortKey(doc.get_value(kCommentsSlot), number));
  EXPECT_EQ(doc.get_value(kUpdatedSlot), "") << "the fixture has no updated_at: an empty value";
}

}  // namespace
}  // namespace issuescope::index
