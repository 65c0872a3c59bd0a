// ShardedIndexWriter against real on-disk Xapian in a temp dir: routing by ShardOf, the stub
// readers open, per-shard positions, and exactly-once after a crash at any point (a child
// process ends right after shard k's commit; the parent restarts and replays the feed).
#include "indexer/sharded_index_writer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/index_document.h"
#include "search/index_reader.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "indexer/feed_follower.h"
#include "tests/indexer/fake_services.h"
#include "tests/indexer/test_issues.h"
#include "xapian.h"

namespace issuescope::indexer {
namespace {

using testing::Batch;
using testing::MakeIssue;
using testing::Slug;
using testing::Upsert;
using testing::WaitUntil;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sharded_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr uint32_t kShards = 3;
const std::vector<std::string> kRepos = {"a/one", "b/two", "c/three", "d/four", "e/five",
                                         "f/six"};

// The feed of one store: 4 batches; every batch touches every repository; later batches edit
// earlier issues (newer updated_at), so the final state is known.
std::vector<v1::ChangeBatch> Feed() {
  std::vector<v1::ChangeBatch> feed;
  uint64_t seq = 0;
  for (int b = 0; b < 4; ++b) {
    std::vector<v1::ChangeEvent> events;
    for (const std::string& repo : kRepos) {
      const int64_t number = 1 + (b % 2);  // issues 1 and 2, edited in turns
      events.push_back(Upsert(++seq, MakeIssue(repo, number, "v" + std::to_string(b), 100 + b)));
    }
    feed.push_back(Batch("store-1", seq, events));
  }
  return feed;
}

// Replay sends every batch event above `from` as a store would after a reconnect.
ApplyResult Replay(ChangeSink& sink, uint64_t from) {
  ApplyResult total;
  for (const v1::ChangeBatch& batch : Feed()) {
    if (batch.last_seq() <= from) continue;
    v1::ChangeBatch part = batch;
    part.clear_events();
    for (const auto& e : batch.events()) {
      if (e.seq() > from) *part.add_events() = e;
    }
    ApplyResult r;
    EXPECT_TRUE(sink.Apply(part, &r).ok());
    total.Add(r);
  }
  return total;
}

void ExpectFinalState(const std::string& dir) {
  Xapian::Database db = search::OpenIndexForReading(dir);
  EXPECT_EQ(db.get_doccount(), kRepos.size() * 2);
  for (const std::string& repo : kRepos) {
    for (int64_t n : {1, 2}) {
      const std::string term = index::IdTerm(Slug(repo), n);
      ASSERT_EQ(db.get_termfreq(term), 1u) << term;
      auto issue = index::ReadDocument(db.get_document(*db.postlist_begin(term)));
      ASSERT_TRUE(issue.ok());
      EXPECT_EQ(issue->issue().title(), n == 1 ? "v2" : "v3") << term;
    }
  }
  // Each repository lives in its own shard only.
  for (const std::string& repo : kRepos) {
    const uint32_t shard = index::ShardOf(Slug(repo), kShards);
    for (uint32_t i = 0; i < kShards; ++i) {
      Xapian::Database part(dir + "/" + index::ShardDirName(i));
      EXPECT_EQ(part.get_termfreq(index::IdTerm(Slug(repo), 1)), i == shard ? 1u : 0u);
    }
  }
}

TEST(ShardedIndexWriterTest, RoutesByRepositoryAndReadersSeeAllShards) {
  TempDir dir;
  ShardedIndexWriterOptions options;
  options.shards = kShards;
  auto writer = ShardedIndexWriter::Open(dir.path(), options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ApplyResult applied = Replay(**writer, 0);
  EXPECT_EQ(applied.upserted, 24);
  EXPECT_EQ((*writer)->Position("store-1"), 24u);
  EXPECT_EQ((*writer)->DocumentCount(), 12);
  ASSERT_EQ((*writer)->Positions().size(), 1u);
  // Replaying everything changes nothing.
  ApplyResult again = Replay(**writer, 0);
  EXPECT_EQ(again.upserted, 0);
  EXPECT_EQ(again.already_consumed, 24);
  ASSERT_TRUE((*writer)->Flush().ok());
  ExpectFinalState(dir.path());
  EXPECT_EQ(index::ReadFeedPositions(dir.path()).at("store-1"), 24u);
}

TEST(ShardedIndexWriterTest, LayoutMismatchesAreRefused) {
  TempDir dir;
  {
    ShardedIndexWriterOptions options;
    options.shards = 2;
    ASSERT_TRUE(ShardedIndexWriter::Open(dir.path(), options).ok());
  }
  ShardedIndexWriterOptions three;
  three.shards = 3;
  auto wrong = ShardedIndexWriter::Open(dir.path(), three);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("has 2 shards"), std::string::npos);
  EXPECT_FALSE(CheckIndexLayout(dir.path(), 1).ok());

  TempDir plain;
  ASSERT_TRUE(IndexWriter::Open(plain.path()).ok());
  EXPECT_FALSE(CheckIndexLayout(plain.path(), 2).ok());
  EXPECT_TRUE(CheckIndexLayout(plain.path(), 1).ok());
  // A shard is locked while its writer lives.
  ShardedIndexWriterOptions two;
  two.shards = 2;
  auto first = ShardedIndexWriter::Open(dir.path(), two);
  ASSERT_TRUE(first.ok());
  auto second = ShardedIndexWriter::Open(dir.path(), two);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
}

// CrashCase: after how many batches the child flushes, and after which shard's commit (of that
// flush) it dies; shard -1 dies before any commit of the flush.
struct CrashCase {
  int batches_before_crash;
  int crash_after_shard_commit;
};

TEST(ShardedIndexWriterTest, CrashAfterAnyShardCommitIsExactlyOnce) {
  std::vector<CrashCase> cases;
  for (int batches : {1, 3}) {
    for (int shard = -1; shard < static_cast<int>(kShards); ++shard) {
      cases.push_back({batches, shard});
    }
  }
  for (const CrashCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "batches " << c.batches_before_crash << ", crash after "
                                      << "shard " << c.crash_after_shard_commit << "'s commit");
    TempDir dir;
    // Batch 1 is committed everywhere before the crash run starts.
    {
      ShardedIndexWriterOptions options;
      options.shards = kShards;
      auto writer = ShardedIndexWriter::Open(dir.path(), options);
      ASSERT_TRUE(writer.ok()) << writer.status();
      ASSERT_TRUE((*writer)->Apply(Feed()[0]).ok());
    }
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ShardedIndexWriterOptions options;
      options.shards = kShards;
      options.writer.max_pending_events = 1000000;  // commit only on Flush
      options.writer.max_commit_delay = absl::Hours(1);
      const std::string target =
          c.crash_after_shard_commit < 0
              ? std::string()
              : dir.path() + "/" + index::ShardDirName(c.crash_after_shard_commit);
      options.writer.after_commit = [target](const std::string& path) {
        if (path == target) _exit(0);
      };
      auto writer = ShardedIndexWriter::Open(dir.path(), options);
      if (!writer.ok()) _exit(3);
      const auto feed = Feed();
      for (int b = 1; b <= c.batches_before_crash; ++b) {
        if (!(*writer)->Apply(feed[b]).ok()) _exit(4);
      }
      if (c.crash_after_shard_commit < 0) _exit(0);  // nothing of this run committed
      // Flush commits the shards one at a time, so the others stay uncommitted.
      for (uint32_t i = 0; i < kShards; ++i) {
        if (!(*writer)->shard(i)->Flush().ok()) _exit(5);
      }
      _exit(6);
    }
    int wstatus = 0;
    ASSERT_EQ(waitpid(child, &wstatus, 0), child);
    ASSERT_TRUE(WIFEXITED(wstatus));
    ASSERT_EQ(WEXITSTATUS(wstatus), 0);

    // Restart: resume from the minimum, each shard skips what it holds.
    ShardedIndexWriterOptions options;
    options.shards = kShards;
    auto writer = ShardedIndexWriter::Open(dir.path(), options);
    ASSERT_TRUE(writer.ok()) << writer.status();
    const uint64_t from = (*writer)->Position("store-1");
    // Shards commit in order, so unless the last one committed, some shard holds only batch 0.
    const bool all_committed = c.crash_after_shard_commit == static_cast<int>(kShards) - 1;
    EXPECT_EQ(from, all_committed ? 6u * (1 + c.batches_before_crash) : 6u);
    // Per shard, the events the crashed run committed.
    std::map<uint32_t, uint64_t> committed;
    for (uint32_t i = 0; i < kShards; ++i) committed[i] = (*writer)->shard(i)->Position("store-1");
    ApplyResult replayed = Replay(**writer, from);
    // Events re-applied = events not committed by their own shard before the crash.
    int64_t want_upserted = 0, want_skipped = 0;
    for (const v1::ChangeBatch& batch : Feed()) {
      for (const auto& e : batch.events()) {
        if (e.seq() <= from) continue;
        const uint32_t shard = index::ShardOf(e.repo_slug(), kShards);
        (e.seq() <= committed[shard] ? want_skipped : want_upserted)++;
      }
    }
    EXPECT_EQ(replayed.upserted, want_upserted);
    EXPECT_EQ(replayed.already_consumed, want_skipped);
    EXPECT_EQ(replayed.upserted + replayed.already_consumed, static_cast<int64_t>(24 - from));
    // A crash between shard commits leaves shards ahead of the minimum: they skip.
    if (c.crash_after_shard_commit >= 0 && !all_committed) EXPECT_GT(want_skipped, 0);
    ASSERT_TRUE((*writer)->Flush().ok());
    writer->reset();
    ExpectFinalState(dir.path());
    EXPECT_EQ(index::ReadFeedPositions(dir.path()).at("store-1"), 24u);
  }
}

TEST(ShardedIndexWriterTest, FollowerIndexesALiveFeedIntoShardsAcrossReconnects) {
  TempDir dir;
  ShardedIndexWriterOptions options;
  options.shards = kShards;
  auto writer = ShardedIndexWriter::Open(dir.path(), options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  testing::FakeIssueStore store("store-1");
  for (const v1::ChangeBatch& batch : Feed()) {
    store.Append({batch.events().begin(), batch.events().end()});
  }
  store.BreakNextStreamAfter(2);
  testing::LoopbackServer server(&store);
  FakeClock clock;
  FeedFollower follower(server.address(),
                        grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()),
                        "", writer->get(), &clock);
  follower.Start();
  ASSERT_TRUE(WaitUntil([&] { return (*writer)->Position("store-1") == 24; }));
  follower.Stop();
  EXPECT_EQ(store.EventsSent(), 24);  // the resumed stream started at the minimum position
  ASSERT_TRUE((*writer)->Flush().ok());
  writer->reset();
  ExpectFinalState(dir.path());
}

}  // namespace
}  // namespace issuescope::indexer
