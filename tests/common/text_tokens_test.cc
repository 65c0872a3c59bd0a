// The tokeniser shared by the index, queries and snippets (common/text_tokens.h): identifiers
// whole and as parts, camel case, versions, CJK runs, and what is not a token.
#include "common/text_tokens.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace issuescope {
namespace {

using ::testing::ElementsAre;
using Kind = TextToken::Kind;

struct Expected {
  Kind kind;
  std::string text;
  std::vector<std::string> parts;
};

TEST(TextTokensTest, Table) {
  struct Case {
    std::string text;
    std::vector<Expected> tokens;
  };
  const std::vector<Case> cases = {
      {"Out of memory", {{Kind::kWord, "out", {"out"}}, {Kind::kWord, "of", {"of"}},
                         {Kind::kWord, "memory", {"memory"}}}},
      {"pin_memory()", {{Kind::kCompound, "pin_memory", {"pin", "memory"}}}},
      {"extra_body", {{Kind::kCompound, "extra_body", {"extra", "body"}}}},
      {"torch.nn.functional.",
       {{Kind::kCompound, "torch.nn.functional", {"torch", "nn", "functional"}}}},
      {"neuron_model_runner.py",
       {{Kind::kCompound, "neuron_model_runner.py", {"neuron", "model", "runner", "py"}}}},
      {"RuntimeError:", {{Kind::kCompound, "runtimeerror", {"runtime", "error"}}}},
      {"CUDAGraph", {{Kind::kCompound, "cudagraph", {"cuda", "graph"}}}},
      {"CUDA_LAUNCH_BLOCKING=1",
       {{Kind::kCompound, "cuda_launch_blocking", {"cuda", "launch", "blocking"}},
        {Kind::kWord, "1", {"1"}}}},
      {"NCCL_CUMEM_ENABLE", {{Kind::kCompound, "nccl_cumem_enable", {"nccl", "cumem", "enable"}}}},
      {"torch==2.1.0", {{Kind::kWord, "torch", {"torch"}},
                        {Kind::kCompound, "2.1.0", {"2", "1", "0"}}}},
      {"v0.8.4", {{Kind::kCompound, "v0.8.4", {"v0", "8", "4"}}}},
      // Humps of digits and acronyms stay whole.
      {"fp16 H100 llama3 GPUs LLMs",
       {{Kind::kWord, "fp16", {"fp16"}}, {Kind::kWord, "h100", {"h100"}},
        {Kind::kWord, "llama3", {"llama3"}}, {Kind::kWord, "gpus", {"gpus"}},
        {Kind::kWord, "llms", {"llms"}}}},
      {"at::Tensor", {{Kind::kCompound, "at::tensor", {"at", "tensor"}}}},
      {"__init__", {{Kind::kWord, "init", {"init"}}}},
      // A sentence's full stop, a dash between spaces and a path.
      {"It fails. Again - now", {{Kind::kWord, "it", {"it"}}, {Kind::kWord, "fails", {"fails"}},
                                 {Kind::kWord, "again", {"again"}}, {Kind::kWord, "now", {"now"}}}},
      {"flash-attn", {{Kind::kCompound, "flash-attn", {"flash", "attn"}}}},
      {"显存不足 OOM", {{Kind::kCjk, "显存不足", {"显", "存", "不", "足"}},
                        {Kind::kWord, "oom", {"oom"}}}},
      // Latin diacritics are folded, as FTS5's unicode61 does.
      {"Ünïcode café naïve Straße", {{Kind::kWord, "unicode", {"unicode"}},
                                     {Kind::kWord, "cafe", {"cafe"}},
                                     {Kind::kWord, "naive", {"naive"}},
                                     {Kind::kWord, "strasse", {"strasse"}}}},
      {"🐛 ### ---  \xff\xfe", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::vector<TextToken> got = Tokens(c.text);
    ASSERT_EQ(got.size(), c.tokens.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].kind, c.tokens[i].kind) << i;
      EXPECT_EQ(got[i].text, c.tokens[i].text) << i;
      EXPECT_EQ(got[i].parts, c.tokens[i].parts) << i;
    }
  }
}

// A segment split by camel case inside a compound is also kept whole (`cudnn` finds
// `CUDA/cuDNN`), with the index of its first part.
TEST(TextTokensTest, CamelSegmentsOfCompoundsAreJoined) {
  std::vector<TextToken> got = Tokens("CUDA/cuDNN pd.DataFrame RuntimeError");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_THAT(got[0].parts, ElementsAre("cuda", "cu", "dnn"));
  ASSERT_EQ(got[0].joined.size(), 1u);
  EXPECT_EQ(got[0].joined[0], (std::pair<size_t, std::string>{1, "cudnn"}));
  ASSERT_EQ(got[1].joined.size(), 1u);
  EXPECT_EQ(got[1].joined[0], (std::pair<size_t, std::string>{1, "dataframe"}));
  EXPECT_TRUE(got[2].joined.empty());  // no connector: the token's text is the whole already
}

TEST(TextTokensTest, OffsetsPointAtTheToken) {
  const std::string text = "see pin_memory() and 内存";
  const std::vector<TextToken> got = Tokens(text);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(text.substr(got[1].begin, got[1].end - got[1].begin), "pin_memory");
  EXPECT_EQ(text.substr(got[3].begin, got[3].end - got[3].begin), "内存");
}

TEST(TextTokensTest, LongTokensKeepOnlyTheirParts) {
  const std::string hash(100, 'a');
  std::vector<TextToken> got = Tokens(hash);
  EXPECT_TRUE(got.empty());  // one part, longer than a term may be
  got = Tokens("https://example.org/" + std::string(60, 'b') + "/x");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].text, "https");
  EXPECT_EQ(got[1].text, "");  // too long as a whole
  EXPECT_THAT(got[1].parts, ElementsAre("example", "org", std::string(60, 'b'), "x"));
}

TEST(TextTokensTest, Stemmable) {
  EXPECT_TRUE(IsStemmable("crashes"));
  EXPECT_FALSE(IsStemmable("fp16"));
  EXPECT_FALSE(IsStemmable("a"));
  EXPECT_FALSE(IsStemmable("café"));
}

}  // namespace
}  // namespace issuescope

namespace issuescope {
namespace {

TEST(EnglishStemTest, BritishAndAmericanSpellingsMeet) {
  const std::vector<std::pair<std::string, std::string>> same = {
      {"optimise", "optimize"},          {"optimiser", "optimizer"},
      {"optimisation", "optimization"},  {"quantisation", "quantization"},
      {"normalised", "normalized"},      {"initialising", "initializing"},
      {"behaviour", "behavior"},         {"behaviours", "behaviors"},
      {"crashes", "crashed"},
  };
  for (const auto& [a, b] : same) EXPECT_EQ(EnglishStem(a), EnglishStem(b)) << a << " " << b;
  // Words spelt -ise in American English too keep their own stems.
  EXPECT_NE(EnglishStem("promise"), EnglishStem("promize"));
  EXPECT_EQ(EnglishStem("exercise"), EnglishStem("exercises"));
  // Plurals Porter2 keeps apart: after -u, and words without another vowel.
  EXPECT_EQ(EnglishStem("gpus"), EnglishStem("gpu"));
  EXPECT_EQ(EnglishStem("cpus"), EnglishStem("cpu"));
  EXPECT_EQ(EnglishStem("llms"), EnglishStem("llm"));
  EXPECT_EQ(EnglishStem("cnns"), EnglishStem("cnn"));
  EXPECT_NE(EnglishStem("bus"), EnglishStem("bu"));      // too short
  EXPECT_NE(EnglishStem("class"), EnglishStem("clas"));  // -ss
  EXPECT_NE(EnglishStem("raise"), EnglishStem("raize"));
  EXPECT_NE(EnglishStem("four"), EnglishStem("for"));
}

}  // namespace
}  // namespace issuescope
