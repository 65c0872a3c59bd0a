// Fault-injected crawls (label e2e): issuescope-simulator runs as a process with one fault's
// flags; three repositories (GitHub, GitLab with a subgroup, Gitee) are crawled concurrently over
// real HTTP by RepoCrawlers sharing one TokenPool per tracker (two accounts each), each crawl
// repeated incrementally from its last cursor if it gives up (as the coordinator would lease it
// again). Then the store must equal the simulator's corpus (/_sim/corpus: every issue at its
// newest updated_at with all its comments, nothing else) and no request may have been sent over
// budget or before a Retry-After (/_sim/stats).
#include <filesystem>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"
#include "common/subprocess.h"
#include "common/time_util.h"
#include "crawler/curl_transport.h"
#include "crawler/repo_crawler.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

std::string Bin(const std::string& name) { return std::string(ISSUESCOPE_BIN_DIR) + "/" + name; }

// The repositories: GitHub, GitLab (in a subgroup) and Gitee.
std::vector<v1::RepositoryRef> Repos() {
  std::vector<v1::RepositoryRef> out;
  for (auto [tracker, owner, name] : {std::make_tuple(v1::TRACKER_GITHUB, "octo", "gh"),
                                      std::make_tuple(v1::TRACKER_GITLAB, "grp/sub", "gl"),
                                      std::make_tuple(v1::TRACKER_GITEE, "ge", "ee")}) {
    v1::RepositoryRef ref;
    ref.set_tracker(tracker);
    ref.set_owner(owner);
    ref.set_name(name);
    out.push_back(ref);
  }
  return out;
}


struct FaultCase {
  std::string name;
  std::vector<std::string> flags;
  // Pool configuration: Gitee's assumed budget (the simulator's --budget) and window.
  int64_t gitee_budget = 0;
  absl::Duration budget_window = absl::Hours(1);
  // "octo/gh" is served as this name (a transfer), or empty.
  std::string github_moved_to;
};

FaultCase Case(std::string name, std::vector<std::string> flags) {
  FaultCase c;
  c.name = std::move(name);
  c.flags = std::move(flags);
  return c;
}

// Stored is one issue as the test compares it: updated_at and comment count.
using Snapshot = std::map<std::string, std::pair<absl::Time, int64_t>>;  // "tracker:o/r#n"

class FaultCrawlTest : public ::testing::TestWithParam<FaultCase> {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp ? tmp : "/tmp", "/issuescope-faults-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::vector<std::string> argv = {Bin("issuescope-simulator"),
                                     "--repo=octo/gh:90",
                                     "--repo=gitlab:grp/sub/gl:40",
                                     "--repo=gitee:ge/ee:40",
                                     "--comments-per-issue=2",
                                     "--seed=5",
                                     "--threads=16",
                                     "--port-file=" + dir_ + "/sim.port"};
    for (const std::string& f : GetParam().flags) argv.push_back(f);
    auto sim = Subprocess::Start(argv, dir_ + "/sim.log");
    ASSERT_TRUE(sim.ok()) << sim.status();
    sim_ = std::move(*sim);
    auto port = WaitForPortFile(dir_ + "/sim.port", absl::Seconds(30), sim_.get());
    ASSERT_TRUE(port.ok()) << port.status();
    base_ = absl::StrCat("http://127.0.0.1:", *port);
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
  }
  void TearDown() override {
    if (sim_) sim_->Stop();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  nlohmann::json Admin(const std::string& path) {
    httplib::Client http(base_);
    http.set_read_timeout(30, 0);
    auto res = http.Get(path.c_str());
    EXPECT_TRUE(res && res->status == 200) << path;
    return res ? nlohmann::json::parse(res->body) : nlohmann::json();
  }

  // Crawl crawls every repository concurrently, each until done (at most 6 leases).
  void Crawl() {
    const FaultCase& c = GetParam();
    CrawlerOptions options;
    options.api_urls[v1::TRACKER_GITHUB] = base_;
    options.api_urls[v1::TRACKER_GITLAB] = base_ + "/api/v4";
    options.api_urls[v1::TRACKER_GITEE] = base_ + "/api/v5";
    options.per_page = 20;
    options.max_retries = 8;
    options.initial_backoff = absl::Milliseconds(20);
    options.max_backoff = absl::Milliseconds(500);
    options.request_timeout = absl::Milliseconds(1500);
    for (v1::Tracker kind : {v1::TRACKER_GITHUB, v1::TRACKER_GITLAB, v1::TRACKER_GITEE}) {
      TokenPoolOptions pool_options;
      pool_options.secondary_backoff = absl::Milliseconds(300);
      pool_options.max_secondary_backoff = absl::Seconds(2);
      pool_options.max_wait = absl::Minutes(2);
      if (kind == v1::TRACKER_GITEE) {
        pool_options.assumed_limit = c.gitee_budget;
        pool_options.assumed_window = c.budget_window;
      }
      const std::string t = TrackerName(kind);
      options.pools[kind] = std::make_shared<TokenPool>(
          kind, std::vector<PoolToken>{{"a-" + t, "token-a-" + t}, {"b-" + t, "token-b-" + t}},
          Clock::Real(), pool_options);
    }
    CurlTransport transport;
    std::vector<std::thread> threads;
    for (const v1::RepositoryRef& ref : Repos()) {
      const std::string spec = RepoSlug(ref);
      threads.emplace_back([&, ref, spec] {
        v1::Lease lease;
        lease.set_repo_slug(spec);
        *lease.mutable_repo() = ref;
        lease.set_include_pull_requests(true);
        lease.set_mode(v1::CRAWL_MODE_FULL);
        absl::Status last;
        for (int attempt = 1; attempt <= 6; ++attempt) {
          lease.set_epoch(attempt);
          std::optional<v1::Cursor> cursor;
          RepoCrawler crawler(&transport, store_.get(), Clock::Real(), options);
          auto result = crawler.Crawl(lease, [&](const CrawlProgress& p) {
            if (p.cursor) cursor = p.cursor;
            return absl::OkStatus();
          });
          if (result.ok() && result->done) {
            last = absl::OkStatus();
            break;
          }
          last = result.status();
          lease.set_mode(v1::CRAWL_MODE_INCREMENTAL);
          if (cursor) *lease.mutable_cursor() = *cursor;
        }
        EXPECT_TRUE(last.ok()) << spec << ": " << last;
      });
    }
    for (std::thread& t : threads) t.join();
  }

  Snapshot Corpus() {
    Snapshot out;
    for (const auto& e : Admin("/_sim/corpus")) {
      std::string repo = e.at("repo").get<std::string>();
      if (repo == GetParam().github_moved_to) repo = "octo/gh";  // stored under the leased name
      auto t = ParseRfc3339(e.at("updated_at").get<std::string>());
      EXPECT_TRUE(t.ok()) << e.dump();
      out[absl::StrCat(e.value("tracker", "github"), ":", repo, "#",
                       e.at("number").get<int64_t>())] = {*t, e.at("comments").get<int64_t>()};
    }
    return out;
  }

  Snapshot Store() {
    Snapshot out;
    for (const v1::RepositoryRef& ref : Repos()) {
      const std::string slug = RepoSlug(ref);
      EXPECT_TRUE(store_
                      ->ScanRepository(slug,
                                       [&](const v1::Issue& issue) {
                                         if (issue.deleted()) return true;
                                         auto full = store_->GetIssue(slug, issue.number());
                                         out[absl::StrCat(slug, "#", issue.number())] = {
                                             FromProto(issue.updated_at()),
                                             full.ok() ? full->comments_size() : -1};
                                         return true;
                                       })
                      .ok());
    }
    return out;
  }

  std::string dir_;
  std::string base_;
  std::unique_ptr<Subprocess> sim_;
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
};

TEST_P(FaultCrawlTest, StoreEqualsTheCorpusAndNothingWasSentOverBudget) {
  ASSERT_NO_FATAL_FAILURE(Crawl());
  const Snapshot corpus = Corpus();
  const Snapshot stored = Store();
  ASSERT_GT(corpus.size(), 150u);
  int diffs = 0;
  for (const auto& [id, want] : corpus) {
    auto it = stored.find(id);
    if (it == stored.end()) {
      if (++diffs <= 5) ADD_FAILURE() << "missing " << id;
    } else if (it->second != want) {
      if (++diffs <= 5) {
        ADD_FAILURE() << id << ": stored " << FormatRfc3339(it->second.first) << " with "
                      << it->second.second << " comments, tracker has "
                      << FormatRfc3339(want.first) << " with " << want.second;
      }
    }
  }
  for (const auto& [id, have] : stored) {
    if (!corpus.count(id) && ++diffs <= 10) ADD_FAILURE() << "stored but not in corpus: " << id;
  }
  EXPECT_EQ(diffs, 0);
  const nlohmann::json stats = Admin("/_sim/stats");
  EXPECT_EQ(stats.at("over_budget").get<int64_t>(), 0) << stats.dump();
  EXPECT_EQ(stats.at("retry_after_violations").get<int64_t>(), 0) << stats.dump();
  RecordProperty("requests", stats.at("requests").get<int>());
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultCrawlTest,
    ::testing::Values(
        Case("none", {}),
        Case("server_errors", {"--error-rate=0.2"}),
        Case("truncated_bodies", {"--truncated-rate=0.15"}),
        Case("invalid_json", {"--invalid-json-rate=0.15"}),
        // Slower than the 1.5 s request timeout: the transport times out and the crawl retries.
        Case("slow_responses", {"--slow-rate=0.1", "--slow-ms=2500"}),
        Case("secondary_403_retry_after",
             {"--secondary-limit-rate=0.15", "--secondary-limit-status=403",
              "--with-retry-after=1", "--retry-after-s=1"}),
        Case("secondary_429_no_retry_after",
             {"--secondary-limit-rate=0.15", "--secondary-limit-status=429",
              "--with-retry-after=0"}),
        FaultCase{"budget_runs_out", {"--budget=10", "--budget-window-s=3"}, 10,
                  absl::Seconds(3), ""},
        FaultCase{"transfer_301", {"--transfer=github:octo/gh=neworg/gh2"}, 0, absl::Hours(1),
                  "neworg/gh2"},
        Case("deleted_410", {"--delete=gitlab:grp/sub/gl#3,7", "--delete=gitee:ge/ee#I10002"}),
        Case("deep_page_422", {"--deep-page-limit=2"})),
    [](const ::testing::TestParamInfo<FaultCase>& info) { return info.param.name; });

}  // namespace
}  // namespace issuescope::crawler
