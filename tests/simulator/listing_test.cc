// Tests of the list endpoints over real HTTP: pagination and Link headers, since/sort/direction
// (ties included), state and label filters, pull requests, repository and issue comments.
// Expected answers come from the same corpus generated in-process (generation is deterministic).
#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/simulator/corpus_generator.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

using testing::Get;
using testing::ParseLinks;
using testing::Reply;

class ListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.repos = 2;
    options_.issues_per_repo = 250;
    options_.comments_per_issue = 2.0;
    options_.rate_limit = 1000000;
    options_.threads = 2;
    auto corpus = GenerateCorpus(options_);
    ASSERT_TRUE(corpus.ok());
    truth_ = std::move(*corpus);
    sim_ = testing::StartOrDie(options_);
    ASSERT_NE(sim_, nullptr);
  }

  const Repository& Repo() const { return truth_.repos[0]; }

  // Expected orders issue numbers matching `keep` by (key, number asc), key reversed for desc.
  std::vector<int64_t> Expected(const std::function<bool(const Issue&)>& keep,
                                const std::function<int64_t(const Issue&)>& key,
                                bool ascending) const {
    std::vector<const Issue*> v;
    for (const Issue& i : Repo().issues) {
      if (keep(i)) v.push_back(&i);
    }
    std::sort(v.begin(), v.end(), [&](const Issue* a, const Issue* b) {
      if (key(*a) != key(*b)) return ascending ? key(*a) < key(*b) : key(*a) > key(*b);
      return a->number < b->number;
    });
    std::vector<int64_t> out;
    for (const Issue* i : v) out.push_back(i->number);
    return out;
  }

  // FetchAll follows rel="next" from `path`, returning every element and checking each page.
  std::vector<nlohmann::json> FetchAll(const std::string& path, int* pages = nullptr) {
    std::vector<nlohmann::json> all;
    std::string url = path;
    int n = 0;
    while (!url.empty() && n < 1000) {
      Reply r = Get(*sim_, url);
      EXPECT_EQ(r.status, 200) << url << ": " << r.body;
      if (r.status != 200) break;
      for (const auto& e : r.json) all.push_back(e);
      ++n;
      auto links = ParseLinks(r.Header("Link"));
      url = links.count("next") ? links["next"] : "";
    }
    if (pages != nullptr) *pages = n;
    return all;
  }

  static std::vector<int64_t> Numbers(const std::vector<nlohmann::json>& v) {
    std::vector<int64_t> out;
    for (const auto& e : v) out.push_back(e["number"].get<int64_t>());
    return out;
  }

  SimulatorOptions options_;
  Corpus truth_;
  std::unique_ptr<TrackerSimulator> sim_;
};

TEST_F(ListingTest, LinkHeadersWalkEveryPage) {
  const int64_t total = static_cast<int64_t>(Repo().issues.size());
  for (int per_page : {100, 7, 33, 1000}) {  // 1000 is clamped to 100
    SCOPED_TRACE(per_page);
    const std::string path =
        absl::StrCat("/repos/pytorch/pytorch/issues?state=all&per_page=", per_page);
    const int64_t size = std::min(per_page, 100);
    const int64_t last = (total + size - 1) / size;
    for (int64_t page = 1; page <= last; ++page) {
      Reply r = Get(*sim_, absl::StrCat(path, "&page=", page));
      ASSERT_EQ(r.status, 200);
      auto links = ParseLinks(r.Header("Link"));
      const std::string base = sim_->base_url() + path;
      EXPECT_EQ(links.count("prev"), page > 1 ? 1u : 0u);
      EXPECT_EQ(links.count("first"), page > 1 ? 1u : 0u);
      EXPECT_EQ(links.count("next"), page < last ? 1u : 0u);
      EXPECT_EQ(links.count("last"), page < last ? 1u : 0u);
      if (page > 1) {
        EXPECT_EQ(links["prev"], absl::StrCat(base, "&page=", page - 1));
        EXPECT_EQ(links["first"], absl::StrCat(base, "&page=1"));
      }
      if (page < last) {
        EXPECT_EQ(links["next"], absl::StrCat(base, "&page=", page + 1));
        EXPECT_EQ(links["last"], absl::StrCat(base, "&page=", last));
      }
    }
    int pages = 0;
    std::vector<int64_t> got = Numbers(FetchAll(path, &pages));
    EXPECT_EQ(pages, last);
    EXPECT_EQ(got, Expected([](const Issue&) { return true; },
                            [](const Issue& i) { return i.created_at; }, false));
  }
}

TEST_F(ListingTest, NoLinkWhenEverythingFitsOnOnePage) {
  const Issue& busy = *std::max_element(
      Repo().issues.begin(), Repo().issues.end(),
      [](const Issue& a, const Issue& b) { return a.comments.size() < b.comments.size(); });
  Reply r = Get(*sim_, absl::StrCat("/repos/pytorch/pytorch/issues/", busy.number, "/comments"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json.size(), busy.comments.size());
  EXPECT_EQ(r.Header("Link"), "");
  Reply all = Get(*sim_, "/repos/vllm-project/vllm/issues?state=closed&labels=no-such-label");
  EXPECT_EQ(all.body, "[]");
  EXPECT_EQ(all.Header("Link"), "");
}

TEST_F(ListingTest, ExactLinkFormatKeepsOtherParameters) {
  Reply r = Get(*sim_, "/repos/pytorch/pytorch/issues?state=all&page=2&per_page=100&sort=created");
  const std::string u = sim_->base_url() + "/repos/pytorch/pytorch/issues?state=all&page=";
  const std::string tail = "&per_page=100&sort=created";
  EXPECT_EQ(r.Header("Link"), absl::StrCat("<", u, "1", tail, ">; rel=\"prev\", <", u, "3", tail,
                                           ">; rel=\"next\", <", u, "3", tail,
                                           ">; rel=\"last\", <", u, "1", tail, ">; rel=\"first\""));
}

TEST_F(ListingTest, SortDirectionAndTies) {
  struct Case {
    const char* sort;
    const char* direction;  // "" = default
    std::function<int64_t(const Issue&)> key;
    bool ascending;
  };
  const Case cases[] = {
      {"created", "", [](const Issue& i) { return i.created_at; }, false},
      {"created", "asc", [](const Issue& i) { return i.created_at; }, true},
      {"updated", "asc", [](const Issue& i) { return i.updated_at; }, true},
      {"updated", "desc", [](const Issue& i) { return i.updated_at; }, false},
      {"comments", "desc",
       [](const Issue& i) { return static_cast<int64_t>(i.comments.size()); }, false},
      {"comments", "asc",
       [](const Issue& i) { return static_cast<int64_t>(i.comments.size()); }, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.sort, " ", c.direction));
    std::string path = absl::StrCat("/repos/pytorch/pytorch/issues?state=all&per_page=9&sort=",
                                    c.sort);
    if (*c.direction) absl::StrAppend(&path, "&direction=", c.direction);
    EXPECT_EQ(Numbers(FetchAll(path)),
              Expected([](const Issue&) { return true; }, c.key, c.ascending));
  }
}

TEST_F(ListingTest, SinceFiltersByUpdatedAndOmitsLast) {
  std::vector<int64_t> updated;
  for (const Issue& i : Repo().issues) updated.push_back(i.updated_at);
  std::sort(updated.begin(), updated.end());
  // Pick a timestamp shared by two issues when there is one, to exercise ties at the boundary.
  int64_t since = updated[updated.size() / 2];
  for (size_t k = 1; k < updated.size(); ++k) {
    if (updated[k] == updated[k - 1] && k > updated.size() / 3) {
      since = updated[k];
      break;
    }
  }
  const std::string ts = FormatTimestamp(since);
  for (const char* sort : {"updated", "created"}) {
    SCOPED_TRACE(sort);
    const std::string path = absl::StrCat("/repos/pytorch/pytorch/issues?state=all&sort=", sort,
                                          "&direction=asc&per_page=10&since=", ts);
    Reply first = Get(*sim_, path);
    auto links = ParseLinks(first.Header("Link"));
    EXPECT_EQ(links.count("next"), 1u);
    EXPECT_EQ(links.count("last"), 0u) << "rel=last is omitted when since is given";
    auto key = std::string(sort) == "updated"
                   ? std::function<int64_t(const Issue&)>([](const Issue& i) { return i.updated_at; })
                   : std::function<int64_t(const Issue&)>([](const Issue& i) { return i.created_at; });
    EXPECT_EQ(Numbers(FetchAll(path)),
              Expected([&](const Issue& i) { return i.updated_at >= since; }, key, true));
  }
}

TEST_F(ListingTest, StateLabelsAndPullRequests) {
  auto open = Numbers(FetchAll("/repos/pytorch/pytorch/issues?per_page=100"));
  EXPECT_EQ(open, Expected([](const Issue& i) { return i.open; },
                           [](const Issue& i) { return i.created_at; }, false));
  auto closed = Numbers(FetchAll("/repos/pytorch/pytorch/issues?state=closed&per_page=100"));
  EXPECT_EQ(closed.size() + open.size(), Repo().issues.size());
  const std::string a = "module: cuda";
  const std::string b = "triaged";
  auto both = Numbers(FetchAll(
      "/repos/pytorch/pytorch/issues?state=all&labels=module%3A%20cuda,triaged&per_page=100"));
  EXPECT_EQ(both, Expected(
                      [&](const Issue& i) {
                        auto has = [&](const std::string& l) {
                          return std::count(i.labels.begin(), i.labels.end(), l) > 0;
                        };
                        return has(a) && has(b);
                      },
                      [](const Issue& i) { return i.created_at; }, false));
  int prs = 0;
  for (const auto& e : FetchAll("/repos/pytorch/pytorch/issues?state=all&per_page=100")) {
    const Issue* truth = Repo().FindIssue(e["number"].get<int64_t>());
    ASSERT_NE(truth, nullptr);
    EXPECT_EQ(e.contains("pull_request"), truth->is_pull_request);
    if (truth->is_pull_request) {
      ++prs;
      for (const char* k : {"url", "html_url", "diff_url", "patch_url"}) {
        EXPECT_TRUE(e["pull_request"].contains(k)) << k;
      }
    }
  }
  EXPECT_GT(prs, 0);
}

TEST_F(ListingTest, PerPageClampAndPageBeyondEnd) {
  Reply big = Get(*sim_, "/repos/pytorch/pytorch/issues?state=all&per_page=1000");
  EXPECT_EQ(big.json.size(), 100u);
  Reply dflt = Get(*sim_, "/repos/pytorch/pytorch/issues?state=all");
  EXPECT_EQ(dflt.json.size(), 30u);
  Reply beyond = Get(*sim_, "/repos/pytorch/pytorch/issues?state=all&per_page=100&page=9");
  EXPECT_EQ(beyond.status, 200);
  EXPECT_EQ(beyond.body, "[]");
}

TEST_F(ListingTest, RepositoryAndIssueComments) {
  std::vector<const Comment*> want;
  for (const Comment& c : Repo().comments) want.push_back(&c);
  std::sort(want.begin(), want.end(), [](const Comment* a, const Comment* b) {
    return a->created_at != b->created_at ? a->created_at < b->created_at : a->id < b->id;
  });
  auto got = FetchAll("/repos/pytorch/pytorch/issues/comments?per_page=100");
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k]["id"], want[k]->id);

  const int64_t since = want[want.size() / 2]->updated_at;
  auto recent = FetchAll("/repos/pytorch/pytorch/issues/comments?sort=updated&direction=desc&"
                         "per_page=50&since=" + FormatTimestamp(since));
  size_t expected = 0;
  for (const Comment* c : want) expected += c->updated_at >= since;
  EXPECT_EQ(recent.size(), expected);
  for (size_t k = 1; k < recent.size(); ++k) {
    EXPECT_GE(recent[k - 1]["updated_at"].get<std::string>(),
              recent[k]["updated_at"].get<std::string>());
  }

  const Issue* busy = &Repo().issues[0];
  for (const Issue& i : Repo().issues) {
    if (i.comments.size() > busy->comments.size()) busy = &i;
  }
  ASSERT_GE(busy->comments.size(), 3u);
  auto thread = FetchAll(absl::StrCat("/repos/pytorch/pytorch/issues/", busy->number,
                                      "/comments?per_page=2"));
  ASSERT_EQ(thread.size(), busy->comments.size());
  for (size_t k = 0; k < thread.size(); ++k) {
    EXPECT_EQ(thread[k]["id"], Repo().comments[busy->comments[k]].id);
    EXPECT_EQ(thread[k]["issue_url"],
              absl::StrCat(sim_->base_url(), "/repos/pytorch/pytorch/issues/", busy->number));
  }
}

}  // namespace
}  // namespace issuescope::sim
