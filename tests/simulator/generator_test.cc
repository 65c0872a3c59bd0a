// Tests of corpus generation: determinism, realism of the shapes, invariants, planting.
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/simulator/corpus_generator.h"
#include "tests/simulator/github_json.h"

namespace issuescope::sim {
namespace {

SimulatorOptions Small(int repos = 3, int issues = 200) {
  SimulatorOptions o;
  o.repos = repos;
  o.issues_per_repo = issues;
  return o;
}

// HasHan reports whether UTF-8 `text` contains a CJK ideograph (lead bytes E4..E9).
bool HasHan(const std::string& text) {
  for (unsigned char c : text) {
    if (c >= 0xE4 && c <= 0xE9) return true;
  }
  return false;
}

// Serialize renders every record exactly as the API would, so equality means byte-identical.
std::string Serialize(const Corpus& corpus) {
  std::string out;
  for (const Repository& r : corpus.repos) {
    out += Dump(RepositoryJson(r, "http://h"));
    for (const Issue& i : r.issues) out += Dump(IssueJson(r, i, "http://h"));
    for (const Comment& c : r.comments) out += Dump(CommentJson(r, c, "http://h"));
  }
  return out;
}

TEST(GeneratorTest, SameOptionsGiveByteIdenticalCorpus) {
  auto a = GenerateCorpus(Small());
  auto b = GenerateCorpus(Small());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Serialize(*a), Serialize(*b));
  SimulatorOptions other = Small();
  other.seed = 2;
  auto c = GenerateCorpus(other);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(Serialize(*a), Serialize(*c));
}

TEST(GeneratorTest, RepositoriesAreNamedAfterProjectsInOrder) {
  auto corpus = GenerateCorpus(Small(10, 1));
  ASSERT_TRUE(corpus.ok());
  std::vector<std::string> names;
  for (const Repository& r : corpus->repos) names.push_back(r.FullName());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "pytorch/pytorch", "vllm-project/vllm", "microsoft/DeepSpeed",
                       "NVIDIA/Megatron-LM", "tensorflow/tensorflow", "mindspore-ai/mindspore",
                       "hpcaitech/ColossalAI", "huggingface/transformers", "pytorch/pytorch-2",
                       "vllm-project/vllm-2"}));
}

TEST(GeneratorTest, CorpusIsRealisticAndConsistent) {
  SimulatorOptions o = Small(2, 1000);
  auto corpus = GenerateCorpus(o);
  ASSERT_TRUE(corpus.ok());
  int64_t issues = 0, prs = 0, cjk = 0, closed = 0, body_bytes = 0, ties = 0, labelled = 0;
  std::set<int64_t> issue_ids, comment_ids;
  for (const Repository& r : corpus->repos) {
    std::map<int64_t, int> updated_count;
    for (const Issue& i : r.issues) {
      ++issues;
      prs += i.is_pull_request;
      cjk += HasHan(i.title);
      labelled += !i.labels.empty();
      body_bytes += static_cast<int64_t>(i.body.size());
      EXPECT_TRUE(issue_ids.insert(i.id).second) << "duplicate issue id " << i.id;
      EXPECT_GE(i.updated_at, i.created_at);
      EXPECT_GE(i.created_at, 1546300800);  // 2019-01-01
      EXPECT_LT(i.updated_at, 1767225600);  // 2026-01-01
      if (!i.open) {
        ++closed;
        EXPECT_NE(i.closed_at, 0);
        EXPECT_LE(i.closed_at, i.updated_at);
        if (!i.is_pull_request) {
          EXPECT_FALSE(i.state_reason.empty());
        }
      }
      for (uint32_t c : i.comments) {
        const Comment& comment = r.comments[c];
        EXPECT_GE(comment.created_at, i.created_at);
        EXPECT_GE(comment.updated_at, comment.created_at);
        EXPECT_LE(comment.updated_at, i.updated_at);
      }
      ++updated_count[i.updated_at];
    }
    for (const auto& [t, n] : updated_count) ties += n > 1 ? n : 0;
    for (const Comment& c : r.comments) {
      EXPECT_TRUE(comment_ids.insert(c.id).second) << "duplicate comment id " << c.id;
    }
  }
  EXPECT_NEAR(static_cast<double>(prs) / issues, 0.15, 0.04);
  EXPECT_NEAR(static_cast<double>(corpus->CommentCount()) / issues, 3.0, 0.3);
  EXPECT_GT(cjk, issues / 30);
  EXPECT_GT(closed, issues / 3);
  EXPECT_GT(labelled, issues / 2);
  EXPECT_GT(ties, issues / 50) << "updated_at ties must be exercised";
  EXPECT_LT(ties, issues / 8);
  const double mean_body = static_cast<double>(body_bytes) / issues;
  EXPECT_GT(mean_body, 1500);
  EXPECT_LT(mean_body, 3000);
}

// WordsAdjacentOrInOrder reports whether `text` contains the words of the phrase next to each
// other or in phrase order.
bool WordsInPhraseOrder(const std::string& text, const std::vector<std::string>& words) {
  size_t at = 0;
  for (const std::string& w : words) {
    at = text.find(w, at);
    if (at == std::string::npos) return false;
    at += w.size();
  }
  return true;
}

TEST(GeneratorTest, PlantedPhraseIsInExactlyNIssuesAndItsWordsElsewhereApart) {
  SimulatorOptions o = Small(3, 300);
  o.plant_phrase = "quokka zephyr marmalade";
  o.plant_count = 7;
  auto corpus = GenerateCorpus(o);
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  EXPECT_EQ(CountIssuesContaining(*corpus, o.plant_phrase), 7);
  const std::vector<std::string> words = {"quokka", "zephyr", "marmalade"};
  int planted = 0, decoys = 0;
  for (const Repository& r : corpus->repos) {
    for (const Issue& i : r.issues) {
      std::string text = i.title + "\n" + i.body;
      for (uint32_t c : i.comments) text += "\n" + r.comments[c].body;
      const bool has_phrase = absl::StrContains(text, o.plant_phrase);
      EXPECT_EQ(has_phrase, i.planted) << r.FullName() << "#" << i.number;
      planted += i.planted;
      if (!has_phrase && absl::StrContains(text, "quokka")) {
        ++decoys;
        for (const std::string& w : words) EXPECT_TRUE(absl::StrContains(text, w));
        EXPECT_FALSE(WordsInPhraseOrder(text, words)) << text;
        EXPECT_FALSE(absl::StrContains(text, "zephyr quokka"));
        EXPECT_FALSE(absl::StrContains(text, "marmalade zephyr"));
      }
    }
  }
  EXPECT_EQ(planted, 7);
  EXPECT_GE(decoys, 3);
}

TEST(GeneratorTest, RejectsBadOptions) {
  struct Case {
    const char* name;
    void (*mutate)(SimulatorOptions&);
    const char* expect;
  };
  const Case cases[] = {
      {"vocabulary word", [](SimulatorOptions& o) { o.plant_phrase = "CUDA zorblax"; o.plant_count = 1; },
       "cuda"},
      {"too many plants", [](SimulatorOptions& o) { o.plant_phrase = "zorblax"; o.plant_count = 10000; },
       "plant_count"},
      {"missing phrase", [](SimulatorOptions& o) { o.plant_count = 2; }, "plant_phrase"},
      {"negative repos", [](SimulatorOptions& o) { o.repos = -1; }, "repos"},
      {"pr fraction", [](SimulatorOptions& o) { o.pr_fraction = 1.5; }, "pr_fraction"},
      {"rate limit", [](SimulatorOptions& o) { o.rate_limit = 0; }, "rate_limit"},
  };
  for (const Case& c : cases) {
    SimulatorOptions o = Small(1, 20);
    c.mutate(o);
    auto corpus = GenerateCorpus(o);
    ASSERT_FALSE(corpus.ok()) << c.name;
    EXPECT_EQ(corpus.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_TRUE(absl::StrContains(corpus.status().message(), c.expect))
        << c.name << ": " << corpus.status();
  }
}

}  // namespace
}  // namespace issuescope::sim
