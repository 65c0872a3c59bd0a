// The bulk indexer end to end on small inputs (bounded: tens of issues): newest copy wins,
// tombstones drop issues, every issue lands in its ShardOf shard, feed positions and the tagger
// fingerprint are recorded, the free-text scheme answers plain words, phrases, wildcards and
// in:title|body|comments, and bad input fails with a message naming it.
#include "indexer/bulk_indexer.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/index_document.h"
#include "search/index_reader.h"
#include "search/text_query.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/index_text.h"
#include "common/repo_slug.h"
#include "crawler/issue_store.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "indexer/bulk_source.h"

namespace issuescope::indexer {
namespace {

using ::testing::HasSubstr;

v1::IssueWithComments MakeIssue(const std::string& repo, int64_t number, int64_t updated,
                                 const std::string& title, const std::string& body,
                                 const std::vector<std::string>& comments = {}) {
  v1::IssueWithComments iwc;
  v1::Issue* issue = iwc.mutable_issue();
  issue->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  issue->mutable_repo()->set_owner("org");
  issue->mutable_repo()->set_name(repo);
  issue->set_number(number);
  issue->set_title(title);
  issue->set_body(body);
  issue->set_state(v1::ISSUE_STATE_OPEN);
  issue->mutable_updated_at()->set_seconds(updated);
  issue->mutable_created_at()->set_seconds(1);
  int64_t id = number * 100;
  for (const std::string& text : comments) {
    v1::Comment* c = iwc.add_comments();
    *c->mutable_repo() = issue->repo();
    c->set_issue_number(number);
    c->set_id(++id);
    c->set_body(text);
    c->mutable_updated_at()->set_seconds(updated);
  }
  issue->set_comment_count(iwc.comments_size());
  return iwc;
}

class BulkIndexerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/bulk_indexer_test_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteJsonl(const std::vector<v1::IssueWithComments>& issues) {
    const std::string path = dir_ + "/issues.jsonl";
    std::ofstream out(path);
    for (const auto& issue : issues) {
      std::string line;
      google::protobuf::util::MessageToJsonString(issue, &line);
      out << line << "\n";
    }
    return path;
  }

  // Matches returns the issue numbers the free text `query` finds in `field`.
  std::set<int64_t> Matches(const std::string& index, index::TextField field,
                            const std::string& query) {
    Xapian::Database db = search::OpenIndexForReading(index);
    Xapian::Enquire enquire(db);
    const bool phrase = query.size() > 1 && query.front() == '"' && query.back() == '"';
    enquire.set_query(search::ScopeToField(
        *search::TextQuery(phrase ? query.substr(1, query.size() - 2) : query, phrase, field, db),
        field, db));
    std::set<int64_t> numbers;
    for (Xapian::MSetIterator it = enquire.get_mset(0, 1000).begin(); it != Xapian::MSetIterator();
         ++it) {
      absl::StatusOr<v1::IssueWithComments> iwc = index::ReadDocument(it.get_document());
      if (iwc.ok()) numbers.insert(iwc->issue().number());
    }
    return numbers;
  }

  std::string dir_;
};

// A fake tagger: sets a theme and reports a fingerprint.
class ThemeTagger : public Tagger {
 public:
  void Tag(v1::IssueWithComments* issue) override {
    issue->mutable_issue()->mutable_tags()->set_theme("memory");
  }
  std::string Fingerprint() const override { return "test-tagger/1"; }
};

TEST_F(BulkIndexerTest, NewestCopyWinsTombstonesDropAndShardsFollowShardOf) {
  std::vector<v1::IssueWithComments> issues;
  for (int r = 0; r < 5; ++r) {
    for (int n = 1; n <= 6; ++n) {
      issues.push_back(MakeIssue(absl::StrCat("repo", r), n, 100, absl::StrCat("old title ", n),
                                 "plain body"));
    }
  }
  // Newer copies after their run was built (batch of 2), an older copy after a newer one, and
  // a tombstone.
  issues.push_back(MakeIssue("repo0", 1, 200, "renamed quasar", "new body"));
  issues.push_back(MakeIssue("repo1", 2, 50, "stale copy", "old body"));
  v1::IssueWithComments gone = MakeIssue("repo2", 3, 300, "deleted", "x");
  gone.mutable_issue()->set_deleted(true);
  issues.push_back(gone);

  absl::StatusOr<std::unique_ptr<IssueSource>> source = OpenJsonlSource({WriteJsonl(issues)});
  ASSERT_TRUE(source.ok()) << source.status();
  ThemeTagger tagger;
  BulkIndexOptions options;
  options.index_dir = dir_ + "/index";
  options.shards = 3;
  options.jobs = 2;
  options.batch_docs = 2;
  options.tagger = &tagger;
  absl::StatusOr<BulkIndexStats> stats = BuildIndex(**source, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->issues_read, 33);
  EXPECT_EQ(stats->documents, 29);
  EXPECT_EQ(stats->tombstones, 1);
  EXPECT_EQ(stats->superseded, 3);

  const std::vector<std::string> shards = index::ShardPaths(options.index_dir);
  ASSERT_EQ(shards.size(), 3u);
  int64_t total = 0;
  for (uint32_t s = 0; s < shards.size(); ++s) {
    Xapian::Database db(shards[s]);
    total += db.get_doccount();
    EXPECT_EQ(db.get_metadata(index::kTaggerMetadataKey), "test-tagger/1");
    for (Xapian::PostingIterator p = db.postlist_begin(""); p != db.postlist_end(""); ++p) {
      absl::StatusOr<v1::IssueWithComments> iwc = index::ReadDocument(db.get_document(*p));
      ASSERT_TRUE(iwc.ok());
      EXPECT_EQ(index::ShardOf(RepoSlug(iwc->issue().repo()), 3), s);
    }
  }
  EXPECT_EQ(total, 29);
  Xapian::Database all = search::OpenIndexForReading(options.index_dir);
  EXPECT_EQ(all.get_doccount(), 29u);
  EXPECT_EQ(all.get_termfreq(absl::StrCat(index::kThemePrefix, "memory")), 29u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "quasar"), std::set<int64_t>{1});
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "stale"), std::set<int64_t>{});
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "deleted"), std::set<int64_t>{});
  EXPECT_FALSE(std::filesystem::exists(options.index_dir + "/.bulk-runs"));
}

// Issues whose newest copy is a tombstone go to their shard's gone database (is:deleted,
// is:transferred), tagged; a tombstone superseded by a newer live copy does not.
TEST_F(BulkIndexerTest, TombstonesGoToTheGoneDatabaseOfTheirShard) {
  std::vector<v1::IssueWithComments> issues;
  for (int r = 0; r < 4; ++r) {
    for (int n = 1; n <= 3; ++n) {
      issues.push_back(MakeIssue(absl::StrCat("repo", r), n, 100, "live", "body"));
    }
  }
  v1::IssueWithComments deleted = MakeIssue("repo0", 1, 200, "deleted one", "x");
  deleted.mutable_issue()->set_deleted(true);
  v1::IssueWithComments moved = MakeIssue("repo1", 2, 200, "moved one", "x");
  moved.mutable_issue()->set_deleted(true);
  moved.mutable_issue()->set_transferred_to("github:org/elsewhere#7");
  v1::IssueWithComments back = MakeIssue("repo2", 3, 200, "deleted then back", "x");
  back.mutable_issue()->set_deleted(true);
  issues.push_back(deleted);
  issues.push_back(moved);
  issues.push_back(back);
  issues.push_back(MakeIssue("repo2", 3, 300, "back again", "x"));
  // An older live copy after the tombstone changes nothing.
  issues.push_back(MakeIssue("repo0", 1, 150, "older live copy", "x"));

  absl::StatusOr<std::unique_ptr<IssueSource>> source = OpenJsonlSource({WriteJsonl(issues)});
  ASSERT_TRUE(source.ok()) << source.status();
  ThemeTagger tagger;
  BulkIndexOptions options;
  options.index_dir = dir_ + "/index";
  options.shards = 3;
  options.jobs = 2;
  options.batch_docs = 2;
  options.tagger = &tagger;
  absl::StatusOr<BulkIndexStats> stats = BuildIndex(**source, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->documents, 10);
  EXPECT_EQ(stats->tombstones, 2);

  std::map<int64_t, v1::IssueWithComments> gone;
  int gone_dbs = 0;
  for (const std::string& shard : index::ShardPaths(options.index_dir)) {
    if (!std::filesystem::exists(index::GonePath(shard))) continue;
    ++gone_dbs;
    Xapian::Database db(index::GonePath(shard));
    for (Xapian::PostingIterator p = db.postlist_begin(""); p != db.postlist_end(""); ++p) {
      absl::StatusOr<v1::IssueWithComments> iwc = index::ReadDocument(db.get_document(*p));
      ASSERT_TRUE(iwc.ok());
      EXPECT_EQ(index::GonePath(shard),
                index::GonePath(absl::StrCat(
                    options.index_dir, "/",
                    index::ShardDirName(index::ShardOf(RepoSlug(iwc->issue().repo()), 3)))));
      gone[iwc->issue().number()] = *iwc;
    }
  }
  EXPECT_GE(gone_dbs, 1);
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[1].issue().title(), "deleted one");
  EXPECT_TRUE(gone[1].issue().deleted());
  EXPECT_EQ(gone[1].issue().tags().theme(), "memory");
  EXPECT_EQ(gone[2].issue().transferred_to(), "github:org/elsewhere#7");
  Xapian::Database all = search::OpenGoneForReading(options.index_dir);
  EXPECT_EQ(all.get_termfreq(absl::StrCat(index::kGonePrefix, "deleted")), 1u);
  EXPECT_EQ(all.get_termfreq(absl::StrCat(index::kGonePrefix, "transferred")), 1u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "back"), std::set<int64_t>{3});
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "one"), std::set<int64_t>{});
}

TEST_F(BulkIndexerTest, ReadsCrawlerStoresAndRecordsFeedPositions) {
  std::string store_id;
  uint64_t last_seq = 0;
  {
    absl::StatusOr<std::unique_ptr<crawler::IssueStore>> store =
        crawler::IssueStore::Open(dir_ + "/store");
    ASSERT_TRUE(store.ok()) << store.status();
    for (int r = 0; r < 3; ++r) {
      std::vector<v1::Issue> page;
      std::vector<v1::Comment> comments;
      for (int n = 1; n <= 4; ++n) {
        v1::IssueWithComments iwc =
            MakeIssue(absl::StrCat("r", r), r * 10 + n, 100 + n, absl::StrCat("title ", n),
                      "body text",
                      {absl::StrCat("a comment mentions zebra stripes ", n)});
        page.push_back(iwc.issue());
        comments.push_back(iwc.comments(0));
      }
      const std::string slug = RepoSlug(page[0].repo());
      ASSERT_TRUE((*store)->ApplyIssues(slug, 1, page).ok());
      ASSERT_TRUE((*store)->ApplyComments(slug, 1, comments).ok());
    }
    ASSERT_TRUE((*store)->MarkDeleted("github:org/r0", 1, 4).ok());
    store_id = (*store)->store_id();
    last_seq = (*store)->last_seq();
  }
  absl::StatusOr<std::unique_ptr<IssueSource>> source = OpenStoreSource({dir_ + "/store"});
  ASSERT_TRUE(source.ok()) << source.status();
  BulkIndexOptions options;
  options.index_dir = dir_ + "/index";
  options.shards = 2;
  options.jobs = 2;
  options.batch_docs = 3;
  absl::StatusOr<BulkIndexStats> stats = BuildIndex(**source, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->documents, 11);
  EXPECT_EQ(stats->tombstones, 1);
  std::map<std::string, uint64_t> positions = index::ReadFeedPositions(options.index_dir);
  ASSERT_EQ(positions.size(), 1u);
  EXPECT_EQ(positions[store_id], last_seq);

  // The free-text scheme: words, phrases in comments, wildcards, in:field.
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "\"zebra stripes\"").size(), 11u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "\"stripes zebra\"").size(), 0u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "zebr*").size(), 11u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kAll, "stripe").size(), 11u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kComments, "zebra").size(), 11u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kBody, "zebra").size(), 0u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kTitle, "zebra").size(), 0u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kTitle, "title").size(), 11u);
  EXPECT_EQ(Matches(options.index_dir, index::TextField::kBody, "\"body text\"").size(), 11u);
}

TEST_F(BulkIndexerTest, BadInputIsAClearError) {
  // A non-empty index directory.
  std::filesystem::create_directories(dir_ + "/index/something");
  absl::StatusOr<std::unique_ptr<IssueSource>> source =
      OpenJsonlSource({WriteJsonl({MakeIssue("r", 1, 1, "t", "b")})});
  ASSERT_TRUE(source.ok());
  BulkIndexOptions options;
  options.index_dir = dir_ + "/index";
  absl::StatusOr<BulkIndexStats> stats = BuildIndex(**source, options);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(stats.status().message()), HasSubstr("is not empty"));

  // A JSONL line that is not an issue.
  {
    std::ofstream out(dir_ + "/bad.jsonl");
    out << "\n{\"issue\": {\"number\": 1, \"title\": \"ok\"}}\n{\"issue\": [1, 2]}\n";
  }
  source = OpenJsonlSource({dir_ + "/bad.jsonl"});
  ASSERT_TRUE(source.ok());
  options.index_dir = dir_ + "/index2";
  stats = BuildIndex(**source, options);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(stats.status().message()), HasSubstr("line 3"));

  // Missing inputs.
  EXPECT_EQ(OpenJsonlSource({dir_ + "/missing.jsonl"}).status().code(),
            absl::StatusCode::kNotFound);
  source = OpenStoreSource({dir_ + "/no-store"});
  ASSERT_TRUE(source.ok());
  options.index_dir = dir_ + "/index3";
  stats = BuildIndex(**source, options);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(stats.status().message()), HasSubstr("no-store"));

  // Bad options.
  options.index_dir = dir_ + "/index4";
  options.batch_docs = 0;
  EXPECT_EQ(BuildIndex(**source, options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace issuescope::indexer
