// Conformance: real recorded GitHub responses (../shared/data, see its SOURCES.md) replayed
// through the parsers and, via the FakeTransport, through RepoCrawler: octokit-fixtures
// pagination, github3.py's redirect + two pages of 100 issues (gzip+base64 bodies), PyGithub's
// 14-page Link chain, 304 and rate-limit recordings, and body-only issue and comment corpora.
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/time_util.h"
#include "crawler/github_parse.h"
#include "crawler/repo_crawler.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rocksdb/env.h"
#include "tests/crawler/fake_transport.h"
#include "tests/crawler/mem_store.h"

namespace issuescope::crawler {
namespace {

using testing::FakeTransport;
using Headers = std::vector<std::pair<std::string, std::string>>;
namespace fs = std::filesystem;

const fs::path kData = ISSUESCOPE_SHARED_DATA_DIR;
const fs::path kGithub = kData / "github-api";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

#define REQUIRE_DATA(path)                                                              \
  do {                                                                                  \
    if (!fs::exists(kData)) GTEST_SKIP() << "../shared/data is absent (" << kData << ")"; \
    if (!fs::exists(path)) GTEST_SKIP() << "recording missing: " << (path);             \
  } while (0)

// Gunzip inflates a gzip stream; empty on error.
std::string Gunzip(const std::string& in) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return "";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? out : "";
}

// PyRecord is one exchange of a PyGithub ReplayData file.
struct PyRecord {
  std::string verb, path, status, body;
  Headers request_headers, response_headers;
};

Headers ParsePyTuples(const std::string& line) {
  static const std::regex kPair(R"(\((['"])(.*?)\1, (['"])(.*?)\3\))");
  Headers out;
  for (std::sregex_iterator it(line.begin(), line.end(), kPair), end; it != end; ++it) {
    out.emplace_back((*it)[2], (*it)[4]);
  }
  return out;
}

std::vector<PyRecord> ReadPyGithub(const fs::path& path) {
  std::vector<std::string> lines = absl::StrSplit(ReadFile(path), '\n');
  std::vector<PyRecord> out;
  for (size_t i = 0; i + 9 < lines.size(); i += 11) {
    PyRecord r;
    r.verb = lines[i + 1];
    r.path = lines[i + 4];
    r.status = lines[i + 7];
    r.response_headers = ParsePyTuples(lines[i + 8]);
    r.body = lines[i + 9];
    out.push_back(std::move(r));
  }
  return out;
}

class ConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenMemStore(&env_, &store_));
  }
  v1::Lease Lease(const std::string& owner, const std::string& name) {
    v1::Lease lease;
    lease.mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
    lease.mutable_repo()->set_owner(owner);
    lease.mutable_repo()->set_name(name);
    lease.set_repo_slug(absl::AsciiStrToLower(absl::StrCat("github:", owner, "/", name)));
    lease.set_epoch(1);
    lease.set_mode(v1::CRAWL_MODE_FULL);
    return lease;
  }
  absl::StatusOr<CrawlProgress> Crawl(const v1::Lease& lease) {
    RepoCrawler crawler(&http_, store_.get(), &clock_, options_);
    return crawler.Crawl(lease, [](const CrawlProgress&) { return absl::OkStatus(); });
  }
  int64_t StoredIssues(const std::string& slug) {
    int64_t n = 0;
    EXPECT_TRUE(store_->ScanRepository(slug, [&](const v1::Issue&) {
      ++n;
      return true;
    }).ok());
    return n;
  }

  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<IssueStore> store_;
  FakeClock clock_;
  FakeTransport http_{&clock_};
  CrawlerOptions options_;
};

TEST_F(ConformanceTest, OctokitPaginateIssuesFollowsOnlyNext) {
  const fs::path file =
      kGithub / "octokit-fixtures/scenarios/api.github.com/paginate-issues/normalized-fixture.json";
  REQUIRE_DATA(file);
  const auto records = nlohmann::json::parse(ReadFile(file));
  ASSERT_EQ(records.size(), 5u);
  options_.per_page = 3;
  const std::string repo = "https://api.github.com/repos/octokit-fixture-org/paginate-issues";
  const std::string issues = repo + "/issues?state=all&sort=updated&direction=asc&per_page=3";
  // The confirmation round lists from the new cursor. The normalized fixture sets every
  // updated_at to one instant, so all 13 issues are at the cursor and GitHub would serve the
  // same five pages again; there is no recording of that URL, so the recorded chain is replayed
  // once more, starting from the confirmation URL (its recorded links carry no since).
  const std::string confirm = issues + "&since=2017-10-10T16%3A00%3A00Z";
  http_.Respond(repo, 200, R"({"full_name": "octokit-fixture-org/paginate-issues"})");
  std::vector<std::string> chain;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < records.size(); ++i) {
      Headers headers;
      for (const auto& [k, v] : records[i]["headers"].items()) {
        // The normalized fixture sets every Date and updated_at to one instant; its Date would
        // look like "everything changed while paging" and trigger shift repair.
        if (k != "date") headers.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
      }
      const std::string url =
          i == 0 ? (pass == 0 ? issues : confirm)
                 : "https://api.github.com" + records[i]["path"].get<std::string>();
      http_.Respond(url, records[i]["status"].get<int>(), records[i]["response"].dump(), headers);
      chain.push_back(url);
    }
  }
  const std::string comments = repo + "/issues/comments?sort=updated&direction=asc&per_page=3";
  http_.Respond(comments, 200, "[]");

  const auto links = ParseLinkHeader(records[1]["headers"]["link"].get<std::string>());
  EXPECT_EQ(links.size(), 4u);

  auto result = Crawl(Lease("octokit-fixture-org", "paginate-issues"));
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<std::string> want = {repo};
  want.insert(want.end(), chain.begin(), chain.end());
  want.push_back(comments);
  EXPECT_EQ(http_.Urls(), want);
  EXPECT_EQ(result->counters.requests(), 12);  // repo + 5 pages + 5 confirmation pages + comments
  EXPECT_EQ(result->counters.issues_fetched(), 26);
  EXPECT_EQ(result->counters.issues_stored(), 13);  // the confirmation pages are no-ops
  EXPECT_EQ(http_.Pending(), 0u);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), "2017-10-10T16:00:00Z");
  // The listing at the cursor spans five pages: page 1's ETag cannot vouch for the rest (a new
  // item would land on a later page), so none is stored.
  EXPECT_EQ(result->cursor->issues_etag(), "");
  EXPECT_EQ(result->rate_remaining, 4999);
}

TEST_F(ConformanceTest, Github3RedirectAndTwoPagesOfIssues) {
  const fs::path file = kGithub / "github3py-cassettes/tests/cassettes/Repository_issues_state_all.json";
  REQUIRE_DATA(file);
  const auto cassette = nlohmann::json::parse(ReadFile(file));
  const auto& xs = cassette["http_interactions"];
  ASSERT_EQ(xs.size(), 4u);
  auto body_of = [](const nlohmann::json& body) -> std::string {
    if (body.contains("base64_string") && body["base64_string"].is_string() &&
        !body["base64_string"].get<std::string>().empty()) {
      std::string raw;
      if (!absl::Base64Unescape(body["base64_string"].get<std::string>(), &raw)) return "";
      return Gunzip(raw);
    }
    return body.value("string", "");
  };
  auto headers_of = [](const nlohmann::json& h) {
    Headers out;
    for (const auto& [k, v] : h.items()) {
      if (absl::EqualsIgnoreCase(k, "Content-Encoding")) continue;  // bodies are inflated here
      out.emplace_back(k, v.is_array() ? v[0].get<std::string>() : v.get<std::string>());
    }
    return out;
  };
  std::vector<std::string> bodies;
  for (const auto& x : xs) bodies.push_back(body_of(x["response"]["body"]));
  for (size_t i = 1; i < bodies.size(); ++i) {
    if (bodies[i].empty()) GTEST_SKIP() << "could not inflate the gzip+base64 body " << i;
  }
  const std::string new_base = "https://api.github.com/repos/betamaxpy/betamax";
  http_.Respond(xs[0]["request"]["uri"], 301, bodies[0], headers_of(xs[0]["response"]["headers"]));
  http_.Respond(xs[1]["request"]["uri"], 200, bodies[1], headers_of(xs[1]["response"]["headers"]));
  http_.Respond(new_base + "/issues?state=all&sort=updated&direction=asc&per_page=100", 200,
                bodies[2], headers_of(xs[2]["response"]["headers"]));
  http_.Respond(xs[3]["request"]["uri"], 200, bodies[3], headers_of(xs[3]["response"]["headers"]));
  // The confirmation round lists from the new cursor, the newest updated_at of the 150 issues.
  // That URL was never recorded: serve what GitHub would, the recorded items at the cursor
  // (first page's headers without its Link, and a stand-in ETag since the body differs).
  nlohmann::json all = nlohmann::json::parse(bodies[2]);
  for (const auto& item : nlohmann::json::parse(bodies[3])) all.push_back(item);
  std::string newest;
  for (const auto& item : all) newest = std::max(newest, item["updated_at"].get<std::string>());
  ASSERT_EQ(newest, "2017-12-20T08:29:30Z");
  nlohmann::json at_cursor = nlohmann::json::array();
  for (const auto& item : all) {
    if (item["updated_at"] == newest) at_cursor.push_back(item);
  }
  ASSERT_EQ(at_cursor.size(), 1u);
  Headers confirm_headers;
  for (auto& [k, v] : headers_of(xs[2]["response"]["headers"])) {
    if (!absl::EqualsIgnoreCase(k, "Link") && !absl::EqualsIgnoreCase(k, "ETag")) {
      confirm_headers.emplace_back(k, v);
    }
  }
  confirm_headers.emplace_back("ETag", "W/\"confirmation\"");
  const std::string confirm = new_base +
      "/issues?state=all&sort=updated&direction=asc&per_page=100&since=2017-12-20T08%3A29%3A30Z";
  http_.Respond(confirm, 200, at_cursor.dump(), confirm_headers);
  http_.Respond(new_base + "/issues/comments?sort=updated&direction=asc&per_page=100", 200, "[]");

  auto result = Crawl(Lease("sigmavirus24", "betamax"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->moved_to, "github:betamaxpy/betamax");
  EXPECT_EQ(result->counters.requests(), 6);  // redirect, repo, 2 pages, confirmation, comments
  EXPECT_EQ(http_.Requests()[4].request.url, confirm);
  EXPECT_EQ(FormatRfc3339(FromProto(result->cursor->issues_since())), newest);
  EXPECT_EQ(result->cursor->issues_etag(), "W/\"confirmation\"");
  EXPECT_EQ(result->cursor->repo_etag(), "W/\"1ae8da919305f09bffbacefa02fd14be\"");
  // 150 listed, of which 67 are pull requests (dropped by default).
  EXPECT_EQ(result->counters.issues_stored(), 83);
  EXPECT_EQ(StoredIssues("github:sigmavirus24/betamax"), 83);
  EXPECT_EQ(http_.Pending(), 0u);
}

TEST_F(ConformanceTest, PyGithubFourteenPageLinkChainAndCutDownBodies) {
  const fs::path file = kGithub / "pygithub-replaydata/tests/ReplayData/Issue33.testOpenIssues.txt";
  REQUIRE_DATA(file);
  const auto records = ReadPyGithub(file);
  ASSERT_EQ(records.size(), 14u);
  v1::RepositoryRef repo;
  repo.set_owner("openframeworks");
  repo.set_name("openFrameworks");
  for (size_t i = 0; i < records.size(); ++i) {
    HttpHeaders h;
    h.entries = records[i].response_headers;
    const auto links = ParseLinkHeader(h.Get("Link"));
    if (i + 1 < records.size()) {
      ASSERT_EQ(links.count("next"), 1u) << i;
      EXPECT_EQ(links.at("next"), "https://api.github.com" + records[i + 1].path);
    } else {
      EXPECT_EQ(links.count("next"), 0u);
    }
    // The maintainers cut these bodies down to ids: a clear error, no crash.
    auto page = ParseIssuesPage(records[i].body, repo);
    ASSERT_FALSE(page.ok());
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(page.status().message().find("item 0: field 'number' is missing"),
              absl::string_view::npos)
        << page.status();
  }
}

TEST_F(ConformanceTest, PyGithubIssueCommentsOfTheOldApiLackIssueUrl) {
  // Recorded in 2012, before comments carried `issue_url`: nothing names their issue, so the
  // page is refused with a clear message rather than stored under a guessed number.
  const fs::path file = kGithub / "pygithub-replaydata/tests/ReplayData/Issue.testGetComments.txt";
  REQUIRE_DATA(file);
  const auto records = ReadPyGithub(file);
  ASSERT_EQ(records.size(), 1u);
  auto raw = nlohmann::json::parse(records[0].body);
  ASSERT_FALSE(raw.empty());
  auto page = ParseCommentsPage(records[0].body, v1::RepositoryRef());
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(page.status().message().find("item 0: field 'issue_url' is missing"),
            absl::string_view::npos)
      << page.status();
  // With the issue named, the same recorded objects parse.
  for (auto& c : raw) c["issue_url"] = "https://api.github.com/repos/PyGithub/PyGithub/issues/28";
  auto fixed = ParseCommentsPage(raw.dump(), v1::RepositoryRef());
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  for (const auto& c : *fixed) {
    EXPECT_EQ(c.issue_number(), 28);
    EXPECT_FALSE(c.author().empty());
    EXPECT_TRUE(c.has_updated_at());
  }
}

TEST_F(ConformanceTest, PyGithubNotModifiedKeepsTheCursor) {
  const fs::path file =
      kGithub / "pygithub-replaydata/tests/ReplayData/ConditionalRequestUpdate.testDidNotUpdate.txt";
  REQUIRE_DATA(file);
  const auto records = ReadPyGithub(file);
  ASSERT_FALSE(records.empty());
  ASSERT_EQ(records[0].status, "304");
  HttpHeaders h;
  h.entries = records[0].response_headers;
  const std::string etag = h.Get("ETag");
  ASSERT_FALSE(etag.empty());
  options_.per_page = 100;
  const std::string base = "https://api.github.com/repos/akfish/PyGithub";
  http_.Respond(base, 200, R"({"full_name": "akfish/PyGithub"})");
  http_.Respond(base + "/issues?state=all&sort=updated&direction=asc&per_page=100", 304, "",
                records[0].response_headers);
  http_.Respond(base + "/issues/comments?sort=updated&direction=asc&per_page=100", 304, "",
                records[0].response_headers);
  v1::Lease lease = Lease("akfish", "PyGithub");
  lease.set_mode(v1::CRAWL_MODE_INCREMENTAL);
  lease.mutable_cursor()->set_issues_etag(etag);
  lease.mutable_cursor()->set_comments_etag(etag);
  auto result = Crawl(lease);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->counters.requests(), 3);
  EXPECT_EQ(result->counters.not_modified(), 2);
  EXPECT_EQ(result->cursor->issues_etag(), etag);
  EXPECT_EQ(result->rate_remaining, 4988);
  EXPECT_EQ(http_.Requests()[1].request.headers.Get("If-None-Match"), etag);
}

TEST_F(ConformanceTest, PyGithubRateLimitExceededIsWaitedOut) {
  const fs::path file =
      kGithub / "pygithub-replaydata/tests/ReplayData/SpecificExceptions.testRateLimitExceeded.txt";
  REQUIRE_DATA(file);
  const auto records = ReadPyGithub(file);
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(records[1].status, "403");
  const std::string base = "https://api.github.com/repos/o/r";
  const std::string issues = base + "/issues?state=all&sort=updated&direction=asc&per_page=100";
  http_.Respond(base, 200, R"({"full_name": "o/r"})");
  http_.Respond(issues, 403, records[1].body, records[1].response_headers);
  http_.Respond(issues, 200, "[]");
  http_.Respond(base + "/issues/comments?sort=updated&direction=asc&per_page=100", 200, "[]");
  auto result = Crawl(Lease("o", "r"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->counters.retries(), 1);
  const auto reqs = http_.Requests();
  // No reset time recorded: the crawler waits max_backoff before retrying.
  EXPECT_GE(reqs[2].at - reqs[1].at, options_.max_backoff);
}

TEST_F(ConformanceTest, BodyOnlyIssueAndCommentCorpora) {
  REQUIRE_DATA(kGithub / "github-to-sqlite/tests/issues.json");
  v1::RepositoryRef repo;
  repo.set_owner("simonw");
  repo.set_name("datasette");
  auto issues = ParseIssuesPage(ReadFile(kGithub / "github-to-sqlite/tests/issues.json"), repo);
  ASSERT_TRUE(issues.ok()) << issues.status();
  ASSERT_EQ(issues->size(), 2u);
  EXPECT_NE((*issues)[0].is_pull_request(), (*issues)[1].is_pull_request());
  auto comments =
      ParseCommentsPage(ReadFile(kGithub / "github-to-sqlite/tests/issue-comments.json"), repo);
  ASSERT_TRUE(comments.ok()) << comments.status();
  EXPECT_EQ(comments->size(), 3u);
  for (const char* f : {"github_issue_1", "github_issue_2", "github_issue_2_with_pr"}) {
    auto page = ParseIssuesPage(ReadFile(kGithub / "perceval/tests/data/github" / f), repo);
    EXPECT_TRUE(page.ok()) << f << ": " << page.status();
  }
  for (const char* f : {"github_issue_comments_1", "github_issue_comments_2"}) {
    auto page = ParseCommentsPage(ReadFile(kGithub / "perceval/tests/data/github" / f), repo);
    EXPECT_TRUE(page.ok()) << f << ": " << page.status();
  }
}

TEST_F(ConformanceTest, SilentBugsTensorFlowIssueObjects) {
  const fs::path dir = kData / "labeled/silent-bugs-tf-keras/Artifacts/Bugs_in_JSON";
  REQUIRE_DATA(dir);
  v1::RepositoryRef repo;
  repo.set_owner("tensorflow");
  repo.set_name("tensorflow");
  int parsed = 0, labelled = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(ReadFile(entry.path()));
    } catch (const nlohmann::json::exception& e) {
      ADD_FAILURE() << entry.path() << ": " << e.what();
      continue;
    }
    auto issue = ParseIssue(obj, repo);
    ASSERT_TRUE(issue.ok()) << entry.path() << ": " << issue.status();
    EXPECT_GT(issue->number(), 0);
    EXPECT_NE(issue->state(), v1::ISSUE_STATE_UNSPECIFIED);
    ++parsed;
    labelled += issue->labels_size() > 0;
  }
  EXPECT_EQ(parsed, 77);
  EXPECT_GT(labelled, 70);
}

}  // namespace
}  // namespace issuescope::crawler
