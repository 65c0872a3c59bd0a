#include "indexer/index_writer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/index_document.h"
#include "common/index_layout.h"
#include "common/repo_slug.h"
#include "search/text_query.h"
#include "common/index_schema.h"
#include "common/index_text.h"
#include "gtest/gtest.h"
#include "tests/indexer/test_issues.h"
#include "xapian.h"

namespace issuescope::indexer {
namespace {

using testing::Batch;
using testing::Delete;
using testing::MakeIssue;
using testing::Slug;
using testing::Upsert;

std::unique_ptr<IndexWriter> OpenInMemory(IndexWriterOptions options = {}) {
  auto writer = IndexWriter::Open(":memory:", options);
  EXPECT_TRUE(writer.ok()) << writer.status();
  return std::move(writer).value();
}

std::string TitleOf(const IndexWriter& writer, const std::string& repo, int64_t number) {
  auto issue = writer.Lookup(Slug(repo), number);
  return issue.ok() ? issue->issue().title() : std::string("<") + issue.status().ToString() + ">";
}

// A temporary directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "indexer_test_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Documents a separate reader sees in an on-disk index, by their unique term.
int64_t CommittedDocs(const std::string& path) {
  Xapian::Database reader(path);
  return reader.get_doccount();
}

TEST(IndexWriterTest, ApplyIndexesDocumentsAndStoresPosition) {
  auto writer = OpenInMemory();
  ApplyResult result;
  ASSERT_TRUE(writer
                  ->Apply(Batch("store-a", 7,
                                {Upsert(3, MakeIssue("pytorch/pytorch", 1, "CUDA OOM", 100)),
                                 Upsert(7, MakeIssue("pytorch/pytorch", 2, "NaN loss", 100))}),
                          &result)
                  .ok());
  EXPECT_EQ(result.upserted, 2);
  EXPECT_EQ(writer->DocumentCount(), 2);
  EXPECT_EQ(writer->Position("store-a"), 7u);
  EXPECT_EQ(writer->Position("store-b"), 0u);
  EXPECT_EQ(TitleOf(*writer, "pytorch/pytorch", 1), "CUDA OOM");
  EXPECT_EQ(TitleOf(*writer, "pytorch/pytorch", 2), "NaN loss");
  EXPECT_EQ(writer->Lookup(Slug("pytorch/pytorch"), 3).status().code(),
            absl::StatusCode::kNotFound);
}

// Batches the feed may deliver again after a reconnect: none of them may change anything.
TEST(IndexWriterTest, ReplayedBatchesChangeNothing) {
  const v1::ChangeBatch first =
      Batch("s", 5,
            {Upsert(2, MakeIssue("a/b", 1, "one", 100)), Upsert(5, MakeIssue("a/b", 2, "two", 100))});
  struct Case {
    std::string name;
    v1::ChangeBatch replay;
    int64_t already_consumed;
  };
  const std::vector<Case> cases = {
      {"same batch twice", first, 2},
      {"older batch with different content",
       Batch("s", 4, {Upsert(4, MakeIssue("a/b", 1, "rewritten", 900))}), 1},
      {"batch ending at the position",
       Batch("s", 5, {Upsert(5, MakeIssue("a/b", 3, "three", 900))}), 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto writer = OpenInMemory();
    ASSERT_TRUE(writer->Apply(first).ok());
    ApplyResult result;
    ASSERT_TRUE(writer->Apply(c.replay, &result).ok());
    EXPECT_EQ(result.already_consumed, c.already_consumed);
    EXPECT_EQ(result.consumed(), 0);
    EXPECT_EQ(writer->DocumentCount(), 2);
    EXPECT_EQ(writer->Position("s"), 5u);
    EXPECT_EQ(TitleOf(*writer, "a/b", 1), "one");
  }
}

TEST(IndexWriterTest, BatchOverlappingThePositionAppliesOnlyNewEvents) {
  auto writer = OpenInMemory();
  ASSERT_TRUE(writer->Apply(Batch("s", 5, {Upsert(5, MakeIssue("a/b", 1, "one", 100))})).ok());
  ApplyResult result;
  ASSERT_TRUE(writer
                  ->Apply(Batch("s", 8,
                                {Upsert(4, MakeIssue("a/b", 1, "old replay", 900)),
                                 Upsert(8, MakeIssue("a/b", 2, "two", 100))}),
                          &result)
                  .ok());
  EXPECT_EQ(result.already_consumed, 1);
  EXPECT_EQ(result.upserted, 1);
  EXPECT_EQ(TitleOf(*writer, "a/b", 1), "one");
  EXPECT_EQ(TitleOf(*writer, "a/b", 2), "two");
  EXPECT_EQ(writer->Position("s"), 8u);
}

// Versions: a stale worker must never roll an issue back; equal versions replace.
TEST(IndexWriterTest, VersionsDecideBetweenIndexedAndIncoming) {
  struct Case {
    std::string name;
    v1::ChangeEvent second;
    std::string want_title;  // "" means: the document is gone
    ApplyResult want;
  };
  auto issue_at = [](const std::string& title, int64_t updated_s) {
    return MakeIssue("a/b", 1, title, updated_s);
  };
  v1::ChangeEvent older_delete = Upsert(2, issue_at("old", 150));
  older_delete.set_kind(v1::CHANGE_KIND_DELETE);
  v1::ChangeEvent newer_delete = Upsert(2, issue_at("gone", 300));
  newer_delete.set_kind(v1::CHANGE_KIND_DELETE);
  v1::IssueWithComments tombstone = issue_at("tombstone", 300);
  tombstone.mutable_issue()->set_deleted(true);
  v1::IssueWithComments newer_comment = issue_at("current", 200);
  v1::Comment* comment = newer_comment.add_comments();
  comment->set_body("a newer comment");
  comment->mutable_updated_at()->set_seconds(250);
  // A stale worker's copy: an older issue state whose comment was edited after the indexed
  // issue state. The issue's own updated_at decides first.
  v1::IssueWithComments older_issue_newer_comment = issue_at("stale state", 150);
  v1::Comment* late = older_issue_newer_comment.add_comments();
  late->set_body("edited late");
  late->mutable_updated_at()->set_seconds(400);
  // The same issue state fetched later: fetch time breaks the tie.
  v1::IssueWithComments fetched_later = issue_at("fetched later", 200);
  fetched_later.mutable_issue()->mutable_fetched_at()->set_seconds(900);
  const std::vector<Case> cases = {
      {"newer version replaces", Upsert(2, issue_at("newer", 300)), "newer", {0, 1, 0, 0, 0}},
      {"equal version replaces", Upsert(2, issue_at("same time", 200)), "same time",
       {0, 1, 0, 0, 0}},
      {"older version is skipped", Upsert(2, issue_at("older", 150)), "current",
       {0, 0, 0, 1, 0}},
      {"newer comment makes a newer version", Upsert(2, newer_comment), "current",
       {0, 1, 0, 0, 0}},
      {"older issue with a newer comment edit is skipped", Upsert(2, older_issue_newer_comment),
       "current", {0, 0, 0, 1, 0}},
      {"same issue state fetched later replaces", Upsert(2, fetched_later), "fetched later",
       {0, 1, 0, 0, 0}},
      {"delete without state removes", Delete(2, "a/b", 1), "", {0, 0, 1, 0, 0}},
      {"delete newer than indexed removes", newer_delete, "", {0, 0, 1, 0, 0}},
      {"delete older than indexed is skipped", older_delete, "current", {0, 0, 0, 1, 0}},
      {"tombstone upsert removes", Upsert(2, tombstone), "", {0, 0, 1, 0, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto writer = OpenInMemory();
    ASSERT_TRUE(writer->Apply(Batch("s", 1, {Upsert(1, issue_at("current", 200))})).ok());
    ApplyResult result;
    ASSERT_TRUE(writer->Apply(Batch("s", 2, {c.second}), &result).ok());
    EXPECT_EQ(result.upserted, c.want.upserted);
    EXPECT_EQ(result.deleted, c.want.deleted);
    EXPECT_EQ(result.stale, c.want.stale);
    EXPECT_EQ(writer->Position("s"), 2u);
    if (c.want_title.empty()) {
      EXPECT_EQ(writer->DocumentCount(), 0);
    } else {
      EXPECT_EQ(TitleOf(*writer, "a/b", 1), c.want_title);
    }
  }
}

// The issue's updated_at orders first, then its newest comment's updated_at, then fetched_at,
// whatever order two stores' copies arrive in.
TEST(IndexWriterTest, IssueStateOrdersBeforeCommentEdits) {
  // Store "new" holds the newer issue state (closed at 300) with a comment last edited at 250;
  // store "old" (a fenced-off worker) holds the open state of 200 whose comment was edited at
  // 500 (an edit the newer store has not fetched yet).
  v1::IssueWithComments newer_state = MakeIssue("a/b", 1, "closed state", 300);
  newer_state.mutable_issue()->set_state(v1::ISSUE_STATE_CLOSED);
  v1::Comment* c1 = newer_state.add_comments();
  c1->set_body("first");
  c1->mutable_updated_at()->set_seconds(250);
  v1::IssueWithComments stale_state = MakeIssue("a/b", 1, "open state", 200);
  v1::Comment* c2 = stale_state.add_comments();
  c2->set_body("first, edited");
  c2->mutable_updated_at()->set_seconds(500);
  // Same issue updated_at as newer_state, newer comment edit: replaces.
  v1::IssueWithComments newer_comment = newer_state;
  newer_comment.mutable_issue()->set_title("closed state, comment edited");
  newer_comment.mutable_comments(0)->mutable_updated_at()->set_seconds(600);

  for (bool newer_first : {true, false}) {
    SCOPED_TRACE(newer_first ? "newer state first" : "stale state first");
    auto writer = OpenInMemory();
    const v1::ChangeBatch from_new = Batch("new", 1, {Upsert(1, newer_state)});
    const v1::ChangeBatch from_old = Batch("old", 1, {Upsert(1, stale_state)});
    ApplyResult first, second;
    ASSERT_TRUE(writer->Apply(newer_first ? from_new : from_old, &first).ok());
    ASSERT_TRUE(writer->Apply(newer_first ? from_old : from_new, &second).ok());
    EXPECT_EQ(TitleOf(*writer, "a/b", 1), "closed state");
    EXPECT_EQ(second.stale, newer_first ? 1 : 0);
    EXPECT_EQ(second.upserted, newer_first ? 0 : 1);

    ApplyResult edited;
    ASSERT_TRUE(writer->Apply(Batch("new", 2, {Upsert(2, newer_comment)}), &edited).ok());
    EXPECT_EQ(edited.upserted, 1);
    EXPECT_EQ(TitleOf(*writer, "a/b", 1), "closed state, comment edited");
    // Replaying the edit (equal version) rewrites the same document; the stale copy still loses.
    ApplyResult replay, stale;
    ASSERT_TRUE(writer->Apply(Batch("new2", 1, {Upsert(1, newer_comment)}), &replay).ok());
    EXPECT_EQ(replay.upserted, 1);
    ASSERT_TRUE(writer->Apply(Batch("old", 2, {Upsert(2, stale_state)}), &stale).ok());
    EXPECT_EQ(stale.stale, 1);
    EXPECT_EQ(TitleOf(*writer, "a/b", 1), "closed state, comment edited");
    EXPECT_EQ(writer->DocumentCount(), 1);
  }
}

// The version slot's encoding sorts like the versions, and a document whose slot holds the
// older decimal format still yields its version (from the stored issue).
TEST(IndexVersionTest, EncodingOrdersLikeVersionsAndOldSlotsFallBack) {
  using index::IndexVersion;
  const std::vector<IndexVersion> ascending = {
      {-5, 0, 0}, {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, -1, -1}, {1, 0, 0},
      {1000000000LL * 1700000000, 7, 3}, {1000000000LL * 1700000001, 0, 0}};
  for (size_t i = 0; i < ascending.size(); ++i) {
    const std::string enc = ascending[i].Encode();
    EXPECT_EQ(enc.size(), 48u);
    auto decoded = IndexVersion::Decode(enc);
    ASSERT_TRUE(decoded.has_value()) << enc;
    EXPECT_EQ(*decoded, ascending[i]) << decoded->DebugString();
    for (size_t j = i + 1; j < ascending.size(); ++j) {
      EXPECT_LT(ascending[i], ascending[j]) << i << " vs " << j;
      EXPECT_LT(enc, ascending[j].Encode()) << i << " vs " << j;
    }
  }
  EXPECT_FALSE(IndexVersion::Decode("1700000000000000000").has_value());
  EXPECT_FALSE(IndexVersion::Decode(std::string(48, 'g')).has_value());

  v1::IssueWithComments iwc = MakeIssue("a/b", 1, "t", 300);
  iwc.add_comments()->mutable_updated_at()->set_seconds(250);
  Xapian::Document doc = index::BuildDocument(iwc);
  EXPECT_EQ(index::DocumentVersion(doc), index::IssueVersion(iwc));
  doc.add_value(index::kVersionSlot, "300000000000");  // the old format: max updated_at in ns
  const IndexVersion fallback = index::DocumentVersion(doc);
  EXPECT_EQ(fallback.issue_updated_ns, 300000000000LL);
  EXPECT_EQ(fallback.comments_updated_ns, 250000000000LL);
}

TEST(IndexWriterTest, UpsertWithoutIssueIsSkippedButConsumed) {
  auto writer = OpenInMemory();
  v1::ChangeEvent comments_only = Delete(4, "a/b", 9);
  comments_only.set_kind(v1::CHANGE_KIND_UPSERT);
  comments_only.mutable_current()->add_comments()->set_body("early comment");
  ApplyResult result;
  ASSERT_TRUE(writer->Apply(Batch("s", 4, {comments_only}), &result).ok());
  EXPECT_EQ(result.without_issue, 1);
  EXPECT_EQ(writer->DocumentCount(), 0);
  EXPECT_EQ(writer->Position("s"), 4u);
}

TEST(IndexWriterTest, PositionsPerStoreAreIndependent) {
  auto writer = OpenInMemory();
  ASSERT_TRUE(writer->Apply(Batch("store-b", 10, {Upsert(10, MakeIssue("a/b", 1, "b1", 1))})).ok());
  ApplyResult result;
  ASSERT_TRUE(
      writer->Apply(Batch("store-a", 3, {Upsert(3, MakeIssue("c/d", 1, "a1", 1))}), &result).ok());
  EXPECT_EQ(result.upserted, 1);
  using Positions = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(writer->Positions(), (Positions{{"store-a", 3}, {"store-b", 10}}));
  EXPECT_EQ(writer->DocumentCount(), 2);
}

TEST(IndexWriterTest, InvalidBatchIsRejectedAndChangesNothing) {
  v1::ChangeEvent unknown_kind = Upsert(2, MakeIssue("a/b", 2, "x", 1));
  unknown_kind.set_kind(v1::CHANGE_KIND_UNSPECIFIED);
  v1::ChangeEvent nameless_delete = Delete(2, "a/b", 2);
  nameless_delete.clear_repo_slug();
  struct Case {
    std::string name;
    v1::ChangeBatch batch;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"no store id", Batch("", 2, {Upsert(2, MakeIssue("a/b", 2, "x", 1))}), "no store_id"},
      {"event above last_seq", Batch("s", 2, {Upsert(3, MakeIssue("a/b", 2, "x", 1))}),
       "event seq 3 is above the batch's last_seq 2"},
      {"unknown kind", Batch("s", 2, {Upsert(1, MakeIssue("a/b", 3, "y", 1)), unknown_kind}),
       "event seq 2 has unknown kind 0"},
      {"delete naming nothing", Batch("s", 2, {nameless_delete}), "names no repository"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto writer = OpenInMemory();
    ASSERT_TRUE(writer->Apply(Batch("s", 1, {Upsert(1, MakeIssue("a/b", 1, "one", 1))})).ok());
    absl::Status status = writer->Apply(c.batch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.message_part), absl::string_view::npos) << status;
    EXPECT_EQ(writer->DocumentCount(), 1);
    EXPECT_EQ(writer->Position("s"), 1u);
  }
}

// A tagger sees each issue before it is indexed; its tags become search terms.
class KindTagger : public Tagger {
 public:
  void Tag(v1::IssueWithComments* issue) override {
    issue->mutable_issue()->mutable_tags()->set_taxonomy("test/1");
    issue->mutable_issue()->mutable_tags()->set_kind("bug");
  }
};

TEST(IndexWriterTest, TaggerTagsIssuesBeforeIndexing) {
  KindTagger tagger;
  IndexWriterOptions options;
  options.tagger = &tagger;
  auto writer = OpenInMemory(options);
  ASSERT_TRUE(writer->Apply(Batch("s", 1, {Upsert(1, MakeIssue("a/b", 1, "one", 1))})).ok());
  auto issue = writer->Lookup(Slug("a/b"), 1);
  ASSERT_TRUE(issue.ok()) << issue.status();
  EXPECT_EQ(issue->issue().tags().kind(), "bug");
}

TEST(IndexWriterTest, ReopenFromDiskKeepsDocumentsAndPositionsSearchable) {
  TempDir dir;
  const std::string path = dir.Sub("index");
  {
    auto writer = IndexWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)
                    ->Apply(Batch("s1", 4,
                                  {Upsert(2, MakeIssue("vllm/vllm", 7, "tokenizer crash", 50)),
                                   Upsert(4, MakeIssue("vllm/vllm", 8, "slow decoding", 50))}))
                    .ok());
    ASSERT_TRUE((*writer)->Apply(Batch("s2", 9, {Delete(9, "vllm/vllm", 99)})).ok());
  }
  auto reopened = IndexWriter::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->DocumentCount(), 2);
  EXPECT_EQ((*reopened)->Position("s1"), 4u);
  EXPECT_EQ((*reopened)->Position("s2"), 9u);
  EXPECT_EQ(TitleOf(**reopened, "vllm/vllm", 8), "slow decoding");
  reopened->reset();

  // A separate reader (as the search service) finds the issue by its Q term and by its words.
  Xapian::Database reader(path);
  EXPECT_EQ(reader.get_termfreq(index::IdTerm(Slug("vllm/vllm"), 7)), 1u);
  Xapian::Enquire enquire(reader);
  // Free text is parsed as the search service does (common/index_text.h owns the scheme).
  enquire.set_query(*search::TextQuery("tokenizer", false, index::TextField::kAll, reader));
  Xapian::MSet hits = enquire.get_mset(0, 10);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(reader.get_metadata("feed:s1"), "4");
}

TEST(IndexWriterTest, GroupedCommitsCommitDocumentsWithTheirPositions) {
  TempDir dir;
  const std::string path = dir.Sub("index");
  FakeClock clock;
  IndexWriterOptions options;
  options.max_pending_events = 3;
  options.max_commit_delay = absl::Seconds(5);
  options.clock = &clock;
  auto writer = IndexWriter::Open(path, options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  IndexWriter& w = **writer;

  ASSERT_TRUE(w.Apply(Batch("s", 1, {Upsert(1, MakeIssue("a/b", 1, "one", 1))})).ok());
  EXPECT_EQ(w.DocumentCount(), 1);  // the writer sees its pending group
  EXPECT_EQ(w.Position("s"), 1u);
  EXPECT_EQ(CommittedDocs(path), 0);  // a reader does not, yet
  ASSERT_TRUE(w.FlushIfDue().ok());
  EXPECT_EQ(CommittedDocs(path), 0);

  clock.Advance(absl::Seconds(5));
  ASSERT_TRUE(w.FlushIfDue().ok());
  EXPECT_EQ(CommittedDocs(path), 1);

  ASSERT_TRUE(w.Apply(Batch("s", 3,
                            {Upsert(2, MakeIssue("a/b", 2, "two", 1)),
                             Upsert(3, MakeIssue("a/b", 3, "three", 1))}))
                  .ok());
  EXPECT_EQ(CommittedDocs(path), 1);
  ASSERT_TRUE(w.Apply(Batch("s", 4, {Upsert(4, MakeIssue("a/b", 4, "four", 1))})).ok());
  EXPECT_EQ(CommittedDocs(path), 4);  // three pending events reached max_pending_events
  EXPECT_EQ(Xapian::Database(path).get_metadata("feed:s"), "4");
}

// A crash between commits loses documents and positions together: after reopening, the index
// holds exactly what its committed positions cover, so the feed replays the rest.
TEST(IndexWriterTest, CrashBeforeCommitLosesDocumentsAndPositionsTogether) {
  TempDir dir;
  const std::string path = dir.Sub("index");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FakeClock clock;
    IndexWriterOptions options;
    options.max_pending_events = 1000;
    options.clock = &clock;
    auto writer = IndexWriter::Open(path, options);
    if (!writer.ok()) _exit(3);
    if (!(*writer)->Apply(Batch("s", 2, {Upsert(2, MakeIssue("a/b", 1, "kept", 1))})).ok()) {
      _exit(4);
    }
    if (!(*writer)->Flush().ok()) _exit(5);
    if (!(*writer)->Apply(Batch("s", 5, {Upsert(5, MakeIssue("a/b", 2, "lost", 1)),
                                         Upsert(5, MakeIssue("a/b", 1, "lost too", 9))}))
             .ok()) {
      _exit(6);
    }
    _exit(0);  // crash: no destructor, no commit
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 0);

  auto reopened = IndexWriter::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->Position("s"), 2u);
  EXPECT_EQ((*reopened)->DocumentCount(), 1);
  EXPECT_EQ(TitleOf(**reopened, "a/b", 1), "kept");
  EXPECT_EQ((*reopened)->Lookup(Slug("a/b"), 2).status().code(), absl::StatusCode::kNotFound);
}

// Deleted and transferred issues leave the live index for the gone database, with their last
// indexed state; a copy of that state does not bring them back, a newer one does.
TEST(IndexWriterTest, TombstonesMoveIssuesToTheGoneDatabase) {
  TempDir dir;
  const std::string path = dir.Sub("index");
  v1::IssueWithComments deleted = MakeIssue("a/b", 1, "segfault in attention", 200);
  v1::IssueWithComments transferred = MakeIssue("a/b", 2, "docs typo", 200);
  {
    auto writer = IndexWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    v1::IssueWithComments with_comment = deleted;
    with_comment.add_comments()->set_body("same on 2.1");
    ASSERT_TRUE((*writer)
                    ->Apply(Batch("s", 3, {Upsert(1, with_comment), Upsert(2, transferred),
                                           Upsert(3, MakeIssue("a/b", 3, "stays", 200))}))
                    .ok());
    EXPECT_EQ((*writer)->GoneCount(), 0);
    EXPECT_FALSE(std::filesystem::exists(index::GonePath(path)))
        << "no gone database before the first tombstone";

    // The store's tombstones: the issue without its comments, marked deleted.
    v1::IssueWithComments tomb1 = deleted;
    tomb1.mutable_issue()->set_deleted(true);
    v1::ChangeEvent gone1 = Upsert(4, tomb1);
    gone1.set_kind(v1::CHANGE_KIND_DELETE);
    v1::IssueWithComments tomb2 = transferred;
    tomb2.mutable_issue()->set_deleted(true);
    tomb2.mutable_issue()->set_transferred_to("github:c/d#9");
    v1::ChangeEvent gone2 = Upsert(5, tomb2);
    gone2.set_kind(v1::CHANGE_KIND_DELETE);
    ApplyResult result;
    ASSERT_TRUE((*writer)->Apply(Batch("s", 5, {gone1, gone2}), &result).ok());
    EXPECT_EQ(result.deleted, 2);
    EXPECT_EQ((*writer)->DocumentCount(), 1);
    EXPECT_EQ((*writer)->GoneCount(), 2);
    EXPECT_TRUE(absl::IsNotFound((*writer)->Lookup(Slug("a/b"), 1).status()));

    // A replayed copy of the last live state (another worker's older store) stays out.
    result = ApplyResult();
    ASSERT_TRUE((*writer)->Apply(Batch("s2", 1, {Upsert(1, deleted)}), &result).ok());
    EXPECT_EQ(result.stale, 1);
    EXPECT_EQ(result.upserted, 0);
    EXPECT_EQ((*writer)->DocumentCount(), 1);
  }
  // Both databases are on disk, committed.
  auto writer = IndexWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->DocumentCount(), 1);
  EXPECT_EQ((*writer)->GoneCount(), 2);
  auto one = (*writer)->LookupGone(Slug("a/b"), 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(one->issue().deleted());
  EXPECT_EQ(one->issue().title(), "segfault in attention");
  ASSERT_EQ(one->comments_size(), 1) << "the gone record keeps the indexed comments";
  EXPECT_EQ(one->comments(0).body(), "same on 2.1");
  EXPECT_EQ(one->issue().transferred_to(), "");
  auto two = (*writer)->LookupGone(Slug("a/b"), 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->issue().transferred_to(), "github:c/d#9");
  {
    Xapian::Database gone(index::GonePath(path));
    EXPECT_EQ(gone.get_termfreq(std::string(index::kGonePrefix) + "deleted"), 1u);
    EXPECT_EQ(gone.get_termfreq(std::string(index::kGonePrefix) + "transferred"), 1u);
    Xapian::Database live(path);
    EXPECT_EQ(live.get_termfreq(std::string(index::kGonePrefix) + "deleted"), 0u);
  }

  // A newer version brings issue 1 back and takes it out of the gone database.
  ApplyResult result;
  ASSERT_TRUE(
      (*writer)->Apply(Batch("s", 6, {Upsert(6, MakeIssue("a/b", 1, "restored", 400))}), &result)
          .ok());
  EXPECT_EQ(result.upserted, 1);
  EXPECT_EQ(TitleOf(**writer, "a/b", 1), "restored");
  EXPECT_TRUE(absl::IsNotFound((*writer)->LookupGone(Slug("a/b"), 1).status()));
  EXPECT_EQ((*writer)->GoneCount(), 1);

  // A DELETE without state of an issue never indexed: a gone record with what it names.
  ASSERT_TRUE((*writer)->Apply(Batch("s", 7, {Delete(7, "a/b", 44)})).ok());
  auto bare = (*writer)->LookupGone(Slug("a/b"), 44);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->issue().number(), 44);
  EXPECT_EQ(RepoSlug(bare->issue().repo()), Slug("a/b"));
}

// A deletion later known as a transfer keeps the recorded state (comments, tags); a tombstone
// older than the record changes nothing; a copy fetched before the tombstone (later than the
// indexed one, but before the issue was seen gone) does not bring it back.
// Tags each issue with the number of its Tag call ("call-1", "call-2", …).
class CountingTagger : public Tagger {
 public:
  void Tag(v1::IssueWithComments* issue) override {
    issue->mutable_issue()->mutable_tags()->set_kind("call-" + std::to_string(++calls_));
  }

 private:
  int calls_ = 0;
};

TEST(IndexWriterTest, GoneRecordsKeepTheirStateAndVersion) {
  CountingTagger tagger;
  IndexWriterOptions options;
  options.tagger = &tagger;
  auto writer = OpenInMemory(options);
  v1::IssueWithComments live = MakeIssue("a/b", 1, "kernel hang", 200);
  live.mutable_issue()->mutable_fetched_at()->set_seconds(1000);
  live.add_comments()->set_body("also on 2.2");
  ASSERT_TRUE(writer->Apply(Batch("s", 1, {Upsert(1, live)})).ok());

  v1::IssueWithComments tomb = MakeIssue("a/b", 1, "kernel hang", 200);
  tomb.mutable_issue()->set_deleted(true);
  tomb.mutable_issue()->mutable_fetched_at()->set_seconds(3000);  // when it was seen gone
  v1::ChangeEvent deleted = Upsert(2, tomb);
  deleted.set_kind(v1::CHANGE_KIND_DELETE);
  ASSERT_TRUE(writer->Apply(Batch("s", 2, {deleted})).ok());

  v1::IssueWithComments moved = tomb;
  moved.mutable_issue()->set_transferred_to("github:c/d#3");
  moved.mutable_issue()->mutable_fetched_at()->set_seconds(4000);
  v1::ChangeEvent transferred = Upsert(3, moved);
  transferred.set_kind(v1::CHANGE_KIND_DELETE);
  ASSERT_TRUE(writer->Apply(Batch("s", 3, {transferred})).ok());
  auto gone = writer->LookupGone(Slug("a/b"), 1);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->issue().transferred_to(), "github:c/d#3");
  ASSERT_EQ(gone->comments_size(), 1) << "the second tombstone dropped the recorded comments";
  EXPECT_EQ(gone->issue().tags().kind(), "call-1") << "the tags given when it was indexed";

  // An older tombstone (another store's, before the transfer was known) changes nothing.
  ASSERT_TRUE(writer->Apply(Batch("s2", 2, {deleted})).ok());
  EXPECT_EQ(writer->LookupGone(Slug("a/b"), 1)->issue().transferred_to(), "github:c/d#3");

  // A copy fetched after the indexed one but before the issue was seen gone stays out.
  v1::IssueWithComments late = live;
  late.mutable_issue()->mutable_fetched_at()->set_seconds(2000);
  ApplyResult result;
  ASSERT_TRUE(writer->Apply(Batch("s3", 1, {Upsert(1, late)}), &result).ok());
  EXPECT_EQ(result.stale, 1);
  EXPECT_EQ(writer->DocumentCount(), 0);
}

// Tombstones and copies are weighed by when they were observed, not by their comments: a
// tombstone whose store holds older comments than the index still deletes, and a copy with a
// newer comment that was fetched before the issue was seen gone stays out.
TEST(IndexWriterTest, TombstonesAndCopiesAreWeighedByWhenTheyWereSeen) {
  auto writer = OpenInMemory();
  v1::IssueWithComments indexed = MakeIssue("a/b", 1, "oom", 200);
  indexed.mutable_issue()->mutable_fetched_at()->set_seconds(1000);
  v1::Comment* late = indexed.add_comments();
  late->set_body("newer comment from another worker");
  late->mutable_updated_at()->set_seconds(500);
  ASSERT_TRUE(writer->Apply(Batch("s", 1, {Upsert(1, indexed)})).ok());

  v1::IssueWithComments tomb = MakeIssue("a/b", 1, "oom", 200);  // this store: no comments
  tomb.mutable_issue()->set_deleted(true);
  tomb.mutable_issue()->set_transferred_to("github:x/y#2");
  tomb.mutable_issue()->mutable_fetched_at()->set_seconds(3000);
  ApplyResult result;
  ASSERT_TRUE(writer->Apply(Batch("t", 1, {Upsert(1, tomb)}), &result).ok());
  EXPECT_EQ(result.deleted, 1);
  EXPECT_EQ(writer->DocumentCount(), 0);
  EXPECT_EQ(writer->LookupGone(Slug("a/b"), 1)->issue().transferred_to(), "github:x/y#2");

  v1::IssueWithComments before = indexed;
  before.mutable_comments(0)->mutable_updated_at()->set_seconds(2500);
  before.mutable_issue()->mutable_fetched_at()->set_seconds(2600);
  result = ApplyResult();
  ASSERT_TRUE(writer->Apply(Batch("u", 1, {Upsert(1, before)}), &result).ok());
  EXPECT_EQ(result.stale, 1);

  // Fetched after the tombstone was seen: the issue is back.
  v1::IssueWithComments after = before;
  after.mutable_issue()->mutable_fetched_at()->set_seconds(3500);
  result = ApplyResult();
  ASSERT_TRUE(writer->Apply(Batch("u", 2, {Upsert(2, after)}), &result).ok());
  EXPECT_EQ(result.upserted, 1);
  EXPECT_TRUE(absl::IsNotFound(writer->LookupGone(Slug("a/b"), 1).status()));

  // A tombstone seen before that copy was fetched does not remove it again.
  result = ApplyResult();
  ASSERT_TRUE(writer->Apply(Batch("t", 2, {Upsert(2, tomb)}), &result).ok());
  EXPECT_EQ(result.stale, 1);
  EXPECT_EQ(writer->DocumentCount(), 1);
}

TEST(IndexWriterTest, InMemoryIndexKeepsGoneIssuesToo) {
  auto writer = OpenInMemory();
  v1::IssueWithComments tomb = MakeIssue("a/b", 5, "moved", 100);
  tomb.mutable_issue()->set_deleted(true);
  tomb.mutable_issue()->set_transferred_to("github:x/y#1");
  ASSERT_TRUE(writer->Apply(Batch("s", 2, {Upsert(1, MakeIssue("a/b", 5, "moved", 100)),
                                           Upsert(2, tomb)}))
                  .ok());
  EXPECT_EQ(writer->DocumentCount(), 0);
  auto gone = writer->LookupGone(Slug("a/b"), 5);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->issue().transferred_to(), "github:x/y#1");
}

TEST(IndexWriterTest, LockedIndexIsAClearError) {
  TempDir dir;
  const std::string path = dir.Sub("index");
  auto first = IndexWriter::Open(path);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = IndexWriter::Open(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(), "index " + path + " is locked by another indexer");
}

TEST(IndexWriterTest, UnopenablePathIsAClearError) {
  TempDir dir;
  const std::string path = dir.Sub("not-a-dir");
  std::ofstream(path) << "plain file";
  auto writer = IndexWriter::Open(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(writer.status().message().find("cannot open index " + path), std::string::npos)
      << writer.status();
}

}  // namespace
}  // namespace issuescope::indexer
