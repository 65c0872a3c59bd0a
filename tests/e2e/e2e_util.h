// Helpers shared by the end-to-end and chaos tests: temporary directories, the simulator's
// ground truth and counters over HTTP, paging through every search hit, and the check that the
// index holds exactly the tracker's issues at their newest versions.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "deploy/cli/cluster.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace issuescope::e2e {

using IssueId = std::pair<std::string, int64_t>;  // ("owner/name", number)

// ReadFile is the whole file at `path` ("" when it cannot be read): logs, port files.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// CallSearch calls Search with a deadline; a failed call is its gRPC code and message.
inline absl::StatusOr<v1::SearchResponse> CallSearch(v1::Search::Stub* stub,
                                                     const v1::SearchRequest& request,
                                                     absl::Duration timeout = absl::Seconds(20)) {
  v1::SearchResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  const grpc::Status s = stub->Search(&ctx, request, &resp);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat(s.error_code(), ": ", s.error_message()));
  }
  return resp;
}

inline std::string MakeTempDir(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = absl::StrCat(tmp ? tmp : "/tmp", "/", name, "-XXXXXX");
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

// SimulatorAdmin reads the simulator's ground truth and request counters over HTTP.
class SimulatorAdmin {
 public:
  explicit SimulatorAdmin(const std::string& url) : http_(url) { http_.set_read_timeout(60, 0); }

  nlohmann::json Get(const std::string& path) {
    auto res = http_.Get(path.c_str());
    EXPECT_TRUE(res && res->status == 200) << path;
    return res ? nlohmann::json::parse(res->body) : nlohmann::json();
  }
  nlohmann::json Post(const std::string& path, const std::string& body) {
    auto res = http_.Post(path.c_str(), body, "application/json");
    EXPECT_TRUE(res && res->status == 200) << path;
    return res ? nlohmann::json::parse(res->body) : nlohmann::json();
  }
  // Corpus: issue → updated_at; also fills per-repo issue and comment counts.
  std::map<IssueId, std::string> Corpus(std::map<std::string, std::pair<int64_t, int64_t>>* counts,
                                        std::set<IssueId>* planted) {
    std::map<IssueId, std::string> out;
    for (const auto& e : Get("/_sim/corpus")) {
      IssueId id{e.at("repo").get<std::string>(), e.at("number").get<int64_t>()};
      out[id] = e.at("updated_at").get<std::string>();
      if (counts != nullptr) {
        (*counts)[id.first].first += 1;
        (*counts)[id.first].second += e.at("comments").get<int64_t>();
      }
      if (planted != nullptr && e.value("planted", false)) planted->insert(id);
    }
    return out;
  }
  int64_t Requests() { return Get("/_sim/stats").at("requests").get<int64_t>(); }
  int64_t NotModified() { return Get("/_sim/stats").at("not_modified").get<int64_t>(); }

 private:
  httplib::Client http_;
};

// SearchAll pages through every hit of `query`, failing on a duplicate.
inline std::map<IssueId, v1::SearchHit> SearchAll(cli::Cluster& cluster, const std::string& query,
                                           int64_t* total) {
  std::map<IssueId, v1::SearchHit> hits;
  std::string token;
  do {
    v1::SearchRequest req;
    req.set_query(query);
    req.set_page_size(500);
    req.set_page_token(token);
    v1::SearchResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Status s = cluster.search_stub().Search(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (!s.ok()) break;
    *total = resp.total();
    for (const v1::SearchHit& hit : resp.hits()) {
      IssueId id{hit.repo(), hit.number()};
      EXPECT_EQ(hits.count(id), 0u) << "duplicate hit " << id.first << "#" << id.second;
      hits[id] = hit;
    }
    token = resp.next_page_token();
  } while (!token.empty());
  return hits;
}

// Counters sums the coordinator's per-repository counters of the last crawl.
inline std::map<std::string, v1::CrawlCounters> Counters(cli::Cluster& cluster) {
  std::map<std::string, v1::CrawlCounters> out;
  auto status = cluster.Status();
  EXPECT_TRUE(status.ok()) << status.status();
  if (!status.ok()) return out;
  for (const v1::RepositoryStatus& r : status->repositories()) {
    out[r.repo().owner() + "/" + r.repo().name()] = r.counters();
  }
  return out;
}

inline void ExpectIndexEqualsCorpus(cli::Cluster& cluster, const std::map<IssueId, std::string>& corpus) {
  int64_t total = 0;
  std::map<IssueId, v1::SearchHit> hits = SearchAll(cluster, "", &total);
  EXPECT_EQ(total, static_cast<int64_t>(corpus.size()));
  EXPECT_EQ(hits.size(), corpus.size());
  int missing = 0, stale = 0;
  for (const auto& [id, updated] : corpus) {
    auto it = hits.find(id);
    if (it == hits.end()) {
      if (++missing <= 5) ADD_FAILURE() << "missing from index: " << id.first << "#" << id.second;
      continue;
    }
    if (FormatRfc3339(FromProto(it->second.updated_at())) != updated) {
      if (++stale <= 5) {
        ADD_FAILURE() << "stale in index: " << id.first << "#" << id.second << " has "
                      << FormatRfc3339(FromProto(it->second.updated_at())) << ", tracker has "
                      << updated;
      }
    }
  }
  for (const auto& [id, hit] : hits) {
    EXPECT_TRUE(corpus.count(id)) << "index has an issue the tracker lacks: " << id.first << "#"
                                  << id.second;
  }
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(stale, 0);
}

}  // namespace issuescope::e2e
