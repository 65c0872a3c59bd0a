// Tests of the taxonomy loader (the shipped llm-dl/1 file and validation errors) and of the
// cue/label matcher.
#include "indexer/taxonomy.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "indexer/taxonomy_matcher.h"

namespace issuescope::taxonomy {
namespace {

using ::testing::HasSubstr;

Taxonomy LoadDefault() {
  auto tax = LoadTaxonomyFile(DefaultTaxonomyPath());
  EXPECT_TRUE(tax.ok()) << tax.status();
  return tax.ok() ? *tax : Taxonomy{};
}

TEST(DefaultTaxonomy, HasTheShapeOfIssueFive) {
  Taxonomy tax = LoadDefault();
  EXPECT_EQ(tax.Tag(), "llm-dl/1");
  struct Shape {
    const char* kind;
    size_t themes;
    size_t subthemes;
  };
  for (const Shape& s : std::vector<Shape>{{"bug", 10, 43}, {"requirement", 4, 15},
                                           {"question", 4, 9}}) {
    const Kind* kind = tax.FindKind(s.kind);
    ASSERT_NE(kind, nullptr) << s.kind;
    EXPECT_EQ(kind->themes.size(), s.themes) << s.kind;
    size_t subs = 0;
    for (const Theme& t : kind->themes) {
      subs += t.subthemes.size();
      EXPECT_FALSE(t.title.empty()) << t.id;
      EXPECT_FALSE(t.cues.empty()) << t.id;
      for (const SubTheme& st : t.subthemes) {
        EXPECT_FALSE(st.definition.empty()) << st.id;
        EXPECT_FALSE(st.cues.empty()) << st.id;
      }
    }
    EXPECT_EQ(subs, s.subthemes) << s.kind;
  }
  for (const char* id : {"bug.distributed.collective-comm", "bug.memory.oom",
                         "bug.environment.api-change", "requirement.ecosystem.testing",
                         "question.understanding.reproduce", "bug.inference.kv-cache-batching"}) {
    EXPECT_TRUE(tax.HasNode(id)) << id;
  }
  EXPECT_NE(tax.FindTheme("bug.memory"), nullptr);
  EXPECT_EQ(tax.FindTheme("bug.memory.oom"), nullptr);
  EXPECT_FALSE(tax.llm.terms.empty());
}

TEST(DefaultTaxonomy, MapsTheNativeLabelsOfTheIssue) {
  Taxonomy tax = LoadDefault();
  TaxonomyMatcher matcher(&tax);
  struct Case {
    const char* repo;
    const char* label;
    const char* target;
  };
  for (const Case& c : std::vector<Case>{
           {"pytorch/pytorch", "module: cuda", "bug.hardware.cuda-gpu"},
           {"tensorflow/tensorflow", "type:bug", "bug"},
           {"tensorflow/tensorflow", "type: bug", "bug"},
           {"tensorflow/tensorflow", "comp:dist-strat", "bug.distributed"},
           {"vllm-project/vllm", "bug", "bug"},
           {"vllm-project/vllm", "feature request", "requirement"},
           {"vllm-project/vllm", "usage", "question"},
       }) {
    auto matches = matcher.MapLabels({c.label}, c.repo);
    bool found = std::any_of(matches.begin(), matches.end(),
                             [&](const LabelMatch& m) { return m.target == c.target; });
    EXPECT_TRUE(found) << c.repo << " " << c.label;
  }
  // A repository-specific mapping does not apply elsewhere.
  EXPECT_TRUE(matcher.MapLabels({"module: cuda"}, "tensorflow/tensorflow").empty());
}

TEST(NormalizeLabel, FoldsCaseAndBlanksAroundColons) {
  EXPECT_EQ(NormalizeLabel("Type: Bug"), "type:bug");
  EXPECT_EQ(NormalizeLabel("  type : bug "), "type:bug");
  EXPECT_EQ(NormalizeLabel("feature   request"), "feature request");
  EXPECT_EQ(NormalizeLabel("module: cuda"), "module:cuda");
}

constexpr char kGood[] = R"(name = "t"
version = 2
[llm]
terms = ["llm", "大模型"]
case_terms = ["MoE"]
[[kind]]
id = "bug"
title = "Bug"
terms = ["crash"]
  [[kind.theme]]
  id = "memory"
  title = "Memory"
  priority = 3
    [[kind.theme.subtheme]]
    id = "oom"
    title = "OOM"
    terms = ["out of memory", "显存不足"]
    patterns = ['resource\s+exhausted']
[labels.global]
"type:bug" = "bug"
[labels."a/b"]
"mem" = ["bug.memory.oom", "llm"]
)";

TEST(ParseTaxonomy, ReadsAValidFile) {
  auto tax = ParseTaxonomy(kGood, "good.toml");
  ASSERT_TRUE(tax.ok()) << tax.status();
  EXPECT_EQ(tax->Tag(), "t/2");
  ASSERT_NE(tax->FindSubTheme("bug.memory.oom"), nullptr);
  EXPECT_EQ(tax->FindSubTheme("bug.memory.oom")->line, 14);
  EXPECT_EQ(tax->FindTheme("bug.memory")->priority, 3);
  ASSERT_EQ(tax->labels.size(), 2u);
  for (const LabelMapping& m : tax->labels) {
    if (m.repo == "a/b") {
      EXPECT_EQ(m.label, "mem");
      EXPECT_EQ(m.targets, (std::vector<std::string>{"bug.memory.oom", "llm"}));
      EXPECT_EQ(m.line, 22);
    } else {
      EXPECT_EQ(m.label, "type:bug");
      EXPECT_EQ(m.targets, (std::vector<std::string>{"bug"}));
    }
  }
}

TEST(ParseTaxonomy, ReportsFileLineAndProblem) {
  struct Case {
    const char* name;
    std::string text;
    const char* expected;  // substring of the error
  };
  const std::string head = "name = \"t\"\nversion = 1\n";
  const std::vector<Case> cases = {
      {"syntax", head + "[[kind]\n", "bad.toml:3: TOML syntax error"},
      {"no kinds", head, "defines no [[kind]]"},
      {"version", "name = \"t\"\nversion = \"x\"\n[[kind]]\nid=\"b\"\ntitle=\"B\"\n",
       "bad.toml:2: the taxonomy needs an integer 'version'"},
      {"duplicate kind",
       head + "[[kind]]\nid = \"bug\"\ntitle = \"B\"\n[[kind]]\nid = \"bug\"\ntitle = \"C\"\n",
       "bad.toml:6: duplicate id 'bug' (first defined on line 3)"},
      {"duplicate theme",
       head + "[[kind]]\nid = \"bug\"\ntitle = \"B\"\n[[kind.theme]]\nid = \"m\"\ntitle = "
              "\"M\"\n[[kind.theme]]\nid = \"m\"\ntitle = \"N\"\n",
       "duplicate id 'bug.m'"},
      {"bad id", head + "[[kind]]\nid = \"Bug X\"\ntitle = \"B\"\n",
       "bad.toml:4: id 'Bug X' of a [[kind]] must be non-empty"},
      {"missing title", head + "[[kind]]\nid = \"bug\"\n", "lacks the required string 'title'"},
      {"unknown key", head + "[[kind]]\nid = \"bug\"\ntitle = \"B\"\nterm = [\"x\"]\n",
       "bad.toml:6: unknown key 'term' in a [[kind]]"},
      {"bad pattern", head + "[[kind]]\nid = \"bug\"\ntitle = \"B\"\npatterns = ['(unclosed']\n",
       "bad.toml:6: invalid pattern '(unclosed' in a [[kind]]"},
      {"terms not strings", head + "[[kind]]\nid = \"bug\"\ntitle = \"B\"\nterms = [1]\n",
       "must hold only strings"},
      {"unknown label target",
       head + "[[kind]]\nid = \"bug\"\ntitle = \"B\"\n[labels.global]\n\"x\" = \"bug.nope\"\n",
       "bad.toml:7: the mapping of label 'x' names unknown node 'bug.nope'"},
      {"bad label scope",
       head + "[[kind]]\nid = \"bug\"\ntitle = \"B\"\n[labels.pytorch]\n\"x\" = \"bug\"\n",
       "must be 'global' or a repository OWNER/NAME"},
  };
  for (const Case& c : cases) {
    auto tax = ParseTaxonomy(c.text, "bad.toml");
    ASSERT_FALSE(tax.ok()) << c.name;
    EXPECT_EQ(tax.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(std::string(tax.status().message()), HasSubstr(c.expected)) << c.name;
  }
}

TEST(LoadTaxonomyFile, MissingFileIsNotFound) {
  auto tax = LoadTaxonomyFile("/nonexistent/tax.toml");
  EXPECT_EQ(tax.status().code(), absl::StatusCode::kNotFound);
}

TEST(TaxonomyMatcher, MatchesTermsAtWordBoundariesAndChinese) {
  auto tax = ParseTaxonomy(kGood, "good.toml");
  ASSERT_TRUE(tax.ok()) << tax.status();
  TaxonomyMatcher matcher(&*tax);
  struct Case {
    const char* text;
    std::vector<std::string> nodes;  // matched nodes, in order
  };
  const std::vector<Case> cases = {
      {"Crash when OUT OF MEMORY", {"bug", "bug.memory.oom"}},
      {"it crashes", {"bug"}},                     // plural
      {"crashing", {}},                            // not a word match
      {"训练时显存不足", {"bug.memory.oom"}},       // Chinese anywhere
      {"ResourceExhausted? resource   exhausted", {"bug.memory.oom"}},  // pattern
      {"an LLM with MoE", {"llm", "llm"}},
      {"moe is lower case", {}},                   // case_terms are case-sensitive
      {"大模型训练", {"llm"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> nodes;
    for (const CueMatch& m : matcher.Match(c.text)) nodes.push_back(m.node);
    EXPECT_EQ(nodes, c.nodes) << c.text;
  }
}

}  // namespace
}  // namespace issuescope::taxonomy
