// issuescope-shard-server (search across index hosts, issue 18): shards of an index served over
// Xapian's remote protocol by real shard-server processes on loopback, searched through a stub
// of `remote` lines, answer exactly as the same shards read locally: hits, scores, totals and
// facets. Xapian gathers each server's statistics and ranks with the sum, so a match weighs
// what it weighs in one index. Shard s of S goes to server s mod H at position s / H, so
// document ids interleave as in the local stub and ties break alike.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "search/docid_sample.h"
#include "search/proximity.h"
#include "search/remote_proximity.h"
#include "search/remote_registry.h"
#include "search/searcher.h"
#include "tests/common/free_port.h"
#include "tests/search/search_fixture.h"

namespace issuescope::search {
namespace {

constexpr uint32_t kShards = 4;
constexpr int kHosts = 2;

std::string Bin(const std::string& name) { return std::string(ISSUESCOPE_BIN_DIR) + "/" + name; }

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "issuescope-shards-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

v1::SearchRequest Request(const std::string& query, bool facets) {
  v1::SearchRequest r;
  r.set_query(query);
  r.set_page_size(40);
  if (facets) {
    r.add_facets("repo");
    r.add_facets("label");
    r.add_facets("state");
  }
  return r;
}

std::string Comparable(v1::SearchResponse r) {
  r.clear_took_us();
  r.clear_next_page_token();
  return r.DebugString();
}

class ShardServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = TempDir();
    const std::string index = work_ + "/index";
    std::filesystem::create_directories(index);
    std::vector<Xapian::WritableDatabase> shards;
    for (uint32_t i = 0; i < kShards; ++i) {
      shards.emplace_back(index + "/" + index::ShardDirName(i), Xapian::DB_CREATE_OR_OPEN);
    }
    testing::WriteGeneratedIssues(&shards, 0, 1600);
    for (Xapian::WritableDatabase& db : shards) {
      ASSERT_GT(db.get_doccount(), 0u) << "a shard got no issues: the test would prove less";
      db.close();
    }
    ASSERT_TRUE(index::WriteStubFile(index, kShards).ok());

    std::string stub;
    servers_.resize(kHosts);
    for (int h = 0; h < kHosts; ++h) {
      ports_.push_back(issuescope::testing::FreeLoopbackPort());
      ASSERT_GT(ports_.back(), 0);
      ASSERT_NO_FATAL_FAILURE(StartServer(h));
      absl::StrAppend(&stub, "remote 127.0.0.1:", ports_[h], "\n");
    }
    remote_dir_ = work_ + "/remote";
    std::filesystem::create_directories(remote_dir_);
    std::ofstream(index::StubPath(remote_dir_)) << stub;
    local_ = Searcher::ForPath(index);
    remote_ = Searcher::ForPath(remote_dir_);
    // Facets over a sample of the matches beyond 200 (DocidSample on each shard).
    SearcherOptions sampled;
    sampled.facet_bound = 200;
    local_sampled_ = Searcher::ForPath(index, sampled);
    remote_sampled_ = Searcher::ForPath(remote_dir_, sampled);
  }

  // StartServer starts shard server h on its port, serving the shards of server `shards_of`
  // (s, s + kHosts, …; default h's own).
  void StartServer(int h, int shards_of = -1) {
    if (shards_of < 0) shards_of = h;
    std::vector<std::string> argv = {Bin("issuescope-shard-server"),
                                     absl::StrCat("--listen=127.0.0.1:", ports_[h])};
    for (uint32_t s = shards_of; s < kShards; s += kHosts) {
      argv.push_back("--db=" + work_ + "/index/" + index::ShardDirName(s));
    }
    auto server = Subprocess::Start(argv, absl::StrCat(work_, "/shard-server-", h, ".log"));
    ASSERT_TRUE(server.ok()) << server.status();
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!issuescope::testing::AcceptsConnections(ports_[h]) && absl::Now() < deadline) {
      ASSERT_TRUE((*server)->Running()) << "shard server " << h << " exited";
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_TRUE(issuescope::testing::AcceptsConnections(ports_[h]));
    servers_[h] = *std::move(server);
  }

  void TearDown() override {
    for (auto& s : servers_) {
      if (s) s->Stop();
    }
    if (!HasFailure()) std::filesystem::remove_all(work_);
  }

  std::string work_, remote_dir_;
  std::vector<int> ports_;
  std::vector<std::unique_ptr<Subprocess>> servers_;
  std::unique_ptr<Searcher> local_, remote_, local_sampled_, remote_sampled_;
};

const std::vector<std::string> kRanked = {"cuda memory", "leak", "kernel OR nan",
                                          "gradient -slow", "crash repo:org/repo1",
                                          "tensor cache is:open", "\"memory leak\" OR onnx",
                                          "memory in:title", "crash in:title,body"};

TEST_F(ShardServerTest, RankedQueriesAnswerAsTheLocalIndex) {
  for (const std::string& q : kRanked) {
    auto want = local_->Search(Request(q, false));
    ASSERT_TRUE(want.ok()) << q << ": " << want.status();
    ASSERT_GT(want->total(), 0) << q;
    auto got = remote_->Search(Request(q, false));
    ASSERT_TRUE(got.ok()) << q << ": " << got.status();
    EXPECT_EQ(Comparable(*got), Comparable(*want)) << q;
  }
}

TEST_F(ShardServerTest, FacetsAnswerAsTheLocalIndex) {
  for (const std::string& q : kRanked) {
    auto want = local_->Search(Request(q, true));
    ASSERT_TRUE(want.ok()) << q << ": " << want.status();
    auto got = remote_->Search(Request(q, true));
    ASSERT_TRUE(got.ok()) << q << ": " << got.status();
    EXPECT_EQ(Comparable(*got), Comparable(*want)) << q;
  }
}

TEST_F(ShardServerTest, SampledFacetsAnswerAsTheLocalIndex) {
  bool sampled = false;
  for (const std::string& q : kRanked) {
    auto want = local_sampled_->Search(Request(q, true));
    ASSERT_TRUE(want.ok()) << q << ": " << want.status();
    sampled = sampled || !want->facets_exact();
    auto got = remote_sampled_->Search(Request(q, true));
    ASSERT_TRUE(got.ok()) << q << ": " << got.status();
    EXPECT_EQ(Comparable(*got), Comparable(*want)) << q;
  }
  EXPECT_TRUE(sampled) << "no query was sampled: the test would prove less";
}

// A shard server that restarts breaks the searcher's open connections: the next search opens
// them again and answers as before; while a server is down, searches fail UNAVAILABLE.
TEST_F(ShardServerTest, ASearcherReconnectsToARestartedShardServer) {
  const v1::SearchRequest request = Request("cuda memory", true);
  auto want = local_->Search(request);
  ASSERT_TRUE(want.ok()) << want.status();
  auto before = remote_->Search(request);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(Comparable(*before), Comparable(*want));

  servers_[0]->Stop();
  auto down = remote_->Search(request);
  ASSERT_FALSE(down.ok());
  EXPECT_TRUE(absl::IsUnavailable(down.status())) << down.status();

  ASSERT_NO_FATAL_FAILURE(StartServer(0));
  auto after = remote_->Search(request);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(Comparable(*after), Comparable(*want));
}

// Sorting by a field over remote shards uses the sort key slots (Xapian's remote protocol
// cannot carry the KeyMaker a local search sorts with): the same order, ties on the field
// broken by number, then relevance, then document id, and the same second pages.
TEST_F(ShardServerTest, SortedQueriesAnswerAsTheLocalIndex) {
  const std::vector<std::string> sorted = {
      "is:closed label:bug",  // no text: newest created first
      "repo:org/repo1",       "sort:updated",           "sort:created-asc",
      "sort:comments",        "sort:comments-asc",      "leak sort:updated",
      "cuda memory sort:comments", "crash sort:created", "is:open sort:updated-asc"};
  bool tied = false;
  for (const std::string& q : sorted) {
    v1::SearchRequest request = Request(q, true);
    auto want = local_->Search(request);
    ASSERT_TRUE(want.ok()) << q << ": " << want.status();
    ASSERT_GT(want->hits_size(), 1) << q;
    auto got = remote_->Search(request);
    ASSERT_TRUE(got.ok()) << q << ": " << got.status();
    EXPECT_EQ(Comparable(*got), Comparable(*want)) << q;
    for (int i = 1; i < want->hits_size(); ++i) {
      tied = tied || (q.find("comments") != std::string::npos &&
                      want->hits(i).comment_count() ==
                          want->hits(i - 1).comment_count());
    }
    // The second page, from each searcher's own token.
    ASSERT_FALSE(want->next_page_token().empty()) << q;
    v1::SearchRequest next = request;
    next.set_page_token(want->next_page_token());
    auto want2 = local_->Search(next);
    ASSERT_TRUE(want2.ok()) << q << ": " << want2.status();
    next.set_page_token(got->next_page_token());
    auto got2 = remote_->Search(next);
    ASSERT_TRUE(got2.ok()) << q << ": " << got2.status();
    EXPECT_EQ(Comparable(*got2), Comparable(*want2)) << q << " (page 2)";
  }
  EXPECT_TRUE(tied) << "no page held two issues with the same comment count: the tie-break "
                       "would go untested";
}

// An index partly written before the sort keys existed cannot sort over remote shards: its
// first shard rebuilt (scheme sections-4), the others not yet (a rebuild goes shard by shard),
// and a sorted query is a clear error, not an order that puts the keyless documents first.
// Ranked queries still answer.
TEST_F(ShardServerTest, SortingAnIndexWithoutSortKeysIsAClearError) {
  for (auto& s : servers_) s->Stop();
  for (uint32_t i = 1; i < kShards; ++i) {
    Xapian::WritableDatabase db(work_ + "/index/" + index::ShardDirName(i), Xapian::DB_OPEN);
    for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) {
      Xapian::Document doc = db.get_document(*it);
      for (Xapian::valueno slot :
           {index::kCreatedSortSlot, index::kUpdatedSortSlot, index::kCommentsSortSlot}) {
        doc.remove_value(slot);
      }
      db.replace_document(*it, doc);
    }
    db.set_metadata(index::kTextSchemeKey, index::kTextSchemeWithoutSortKeys);
    db.commit();
  }
  for (int h = 0; h < kHosts; ++h) ASSERT_NO_FATAL_FAILURE(StartServer(h));
  auto remote = Searcher::ForPath(remote_dir_);
  for (const char* q : {"sort:updated", "is:open", "leak sort:comments-asc"}) {
    auto got = remote->Search(Request(q, false));
    ASSERT_FALSE(got.ok()) << q;
    EXPECT_TRUE(absl::IsFailedPrecondition(got.status())) << q << ": " << got.status();
    EXPECT_NE(got.status().message().find("documents lack them"), std::string::npos)
        << got.status();
  }
  auto ranked = remote->Search(Request("cuda memory", false));
  ASSERT_TRUE(ranked.ok()) << ranked.status();
  EXPECT_EQ(Comparable(*ranked), Comparable(*local_->Search(Request("cuda memory", false))));
}

// A search over shard servers takes the one-match paths: the proximity bonuses of a multi-word
// query and the page's documents (RemoteMatchesSoFar counts them).
TEST_F(ShardServerTest, SearchesTakeTheOneMatchPaths) {
  const RemoteMatchCounts before = RemoteMatchesSoFar();
  auto got = remote_->Search(Request("cuda memory", false));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_GT(got->hits_size(), 0);
  const RemoteMatchCounts after = RemoteMatchesSoFar();
  EXPECT_GT(after.proximity, before.proximity);
  EXPECT_GT(after.documents, before.documents);
  // A local search does not.
  ASSERT_TRUE(local_->Search(Request("cuda memory", false)).ok());
  EXPECT_EQ(RemoteMatchesSoFar().documents, after.documents);
}

// The proximity re-ranking's bonuses come from the shard servers in one match
// (search/remote_proximity.h): the layout maps each document of the stub to its shard, and every
// bonus equals PairProximity read from the local index, for documents with and without one.
TEST_F(ShardServerTest, ProximityBonusesComeFromTheShardServers) {
  auto layout = ProbeRemoteShardLayout(remote_dir_);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->servers.size(), static_cast<size_t>(kHosts));
  for (const auto& shards : layout->servers) EXPECT_EQ(shards.size(), kShards / kHosts);
  Xapian::Database remote(index::StubPath(remote_dir_));
  Xapian::Database local(index::StubPath(work_ + "/index"));
  ASSERT_EQ(remote.get_uuid(), layout->uuid);

  // Locate: the shard and id it names hold the document the stub numbers so.
  std::map<std::string, Xapian::Database> shard_dbs;
  for (uint32_t i = 0; i < kShards; ++i) {
    Xapian::Database db(work_ + "/index/" + index::ShardDirName(i));
    shard_dbs.emplace(db.get_uuid(), db);
  }
  std::vector<Xapian::docid> docids;
  int n = 0;
  for (auto it = local.postlist_begin(""); it != local.postlist_end(""); ++it) {
    if (n++ % 7 == 0) docids.push_back(*it);
  }
  ASSERT_GT(docids.size(), 100u);
  for (Xapian::docid did : docids) {
    const auto [uuid, id] = layout->Locate(did);
    ASSERT_EQ(shard_dbs.count(*uuid), 1u) << did;
    EXPECT_EQ(shard_dbs.at(*uuid).get_document(id).get_data(), local.get_document(did).get_data())
        << did;
  }

  const std::vector<std::string> terms = ProximityTerms({"cuda", "memory", "leak"});
  auto bonuses = RemoteProximity(remote, *layout, docids, terms);
  ASSERT_TRUE(bonuses.has_value());
  ASSERT_EQ(bonuses->size(), docids.size());
  int with = 0;
  for (size_t k = 0; k < docids.size(); ++k) {
    EXPECT_EQ((*bonuses)[k], PairProximity(local, docids[k], terms)) << docids[k];
    with += (*bonuses)[k] > 0;
  }
  EXPECT_GT(with, 0) << "no document earned a bonus: the test would prove less";
  EXPECT_LT(with, static_cast<int>(docids.size())) << "every document earned one";

  // A layout made for other shard servers is not used.
  RemoteShardLayout stale = *layout;
  stale.uuid += ":x";
  EXPECT_FALSE(RemoteProximity(remote, stale, docids, terms).has_value());
}

// A page's documents come from the shard servers in one match (RemoteDocuments): each with the
// data and the values asked for, in the order asked, as the local index holds them.
TEST_F(ShardServerTest, PageDocumentsComeFromTheShardServersInOneMatch) {
  auto layout = ProbeRemoteShardLayout(remote_dir_);
  ASSERT_TRUE(layout.ok()) << layout.status();
  Xapian::Database remote(index::StubPath(remote_dir_));
  Xapian::Database local(index::StubPath(work_ + "/index"));
  std::vector<Xapian::docid> docids;
  for (auto it = local.postlist_begin(""); it != local.postlist_end(""); ++it) {
    if (docids.size() < 40 && *it % 3 == 0) docids.push_back(*it);
  }
  std::reverse(docids.begin(), docids.end());  // not in id order: the answer keeps the order
  const std::vector<Xapian::valueno> slots = {index::kUpdatedSlot, index::kNumberSlot};
  auto docs = RemoteDocuments(remote, *layout, docids, slots);
  ASSERT_TRUE(docs.has_value());
  ASSERT_EQ(docs->size(), docids.size());
  for (size_t k = 0; k < docids.size(); ++k) {
    ASSERT_TRUE((*docs)[k].has_value()) << docids[k];
    const Xapian::Document want = local.get_document(docids[k]);
    EXPECT_EQ((*docs)[k]->get_data(), want.get_data()) << docids[k];
    for (Xapian::valueno slot : slots) {
      EXPECT_EQ((*docs)[k]->get_value(slot), want.get_value(slot)) << docids[k] << " " << slot;
    }
    EXPECT_EQ((*docs)[k]->get_value(index::kCreatedSlot), "") << "a slot not asked for";
  }
  // A document that does not exist comes back as none.
  auto missing = RemoteDocuments(remote, *layout, {local.get_lastdocid() + 2, docids[0]}, slots);
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE((*missing)[0].has_value());
  EXPECT_TRUE((*missing)[1].has_value());
}

// A stub that names anything but shard servers has no remote layout; neither has one whose
// server is away (the searcher then reads positions itself).
TEST_F(ShardServerTest, ProbingALayoutNeedsEveryShardServer) {
  EXPECT_TRUE(absl::IsUnimplemented(ProbeRemoteShardLayout(work_ + "/index").status()));
  servers_[1]->Stop();
  auto probed = ProbeRemoteShardLayout(remote_dir_);
  EXPECT_TRUE(absl::IsUnavailable(probed.status())) << probed.status();
}

// What a shard server unserialises comes from the network: every issuescope class in the
// registry rejects malformed bytes with a SerialisationError, and takes back what it wrote.
TEST(RemoteRegistryTest, ClassesRoundTripAndRejectMalformedBytes) {
  const Xapian::Registry registry = RemoteRegistry();
  for (const char* name : {"issuescope.FieldScopeSource", "issuescope.TermPostings",
                           "issuescope.DocidSample"}) {
    const Xapian::PostingSource* prototype = registry.get_posting_source(name);
    ASSERT_NE(prototype, nullptr) << name;
  }
  const Xapian::PostingSource* scope = registry.get_posting_source("issuescope.FieldScopeSource");
  const Xapian::PostingSource* sample = registry.get_posting_source("issuescope.DocidSample");
  for (const std::string& bad : {std::string("\x02"), std::string("\x00\x09\x00"),
                                std::string("\x00\x01\x05\x01a")}) {
    EXPECT_THROW(delete scope->unserialise_with_registry(bad, registry),
                 Xapian::SerialisationError) << "field scope";
  }
  EXPECT_THROW(delete sample->unserialise_with_registry(std::string("\x01"), registry),
               Xapian::SerialisationError);
  const DocidSample original(0.25, 64);
  std::unique_ptr<Xapian::PostingSource> copy(
      sample->unserialise_with_registry(original.serialise(), registry));
  EXPECT_EQ(copy->serialise(), original.serialise());
  EXPECT_EQ(dynamic_cast<DocidSample*>(copy.get())->fraction(), 0.25);
  const Xapian::PostingSource* proximity =
      registry.get_posting_source("issuescope.ProximitySource");
  ASSERT_NE(proximity, nullptr);
  const ProximitySource near({{"uuid-a", {9, 3, 3, 40}}, {"uuid-b", {1}}}, {"cuda", "memory"});
  std::unique_ptr<Xapian::PostingSource> near_copy(
      proximity->unserialise_with_registry(near.serialise(), registry));
  EXPECT_EQ(near_copy->serialise(), near.serialise());
  // Truncated; a zero id step (an id twice, or id 0); a key where none belongs; a shard named
  // twice; trailing bytes.
  const std::string good = near.serialise();
  for (const std::string& bad :
       {good.substr(0, good.size() - 1), std::string("\x00\x01\x01u\x01\x00\x00", 7),
        std::string("\x00\x01\x01u\x01\x01\x05", 7),
        std::string("\x00\x02\x01u\x01\x01\x00\x01u\x01\x01\x00", 12), good + "x"}) {
    EXPECT_THROW(delete proximity->unserialise_with_registry(bad, registry),
                 Xapian::SerialisationError)
        << ::testing::PrintToString(bad);
  }
  const Xapian::PostingSource* keyed = registry.get_posting_source("issuescope.KeyedDocsSource");
  ASSERT_NE(keyed, nullptr);
  const KeyedDocsSource page({{"uuid-a", {{9, 2}, {3, 1}}}, {"uuid-b", {{1, 3}}}});
  std::unique_ptr<Xapian::PostingSource> page_copy(
      keyed->unserialise_with_registry(page.serialise(), registry));
  EXPECT_EQ(page_copy->serialise(), page.serialise());
  // Truncated; key 0; trailing bytes.
  const std::string page_bytes = page.serialise();
  for (const std::string& bad : {page_bytes.substr(0, page_bytes.size() - 1),
                                std::string("\x01\x01u\x01\x01\x00", 6), page_bytes + "x"}) {
    EXPECT_THROW(delete keyed->unserialise_with_registry(bad, registry),
                 Xapian::SerialisationError)
        << ::testing::PrintToString(bad);
  }
  const Xapian::MatchSpy* collector_prototype =
      registry.get_match_spy("issuescope.DocumentCollector");
  ASSERT_NE(collector_prototype, nullptr);
  DocumentCollector collector({index::kNumberSlot});
  Xapian::Document doc;
  doc.set_data("issue");
  doc.add_value(index::kNumberSlot, "n");
  collector(doc, 2.0);
  std::unique_ptr<Xapian::MatchSpy> collector_copy(
      collector_prototype->unserialise(collector.serialise(), registry));
  collector_copy->merge_results(collector.serialise_results());
  const auto& merged = dynamic_cast<DocumentCollector*>(collector_copy.get())->documents();
  ASSERT_EQ(merged.count(2), 1u);
  EXPECT_EQ(merged.at(2).get_data(), "issue");
  EXPECT_EQ(merged.at(2).get_value(index::kNumberSlot), "n");
  EXPECT_THROW(delete collector_prototype->unserialise(std::string("\x01\xff\xff\xff\xff\x0f", 6),
                                                       registry),
               Xapian::SerialisationError)
      << "slot BAD_VALUENO";
  const std::string results = collector.serialise_results();
  for (const std::string& bad : {results.substr(0, results.size() - 1), results + "x",
                                std::string("\x01\x00\x00\x00", 4)}) {
    EXPECT_THROW(collector_copy->merge_results(bad), Xapian::SerialisationError)
        << ::testing::PrintToString(bad);
  }
  ASSERT_NE(registry.get_weighting_scheme("issuescope.RankingWeight"), nullptr);
  ASSERT_NE(registry.get_match_spy("issuescope.FacetCounter"), nullptr);
  ASSERT_NE(registry.get_match_spy("issuescope.AggregateCounter"), nullptr);
}

// A `remote` line followed by `#issuescope-alternate` lines (a copy of the same shards served
// on another host): when the line's server is lost mid-run, searches go on over the alternate
// and answer exactly as before; when no server of a shard answers, UNAVAILABLE naming them.
TEST_F(ShardServerTest, ALostShardServerFailsOverToItsAlternate) {
  ports_.push_back(issuescope::testing::FreeLoopbackPort());
  servers_.resize(3);
  ASSERT_NO_FATAL_FAILURE(StartServer(2, /*shards_of=*/1));
  const std::string dir = work_ + "/failover";
  std::filesystem::create_directories(dir);
  std::ofstream(index::StubPath(dir)) << "remote 127.0.0.1:" << ports_[0] << "\n"
                                      << "remote 127.0.0.1:" << ports_[1] << "\n"
                                      << "# the same shards on another host\n"
                                      << index::kAlternatePrefix << "127.0.0.1:" << ports_[2] << "\n";
  std::unique_ptr<Searcher> failover = Searcher::ForPath(dir);
  auto expect_as_local = [&](const std::string& when) {
    for (const std::string& q : {std::string("cuda memory"), std::string("leak sort:updated"),
                                 std::string("crash repo:org/repo1")}) {
      auto want = local_->Search(Request(q, true));
      ASSERT_TRUE(want.ok()) << q << ": " << want.status();
      auto got = failover->Search(Request(q, true));
      ASSERT_TRUE(got.ok()) << when << ", " << q << ": " << got.status();
      EXPECT_EQ(Comparable(*got), Comparable(*want)) << when << ", " << q;
    }
  };
  ASSERT_NO_FATAL_FAILURE(expect_as_local("both servers up"));
  // Searches in flight while the whole server goes, as when its host is lost: the listener and
  // its connections' processes (a process group; killing the listener alone leaves open
  // connections served). Each is answered, over the alternate once the server is gone.
  std::map<std::string, std::string> want;
  const std::vector<std::string> queries = {"cuda memory", "leak sort:updated", "crash in:title",
                                            "kernel OR nan", "gradient -slow"};
  for (const std::string& q : queries) {
    auto answer = local_->Search(Request(q, true));
    ASSERT_TRUE(answer.ok()) << q << ": " << answer.status();
    want[q] = Comparable(*answer);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, failed{0}, wrong{0};
  std::mutex mu;
  std::string first_failure;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      for (size_t i = c; !stop.load(); ++i) {
        const std::string& q = queries[i % queries.size()];
        auto got = failover->Search(Request(q, true));
        if (!got.ok()) {
          ++failed;
          std::lock_guard<std::mutex> lock(mu);
          if (first_failure.empty()) first_failure = q + ": " + got.status().ToString();
        } else if (Comparable(*got) != want[q]) {
          ++wrong;
        } else {
          ++answered;
        }
      }
    });
  }
  absl::SleepFor(absl::Milliseconds(300));
  kill(-servers_[1]->pid(), SIGKILL);
  const bool gone = servers_[1]->Wait(absl::Seconds(10));
  // At least 20 more answers after the loss (a second or so; longer on a loaded machine).
  const int before_loss = answered.load();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (answered.load() - before_loss < 20 && failed.load() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  stop = true;
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(gone);
  EXPECT_EQ(failed.load(), 0) << first_failure;
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(answered.load() - before_loss, 20) << "too few searches after the loss";
  ASSERT_NO_FATAL_FAILURE(expect_as_local("server 1 killed, its alternate serving"));

  // Without the alternate, the lost server's shards cannot be searched: a clear UNAVAILABLE.
  kill(-servers_[2]->pid(), SIGKILL);
  ASSERT_TRUE(servers_[2]->Wait(absl::Seconds(10)));
  auto none = failover->Search(Request("cuda memory", false));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnavailable) << none.status();
  EXPECT_NE(none.status().message().find(absl::StrCat("127.0.0.1:", ports_[2])), absl::string_view::npos)
      << none.status();
}

// ConnectionsTo counts this machine's established IPv4 connections to 127.0.0.1:`port` (their
// client ends, from /proc/net/tcp): the searcher's open connections to a shard server.
int ConnectionsTo(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  char want[16];
  std::snprintf(want, sizeof(want), "0100007F:%04X", port);
  int n = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (remote == want && state == "01") ++n;
  }
  return n;
}

// A searcher that failed over to an alternate goes back to the `remote` line's own server once
// it answers again (SearcherOptions::primary_retry), instead of staying on the alternate until
// that fails too: the alternate can be taken down for maintenance without a failover.
TEST_F(ShardServerTest, AFailedOverSearcherGoesBackToItsServerWhenItAnswersAgain) {
  ports_.push_back(issuescope::testing::FreeLoopbackPort());
  servers_.resize(3);
  ASSERT_NO_FATAL_FAILURE(StartServer(2, /*shards_of=*/1));
  const std::string dir = work_ + "/back";
  std::filesystem::create_directories(dir);
  std::ofstream(index::StubPath(dir)) << "remote 127.0.0.1:" << ports_[0] << "\n"
                                      << "remote 127.0.0.1:" << ports_[1] << "\n"
                                      << index::kAlternatePrefix << "127.0.0.1:" << ports_[2] << "\n";
  SearcherOptions options;
  options.max_handles = 1;  // one handle: every search below goes through it
  options.split_parts = 1;
  options.primary_retry = absl::Milliseconds(200);
  std::unique_ptr<Searcher> searcher = Searcher::ForPath(dir, options);
  const v1::SearchRequest request = Request("cuda memory", true);
  auto want = local_->Search(request);
  ASSERT_TRUE(want.ok()) << want.status();
  auto expect_as_local = [&](const std::string& when) {
    auto got = searcher->Search(request);
    ASSERT_TRUE(got.ok()) << when << ": " << got.status();
    EXPECT_EQ(Comparable(*got), Comparable(*want)) << when;
  };
  ASSERT_NO_FATAL_FAILURE(expect_as_local("both servers up"));
  EXPECT_EQ(ConnectionsTo(ports_[2]), 0) << "the alternate was used while its server answered";

  kill(-servers_[1]->pid(), SIGKILL);
  ASSERT_TRUE(servers_[1]->Wait(absl::Seconds(10)));
  ASSERT_NO_FATAL_FAILURE(expect_as_local("server 1 lost"));
  EXPECT_GT(ConnectionsTo(ports_[2]), 0) << "server 1's shards should be read from the alternate";
  // Still away at the next retry: the handle stays on the alternate and answers.
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_NO_FATAL_FAILURE(expect_as_local("server 1 still lost"));
  EXPECT_GT(ConnectionsTo(ports_[2]), 0);

  // Back but not answering (its host accepts connections for a stopped process): the retry
  // costs the search its short probe, not the shard timeout, and the handle stays put.
  ASSERT_NO_FATAL_FAILURE(StartServer(1));
  ASSERT_EQ(kill(-servers_[1]->pid(), SIGSTOP), 0);
  absl::SleepFor(absl::Milliseconds(300));
  const absl::Time probed = absl::Now();
  ASSERT_NO_FATAL_FAILURE(expect_as_local("server 1 back but stopped"));
  EXPECT_LT(absl::Now() - probed, absl::Seconds(5)) << "the probe waited out the shard timeout";
  EXPECT_GT(ConnectionsTo(ports_[2]), 0);
  ASSERT_EQ(kill(-servers_[1]->pid(), SIGCONT), 0);
  ASSERT_NO_FATAL_FAILURE(expect_as_local("server 1 answering, before the retry"));
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_NO_FATAL_FAILURE(expect_as_local("server 1 back"));
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (ConnectionsTo(ports_[2]) > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(ConnectionsTo(ports_[2]), 0) << "the searcher stayed on the alternate";
  EXPECT_GT(ConnectionsTo(ports_[1]), 0) << "the searcher should read from server 1 again";
}

// A shard server that goes silent (stopped, not killed: its host lost power or its link was cut,
// so nothing resets the connection) holds a search for the exchange timeout, then the search
// fails over to the alternate. SearcherOptions::shard_timeout_ms (issuescope-search
// --shard-timeout) bounds that wait; Xapian's default is 10 s.
TEST_F(ShardServerTest, ASilentShardServerFailsOverWithinTheShardTimeout) {
  ports_.push_back(issuescope::testing::FreeLoopbackPort());
  servers_.resize(3);
  ASSERT_NO_FATAL_FAILURE(StartServer(2, /*shards_of=*/1));
  const std::string dir = work_ + "/silent";
  std::filesystem::create_directories(dir);
  std::ofstream(index::StubPath(dir)) << "remote 127.0.0.1:" << ports_[0] << "\n"
                                      << "remote 127.0.0.1:" << ports_[1] << "\n"
                                      << index::kAlternatePrefix << "127.0.0.1:" << ports_[2] << "\n";
  SearcherOptions options;
  options.max_handles = 1;
  options.split_parts = 1;
  options.shard_timeout_ms = 1500;
  std::unique_ptr<Searcher> searcher = Searcher::ForPath(dir, options);
  const v1::SearchRequest request = Request("cuda memory", true);
  auto want = local_->Search(request);
  ASSERT_TRUE(want.ok()) << want.status();
  auto before = searcher->Search(request);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(Comparable(*before), Comparable(*want));

  // Server 1 and its connections' processes stop answering; the kernel still accepts
  // connections on its port.
  ASSERT_EQ(kill(-servers_[1]->pid(), SIGSTOP), 0);
  const absl::Time start = absl::Now();
  auto during = searcher->Search(request);
  const absl::Duration took = absl::Now() - start;
  kill(-servers_[1]->pid(), SIGCONT);
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_EQ(Comparable(*during), Comparable(*want));
  // The stalled exchange, and the new connection's greeting, each wait 1.5 s at most.
  EXPECT_GE(took, absl::Milliseconds(1500));
  EXPECT_LT(took, absl::Seconds(9)) << "the search waited out Xapian's default instead";
  EXPECT_GT(ConnectionsTo(ports_[2]), 0) << "server 1's shards should be read from the alternate";
}

TEST(RemoteStubTest, AlternatesFollowTheirRemoteLineAndBadLinesAreNamed) {
  const std::string dir = TempDir();
  auto write = [&](const std::string& text) { std::ofstream(index::StubPath(dir)) << text; };
  write("remote a:1\n#issuescope-alternate b:2\n#issuescope-alternate c:3\n\n# note\nremote d:4\n");
  auto entries = index::ReadRemoteStub(dir);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  ASSERT_EQ((*entries)[0].servers.size(), 3u);
  EXPECT_EQ((*entries)[0].servers[2].Name(), "c:3");
  EXPECT_EQ((*entries)[1].servers[0].Name(), "d:4");
  write("#issuescope-alternate b:2\nremote a:1\n");
  EXPECT_EQ(index::ReadRemoteStub(dir).status().code(), absl::StatusCode::kInvalidArgument);
  write("remote a:1\n#issuescope-alternate b:99999\n");
  entries = index::ReadRemoteStub(dir);
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(entries.status().message().find(":2:"), absl::string_view::npos) << entries.status();
  write("auto shard-000\nremote a:1\n");
  EXPECT_EQ(index::ReadRemoteStub(dir).status().code(), absl::StatusCode::kUnimplemented);
  // A searcher over a stub whose alternate comes first says what is wrong.
  write("#issuescope-alternate b:2\nremote 127.0.0.1:1\n");
  auto searcher = Searcher::ForPath(dir);
  auto result = searcher->Search(Request("x", false));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("alternate before any remote line"),
            absl::string_view::npos) << result.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::search
