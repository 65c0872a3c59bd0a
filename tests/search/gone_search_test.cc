// The gone issues of an index (deleted or transferred on the tracker): searched apart from the
// live ones, with the whole query language, and found by GetIssue, marked.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/index_layout.h"
#include "gtest/gtest.h"
#include "search/searcher.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

using testing::Corpus;
using testing::Numbers;

v1::SearchResponse MustSearch(Searcher& searcher, const std::string& query) {
  v1::SearchRequest request;
  request.set_query(query);
  absl::StatusOr<v1::SearchResponse> response = searcher.Search(request);
  EXPECT_TRUE(response.ok()) << query << ": " << response.status();
  return response.ok() ? *response : v1::SearchResponse();
}

// Issues the tracker reported deleted or transferred live in each shard's gone database:
// the live search never sees them, `is:deleted` / `is:transferred` search only them (with the
// whole query language), and GetIssue finds them marked.
TEST(SearcherPathTest, GoneIssuesAreSearchedApartFromTheLiveOnes) {
  char dir_template[] = "/tmp/issuescope-search-gone-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  constexpr uint32_t kShards = 3;
  std::vector<Xapian::WritableDatabase> shards = testing::WriteShardedCorpus(dir, kShards);
  std::map<int64_t, v1::IssueWithComments> issues;
  for (const testing::IssueSpec& spec : Corpus()) issues[spec.number] = testing::TaggedIssue(spec);
  std::unique_ptr<Searcher> searcher = Searcher::ForPath(dir);

  // No issue has gone yet: no gone database, no hits, no error.
  EXPECT_EQ(MustSearch(*searcher, "is:deleted").total(), 0);
  EXPECT_EQ(MustSearch(*searcher, "").total(), 7);

  // Issue 1 deleted, issue 6 transferred, issue 5 deleted: as the indexer moves them.
  auto go = [&](int64_t number, const std::string& transferred_to) {
    v1::IssueWithComments gone = issues[number];
    gone.mutable_issue()->set_deleted(true);
    gone.mutable_issue()->set_transferred_to(transferred_to);
    const std::string slug = RepoSlug(gone.issue().repo());
    const std::string shard_dir = dir + "/" + index::ShardDirName(index::ShardOf(slug, kShards));
    shards[index::ShardOf(slug, kShards)].delete_document(index::IdTerm(slug, number));
    Xapian::WritableDatabase gone_db(index::GonePath(shard_dir), Xapian::DB_CREATE_OR_OPEN);
    gone_db.replace_document(index::IdTerm(slug, number), index::BuildGoneDocument(gone));
    gone_db.commit();
  };
  go(1, "");
  go(5, "");
  go(6, "gitee:mindspore/mindspore-archive#60");
  for (Xapian::WritableDatabase& shard : shards) shard.commit();

  EXPECT_EQ(MustSearch(*searcher, "").total(), 4);
  EXPECT_EQ(Numbers(MustSearch(*searcher, "illegal")), std::vector<int64_t>{2})
      << "the live search lost the deleted issue 1";
  v1::SearchResponse deleted = MustSearch(*searcher, "is:deleted");
  EXPECT_EQ(deleted.total(), 2);
  std::vector<int64_t> numbers = Numbers(deleted);
  std::sort(numbers.begin(), numbers.end());
  EXPECT_EQ(numbers, (std::vector<int64_t>{1, 5}));
  for (const v1::SearchHit& hit : deleted.hits()) {
    EXPECT_TRUE(hit.deleted());
    EXPECT_EQ(hit.transferred_to(), "");
  }
  v1::SearchResponse moved = MustSearch(*searcher, "is:transferred");
  ASSERT_EQ(moved.hits_size(), 1);
  EXPECT_EQ(moved.hits(0).number(), 6);
  EXPECT_TRUE(moved.hits(0).deleted());
  EXPECT_EQ(moved.hits(0).transferred_to(), "gitee:mindspore/mindspore-archive#60");
  EXPECT_EQ(moved.hits(0).title(), "内存泄漏问题");
  // The rest of the language works on them: text, qualifiers, lists, negation.
  EXPECT_EQ(Numbers(MustSearch(*searcher, "is:deleted illegal")), std::vector<int64_t>{1});
  EXPECT_EQ(Numbers(MustSearch(*searcher, "is:deleted repo:tensorflow/tensorflow")),
            std::vector<int64_t>{5});
  EXPECT_EQ(MustSearch(*searcher, "is:deleted,transferred").total(), 3);
  EXPECT_EQ(Numbers(MustSearch(*searcher, "tracker:gitee -is:deleted")), std::vector<int64_t>{6});
  EXPECT_EQ(MustSearch(*searcher, "is:transferred leak").total(), 0);

  v1::AggregateRequest aggregate;
  aggregate.set_query("is:deleted");
  aggregate.add_dimensions("tracker");
  absl::StatusOr<v1::AggregateResponse> counts = searcher->Aggregate(aggregate);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->total(), 2);
  v1::ExportRequest export_request;
  export_request.set_query("is:transferred");
  std::vector<v1::SearchHit> exported;
  ASSERT_TRUE(searcher
                  ->Export(export_request,
                           [&](const v1::SearchHit& hit) {
                             exported.push_back(hit);
                             return absl::OkStatus();
                           })
                  .ok());
  ASSERT_EQ(exported.size(), 1u);
  EXPECT_EQ(exported[0].transferred_to(), "gitee:mindspore/mindspore-archive#60");

  absl::StatusOr<v1::IssueWithComments> issue = searcher->GetIssue("github:pytorch/pytorch", 1);
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_TRUE(issue->issue().deleted());
  EXPECT_EQ(issue->issue().title(), "CUDA illegal memory access in matmul");
  EXPECT_TRUE(absl::IsNotFound(searcher->GetIssue("github:pytorch/pytorch", 99).status()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::search
