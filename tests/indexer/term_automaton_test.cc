// TermAutomaton must find exactly what one substring search per term finds, with the taxonomy's
// word-boundary and plural rules.
#include "indexer/term_automaton.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace issuescope::taxonomy {
namespace {

std::vector<char> Naive(const std::vector<std::string>& terms, const std::string& text) {
  std::vector<char> out;
  for (const std::string& t : terms) out.push_back(TermAutomaton::FindTermNaive(text, t) ? 1 : 0);
  return out;
}

TEST(TermAutomaton, WordBoundariesAndPlurals) {
  const std::vector<std::string> terms = {"hang", "oom", "nccl", "out of memory", "c++",
                                          "-fsdp", "大模型", "gpu"};
  TermAutomaton a(terms);
  auto found = [&](const std::string& text) {
    std::vector<char> f = a.Find(text);
    std::string names;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (f[i]) names += (names.empty() ? "" : ",") + terms[i];
    }
    return names;
  };
  EXPECT_EQ(found("training hangs at step 3"), "hang");
  EXPECT_EQ(found("a hangar"), "");
  EXPECT_EQ(found("zoom in"), "");
  EXPECT_EQ(found("oom: cuda out of memory!"), "oom,out of memory");
  EXPECT_EQ(found("nccles"), "nccl");  // "es" plural
  EXPECT_EQ(found("ncclx"), "");
  EXPECT_EQ(found("built with c++17"), "c++");  // non-word end: anything may follow
  EXPECT_EQ(found("run-fsdp"), "-fsdp");        // non-word start: anything may precede
  EXPECT_EQ(found("关于大模型训练"), "大模型");  // CJK: no boundaries
  EXPECT_EQ(found("gpus and gpu's"), "gpu");
  EXPECT_EQ(found(""), "");
}

TEST(TermAutomaton, OverlappingDuplicateAndEmptyTerms) {
  const std::vector<std::string> terms = {"he", "she", "his", "hers", "", "she", "e"};
  TermAutomaton a(terms);
  for (const std::string text : {"ushers", "she he", "this", "his hers", "e", "h e r s"}) {
    EXPECT_EQ(a.Find(text), Naive(terms, text)) << text;
  }
}

// Random terms and texts over a small alphabet (so that terms overlap and recur), compared with
// the naive search.
TEST(TermAutomaton, AgreesWithOneSearchPerTermOnRandomTexts) {
  std::mt19937 rng(20261202);
  const std::string alphabet = "abs e_-.";
  auto random_string = [&](int min_len, int max_len) {
    std::string s;
    const int n = std::uniform_int_distribution<int>(min_len, max_len)(rng);
    for (int i = 0; i < n; ++i) {
      s += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    }
    return s;
  };
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> terms;
    const int n = std::uniform_int_distribution<int>(1, 30)(rng);
    for (int i = 0; i < n; ++i) terms.push_back(random_string(1, 5));
    TermAutomaton a(terms);
    for (int k = 0; k < 20; ++k) {
      const std::string text = random_string(0, 60);
      ASSERT_EQ(a.Find(text), Naive(terms, text)) << "round " << round << " text '" << text << "'";
    }
  }
}

TEST(TermAutomaton, NonAsciiBytesAndAllByteValues) {
  std::vector<std::string> terms = {"\xe5\xa4\xa7", "\xff\x00x", std::string("\0a", 2), "a"};
  TermAutomaton a(terms);
  std::string text;
  for (int c = 0; c < 256; ++c) text += static_cast<char>(c);
  text += std::string("\0a \xe5\xa4\xa7", 6);
  EXPECT_EQ(a.Find(text), Naive(terms, text));
}

}  // namespace
}  // namespace issuescope::taxonomy
