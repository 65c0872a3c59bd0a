// Tests of the issue classifier: features, the linear model (training, file round trip),
// input readers, evaluation, the rule/label/model combination on the shipped llm-dl/1
// taxonomy, and (when ../shared/data is present) the NLBSE'24 figure of docs/TAXONOMY.md.
#include "indexer/classifier.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "indexer/classifier_data.h"
#include "indexer/classifier_eval.h"
#include "indexer/classifier_features.h"
#include "indexer/classifier_model.h"
#include "indexer/taxonomy.h"

namespace issuescope::classifier {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

TEST(Tokenize, SplitsEnglishAndChineseText) {
  EXPECT_EQ(Tokenize("CUDA out-of-memory at step 1200!"),
            (std::vector<std::string>{"cuda", "out", "of", "memory", "at", "step", "<num>"}));
  EXPECT_EQ(Tokenize("显存不足 with fp16"),
            (std::vector<std::string>{"显", "存", "不", "足", "with", "fp16"}));
  EXPECT_EQ(Tokenize("“quoted”，标点"), (std::vector<std::string>{"quoted", "标", "点"}));
  EXPECT_TRUE(Tokenize("").empty());
}

TEST(Featurize, IsNormalisedAndDeterministic) {
  IssueText issue{"Loss is NaN", "loss is nan after 10 steps with bf16", "", {}};
  FeatureOptions options;
  FeatureVector a = Featurize(issue, options);
  FeatureVector b = Featurize(issue, options);
  EXPECT_EQ(a, b);
  double norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    norm += a[i].second * a[i].second;
    if (i > 0) {
      EXPECT_LT(a[i - 1].first, a[i].first);
    }
    EXPECT_LT(a[i].first, 1u << options.hash_bits);
  }
  EXPECT_NEAR(norm, 1.0, 1e-5);
  EXPECT_EQ(HashFeature("nan", 20), HashFeature("nan", 20));
}

// Toy is a small separable data set: crashes are bugs, "please add" are requirements.
void Toy(std::vector<FeatureVector>* x, std::vector<std::string>* y, const FeatureOptions& f) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"segfault when calling conv2d", "bug"},       {"crash on backward with fp16", "bug"},
      {"error: illegal memory access", "bug"},       {"wrong output of matmul crash", "bug"},
      {"please add support for fp8", "requirement"}, {"please add a flag for logging", "requirement"},
      {"feature: add ring attention", "requirement"}, {"please add rocm wheels", "requirement"},
  };
  for (const auto& [text, kind] : rows) {
    x->push_back(Featurize(IssueText{text, "", "", {}}, f));
    y->push_back(kind);
  }
}

TEST(LinearModel, TrainsSavesAndLoadsTheSameModel) {
  FeatureOptions features;
  features.hash_bits = 16;
  std::vector<FeatureVector> x;
  std::vector<std::string> y;
  Toy(&x, &y, features);
  auto head = TrainHead("kind", x, y, features, TrainOptions{});
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->classes, (std::vector<std::string>{"bug", "requirement"}));
  LinearModel model(features);
  model.set_taxonomy_tag("llm-dl/1");
  model.AddHead(*head);
  auto p_bug = model.Predict(*model.FindHead("kind"),
                             Featurize(IssueText{"crash in conv2d", "", "", {}}, features));
  EXPECT_GT(p_bug[0], 0.5);
  auto p_req = model.Predict(*model.FindHead("kind"),
                             Featurize(IssueText{"please add fp8", "", "", {}}, features));
  EXPECT_GT(p_req[1], 0.5);

  const std::string path = ::testing::TempDir() + "/classifier_test_model.json";
  ASSERT_TRUE(model.Save(path).ok());
  auto loaded = LinearModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->taxonomy_tag(), "llm-dl/1");
  EXPECT_EQ(loaded->features().hash_bits, 16);
  auto again = loaded->Predict(*loaded->FindHead("kind"),
                               Featurize(IssueText{"crash in conv2d", "", "", {}}, features));
  EXPECT_NEAR(again[0], p_bug[0], 1e-4);
  // Training is deterministic.
  auto head2 = TrainHead("kind", x, y, features, TrainOptions{});
  EXPECT_EQ(head2->weights, head->weights);
  std::remove(path.c_str());
}

TEST(LinearModel, NaiveBayesHeadsJoinAnEnsemble) {
  FeatureOptions features;
  features.hash_bits = 16;
  std::vector<FeatureVector> x;
  std::vector<std::string> y;
  Toy(&x, &y, features);
  auto nb = TrainNaiveBayesHead("kind", x, y, features, 0.1);
  ASSERT_TRUE(nb.ok()) << nb.status();
  EXPECT_EQ(nb->type, "naive-bayes");
  EXPECT_EQ(nb->length_weight.size(), 2u);
  LinearModel model(features);
  model.AddHead(*nb);
  model.AddHead(*TrainHead("kind", x, y, features, TrainOptions{}));
  FeatureVector q = Featurize(IssueText{"segfault in conv2d", "", "", {}}, features);
  auto averaged = model.Probabilities("kind", q);
  ASSERT_EQ(averaged.size(), 2u);
  const double p_nb = model.Predict(model.heads()[0], q)[0];
  const double p_lr = model.Predict(model.heads()[1], q)[0];
  EXPECT_NEAR(averaged[0].second, (p_nb + p_lr) / 2, 1e-9);
  EXPECT_GT(p_nb, 0.5);
  // The naive Bayes head survives a file round trip.
  const std::string path = ::testing::TempDir() + "/classifier_test_nb.json";
  ASSERT_TRUE(model.Save(path).ok());
  auto loaded = LinearModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_NEAR(loaded->Probabilities("kind", q)[0].second, averaged[0].second, 1e-4);
  std::remove(path.c_str());
}

TEST(LinearModel, RejectsBadInputs) {
  FeatureOptions features;
  EXPECT_FALSE(TrainHead("kind", {FeatureVector{}}, {"bug"}, features, {}).ok());
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : std::vector<Case>{
           {"{", "model file m.json:"},
           {R"({"format":"other"})", "not an issuescope classifier model"},
           {R"({"format":"issuescope-classifier","format_version":9})", "format_version"},
           {R"({"format":"issuescope-classifier","format_version":1,"features":{"hash_bits":30,
               "bigrams":true,"max_body_tokens":5},"heads":[]})", "hash_bits"},
           {R"({"format":"issuescope-classifier","format_version":1,"features":{"hash_bits":8,
               "bigrams":true,"max_body_tokens":5},"heads":[{"name":"kind","classes":["a","b"],
               "bias":[0,0],"weights":[[999,1,2]]}]})", "bucket out of range"},
           // Numbers out of their type's range (found by the model_file fuzzer: 2e100 as an int
           // is undefined behaviour) are refused, naming the field.
           {R"({"format":"issuescope-classifier","format_version":1,"features":{"hash_bits":2e100,
               "bigrams":true,"max_body_tokens":5},"heads":[]})", "features.hash_bits"},
           {R"({"format":"issuescope-classifier","format_version":1.5e300})", "format_version"},
           {R"({"format":"issuescope-classifier","format_version":1,"features":{"hash_bits":8,
               "bigrams":true,"max_body_tokens":5},"heads":[{"name":"kind","classes":["a","b"],
               "bias":[0,1e300],"weights":[]}]})", "bias"},
           {R"({"format":"issuescope-classifier","format_version":1,"features":{"hash_bits":8,
               "bigrams":true,"max_body_tokens":5},"heads":[{"name":"kind","classes":["a","b"],
               "bias":[0,0],"weights":[[-1,1,2]]}]})", "bucket out of range"},
           {R"({"format":"issuescope-classifier","format_version":1,"features":{"hash_bits":8,
               "bigrams":true,"max_body_tokens":5},"heads":[{"name":"kind","classes":["a","b"],
               "bias":[0,0],"weights":[[3,1,-4e40]]}]})", "a weight"},
       }) {
    auto model = LinearModel::Parse(c.text, "m.json");
    ASSERT_FALSE(model.ok()) << c.text;
    EXPECT_THAT(std::string(model.status().message()), HasSubstr(c.expected)) << c.text;
  }
}

TEST(LinearModel, CompactFileKeepsPredictionsAndNameAndRefusesDamage) {
  FeatureOptions features;
  features.hash_bits = 16;
  std::vector<FeatureVector> x;
  std::vector<std::string> y;
  Toy(&x, &y, features);
  LinearModel model(features);
  model.set_taxonomy_tag("llm-dl/1");
  model.set_name("toy-1");
  model.AddHead(*TrainHead("kind", x, y, features, TrainOptions{}));
  const std::string json_path = ::testing::TempDir() + "/classifier_test_compact.json";
  const std::string path = ::testing::TempDir() + "/classifier_test_compact.iscm";
  ASSERT_TRUE(model.Save(json_path).ok());
  ASSERT_TRUE(model.SaveCompact(path).ok());
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ifstream json_in(json_path, std::ios::binary);
  const std::string json_bytes((std::istreambuf_iterator<char>(json_in)),
                               std::istreambuf_iterator<char>());
  EXPECT_LT(bytes.size() * 3, json_bytes.size());  // int8 rows against JSON numbers
  auto loaded = LinearModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->name(), "toy-1");
  EXPECT_EQ(loaded->taxonomy_tag(), "llm-dl/1");
  for (const char* text : {"crash in conv2d", "please add fp8", "segfault when loading"}) {
    const FeatureVector q = Featurize(IssueText{text, "", "", {}}, features);
    const auto want = model.Predict(*model.FindHead("kind"), q);
    const auto got = loaded->Predict(*loaded->FindHead("kind"), q);
    ASSERT_EQ(got.size(), want.size());
    // Quantisation error only: int8 steps of 1/127 of the largest weight.
    for (size_t c = 0; c < got.size(); ++c) EXPECT_NEAR(got[c], want[c], 0.02) << text;
    EXPECT_EQ(got[0] > got[1], want[0] > want[1]) << text;
  }
  // A cut anywhere in the weights, a bucket out of range, trailing bytes: named errors.
  struct Damage {
    std::string bytes;
    const char* expected;
  };
  std::string bad_bucket = bytes;
  const uint32_t header = static_cast<unsigned char>(bytes[6]) |
                          static_cast<unsigned char>(bytes[7]) << 8 |
                          static_cast<unsigned char>(bytes[8]) << 16 |
                          static_cast<unsigned char>(bytes[9]) << 24;
  bad_bucket[10 + header + 3] = '\x7f';  // the first row's bucket becomes >= 2^16
  for (const Damage& d : std::vector<Damage>{
           {bytes.substr(0, bytes.size() - 1), "truncated weights"},
           {bytes.substr(0, 12), "truncated header"},
           {bytes + "x", "bytes after the last head"},
           {bad_bucket, "bucket out of range"},
       }) {
    auto parsed = LinearModel::Parse(d.bytes, "m.iscm");
    ASSERT_FALSE(parsed.ok()) << d.expected;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("m.iscm")) << d.expected;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(d.expected));
  }
  std::remove(path.c_str());
  std::remove(json_path.c_str());
}

TEST(ReadIssues, ParsesCsvWithQuotesAndAliases) {
  const std::string csv =
      "repo,label,title,body,labels\n"
      "a/b,feature,\"Add \"\"x\"\"\",\"line1\nline2\",enhancement; help wanted\n"
      "a/b,bug,Crash,boom,\n";
  auto rows = ParseCsv(csv, "t.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].kind, "requirement");
  EXPECT_EQ((*rows)[0].issue.title, "Add \"x\"");
  EXPECT_EQ((*rows)[0].issue.body, "line1\nline2");
  EXPECT_EQ((*rows)[0].issue.labels, (std::vector<std::string>{"enhancement", "help wanted"}));
  EXPECT_EQ((*rows)[1].line, 4);
  EXPECT_EQ((*rows)[1].kind, "bug");

  auto gt = ParseCsv("Issue Title,Issue Body,Is Bug\nT,B,True\nU,C,False\n", "gt.csv");
  ASSERT_TRUE(gt.ok());
  EXPECT_EQ((*gt)[0].kind, "bug");
  EXPECT_EQ((*gt)[1].kind, "non-bug");

  EXPECT_THAT(std::string(ParseCsv("title,body\n\"open,x\n", "q.csv").status().message()),
              HasSubstr("q.csv:2: unterminated quoted field"));
  EXPECT_THAT(std::string(ParseCsv("title,body\na,b,c\n", "w.csv").status().message()),
              HasSubstr("w.csv:2: row has 3 fields"));
  EXPECT_THAT(std::string(ParseCsv("x,y\n1,2\n", "h.csv").status().message()),
              HasSubstr("no 'title' or 'body' column"));
}

TEST(ReadIssues, ParsesJsonLinesAndGitHubIssues) {
  const std::string jsonl =
      R"({"title":"OOM","body":"x","labels":["bug"],"kind":"Bug","theme":"bug.memory","llm":true})"
      "\n\n"
      R"({"number":7,"title":"Q","body":null,"labels":[{"name":"question"}],)"
      R"("repository_url":"https://api.github.com/repos/vllm-project/vllm"})"
      "\n";
  auto rows = ParseJsonLines(jsonl, "t.jsonl");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].kind, "bug");
  EXPECT_EQ((*rows)[0].theme, "bug.memory");
  EXPECT_EQ((*rows)[0].llm, true);
  EXPECT_EQ((*rows)[1].id, "7");
  EXPECT_EQ((*rows)[1].line, 3);
  EXPECT_EQ((*rows)[1].issue.repo, "vllm-project/vllm");
  EXPECT_EQ((*rows)[1].issue.labels, (std::vector<std::string>{"question"}));
  EXPECT_THAT(std::string(ParseJsonLines("{\"title\":1}\n[1]\n", "b.jsonl").status().message()),
              HasSubstr("b.jsonl:2: a record must be a JSON object"));
  EXPECT_THAT(std::string(ParseJsonLines("{oops\n", "c.jsonl").status().message()),
              HasSubstr("c.jsonl:1: not valid JSON"));
}

TEST(Evaluate, ComputesPerClassScoresAndConfusion) {
  EvalReport r = Evaluate("kind", {"bug", "bug", "question", "requirement"},
                          {"bug", "question", "question", "bug"});
  ASSERT_EQ(r.classes.size(), 3u);
  EXPECT_EQ(r.classes[0].name, "bug");
  EXPECT_DOUBLE_EQ(r.classes[0].precision, 0.5);
  EXPECT_DOUBLE_EQ(r.classes[0].recall, 0.5);
  EXPECT_DOUBLE_EQ(r.classes[1].precision, 0.5);  // question
  EXPECT_DOUBLE_EQ(r.classes[1].recall, 1.0);
  EXPECT_DOUBLE_EQ(r.classes[2].f1, 0.0);  // requirement
  EXPECT_NEAR(r.macro_f1, (0.5 + 2.0 / 3.0 + 0.0) / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.accuracy, 0.5);
  EXPECT_EQ(r.confusion[0], (std::vector<int>{1, 1, 0}));
  EXPECT_THAT(FormatReport(r), HasSubstr("macro-F1 0.3889"));
  EXPECT_THAT(ReportJson(r), HasSubstr("\"matrix\":[[1,1,0],[0,1,0],[1,0,0]]"));
}

TEST(Evaluate, BootstrapIntervalsAreSeededAndCoverTheEstimate) {
  // 200 examples, 150 right: accuracy 0.75, whose binomial standard error is ~0.031, so the
  // 95% interval is about 0.75 ± 0.06.
  std::vector<std::string> gold, predicted;
  for (int i = 0; i < 200; ++i) {
    gold.push_back(i % 2 ? "bug" : "question");
    predicted.push_back(i % 4 == 0 ? (i % 2 ? "question" : "bug") : gold.back());
  }
  EvalReport report = Evaluate("kind", gold, predicted);
  EXPECT_DOUBLE_EQ(report.accuracy, 0.75);
  EXPECT_EQ(report.resamples, 0);
  AddBootstrap(gold, predicted, 2000, 7, &report);
  EXPECT_EQ(report.resamples, 2000);
  EXPECT_LT(report.accuracy_ci.low, 0.75);
  EXPECT_GT(report.accuracy_ci.high, 0.75);
  EXPECT_NEAR(report.accuracy_ci.low, 0.69, 0.02);
  EXPECT_NEAR(report.accuracy_ci.high, 0.81, 0.02);
  EXPECT_LT(report.macro_f1_ci.low, report.macro_f1);
  EXPECT_GT(report.macro_f1_ci.high, report.macro_f1);
  // Seeded: the same inputs give the same interval; another seed a slightly different one.
  EvalReport again = Evaluate("kind", gold, predicted);
  AddBootstrap(gold, predicted, 2000, 7, &again);
  EXPECT_EQ(again.accuracy_ci.low, report.accuracy_ci.low);
  EXPECT_EQ(again.accuracy_ci.high, report.accuracy_ci.high);
  EXPECT_THAT(FormatReport(report), HasSubstr("95% bootstrap intervals, 2000 resamples"));
  EXPECT_THAT(ReportJson(report), HasSubstr("\"bootstrap\""));
  // All right: a degenerate interval at 1.
  EvalReport perfect = Evaluate("kind", gold, gold);
  AddBootstrap(gold, gold, 100, 1, &perfect);
  EXPECT_EQ(perfect.accuracy_ci.low, 1.0);
  EXPECT_EQ(perfect.accuracy_ci.high, 1.0);
}

TEST(HoldOut, IsDeterministicStratifiedAndSeeded) {
  std::vector<std::string> strata;
  for (int i = 0; i < 100; ++i) strata.push_back(i < 80 ? "bug" : "question");
  std::vector<bool> a = HoldOut(strata, 0.25, 1);
  EXPECT_EQ(a, HoldOut(strata, 0.25, 1));
  EXPECT_NE(a, HoldOut(strata, 0.25, 2));
  int bug = 0, question = 0;
  for (int i = 0; i < 100; ++i) (i < 80 ? bug : question) += a[i];
  EXPECT_EQ(bug, 20);
  EXPECT_EQ(question, 5);
  // A tiny stratum still gives one record; a single record is never held out.
  std::vector<bool> tiny = HoldOut({"a", "a", "b"}, 0.1, 1);
  EXPECT_EQ(tiny[0] + tiny[1], 1);
  EXPECT_FALSE(tiny[2]);
}

TEST(AssignFolds, StratifiesRecordsWithoutGroups) {
  std::vector<std::string> strata;
  for (int i = 0; i < 50; ++i) strata.push_back(i % 5 == 0 ? "rare" : "common");
  FoldAssignment f = AssignFolds(strata, {}, 5, 7);
  EXPECT_EQ(f.folds, 5);
  EXPECT_FALSE(f.by_group);
  std::vector<int> size(5, 0), rare(5, 0);
  for (size_t i = 0; i < strata.size(); ++i) {
    ++size[f.fold[i]];
    rare[f.fold[i]] += strata[i] == "rare";
  }
  EXPECT_EQ(size, (std::vector<int>{10, 10, 10, 10, 10}));
  EXPECT_EQ(rare, (std::vector<int>{2, 2, 2, 2, 2}));
  EXPECT_EQ(f.fold, AssignFolds(strata, {}, 5, 7).fold);
}

TEST(AssignFolds, KeepsRepositoriesTogether) {
  // Three repositories, five folds asked: leave-one-repository-out.
  std::vector<std::string> strata(6, "x");
  std::vector<std::string> repos = {"a/a", "b/b", "a/a", "c/c", "b/b", "a/a"};
  FoldAssignment f = AssignFolds(strata, repos, 5, 1);
  EXPECT_TRUE(f.by_group);
  EXPECT_EQ(f.folds, 3);
  EXPECT_EQ(f.fold[0], f.fold[2]);
  EXPECT_EQ(f.fold[0], f.fold[5]);
  EXPECT_EQ(f.fold[1], f.fold[4]);
  EXPECT_NE(f.fold[0], f.fold[1]);
  EXPECT_NE(f.fold[0], f.fold[3]);
  EXPECT_NE(f.fold[1], f.fold[3]);
  // More repositories than folds: whole repositories, balanced by size.
  std::vector<std::string> many;
  for (int r = 0; r < 6; ++r) {
    for (int i = 0; i < 10; ++i) many.push_back("r/" + std::to_string(r));
  }
  FoldAssignment g = AssignFolds(std::vector<std::string>(many.size(), "x"), many, 3, 1);
  EXPECT_EQ(g.folds, 3);
  std::vector<int> size(3, 0);
  for (size_t i = 0; i < many.size(); ++i) {
    ++size[g.fold[i]];
    EXPECT_EQ(g.fold[i], g.fold[i - i % 10]);
  }
  EXPECT_EQ(size, (std::vector<int>{20, 20, 20}));
}

class DefaultTaxonomyClassifier : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tax = taxonomy::LoadTaxonomyFile(taxonomy::DefaultTaxonomyPath());
    ASSERT_TRUE(tax.ok()) << tax.status();
    tax_ = *tax;
  }
  taxonomy::Taxonomy tax_;
};

TEST_F(DefaultTaxonomyClassifier, RootSymptomIsPrimaryContextIsSecondary) {
  Classifier clf(&tax_, nullptr);
  Classification c = clf.Classify(
      {"CUDA out of memory with ZeRO-3 on Llama 70B",
       "Training with DeepSpeed ZeRO stage 3 fails with torch.cuda.OutOfMemoryError.", "", {"bug"}});
  EXPECT_EQ(c.taxonomy, "llm-dl/1");
  EXPECT_EQ(c.kind, "bug");
  EXPECT_EQ(c.theme, "bug.memory");
  EXPECT_EQ(c.subtheme, "bug.memory.oom");
  EXPECT_THAT(c.secondary_themes, Contains("bug.distributed"));
  EXPECT_THAT(c.subthemes, Contains("bug.distributed.sharded-dp"));
  EXPECT_TRUE(c.llm);
  bool label_evidence = false;
  for (const Evidence& e : c.evidence) label_evidence |= e.source == "label" && e.target == "bug";
  EXPECT_TRUE(label_evidence);
}

TEST_F(DefaultTaxonomyClassifier, TableOfRuleAndLabelDecisions) {
  Classifier clf(&tax_, nullptr);
  struct Case {
    IssueText issue;
    const char* kind;
    const char* theme;
    bool llm;
  };
  const std::vector<Case> cases = {
      {{"NCCL timeout in all_reduce", "watchdog caught collective operation timeout", "", {}},
       "bug", "bug.distributed", false},
      {{"Support Qwen2 MoE", "Please add support for the new model", "vllm-project/vllm",
        {"feature request"}},
       "requirement", "requirement.capability", true},
      {{"请问如何配置多卡训练?", "想知道怎么设置参数", "", {}}, "question", "question.usage", false},
      {{"ResNet50 slower on 2.1", "Training is 2x slower than before.", "pytorch/pytorch",
        {"module: performance"}},
       "bug", "bug.performance", false},
      {{"Loss becomes NaN with bf16", "loss = nan after 100 steps", "", {"type:bug"}}, "bug",
       "bug.numerics", false},
  };
  for (const Case& c : cases) {
    Classification r = clf.Classify(c.issue);
    EXPECT_EQ(r.kind, c.kind) << c.issue.title;
    EXPECT_EQ(r.theme, c.theme) << c.issue.title;
    EXPECT_EQ(r.llm, c.llm) << c.issue.title;
  }
}

TEST_F(DefaultTaxonomyClassifier, ModelDecidesKindWithoutLabels) {
  FeatureOptions features;
  features.hash_bits = 16;
  std::vector<FeatureVector> x;
  std::vector<std::string> y;
  Toy(&x, &y, features);
  LinearModel model(features);
  model.AddHead(*TrainHead("kind", x, y, features, TrainOptions{}));
  Classifier clf(&tax_, &model);
  Classification c = clf.Classify({"please add ring attention", "", "", {}});
  EXPECT_EQ(c.kind, "requirement");
  EXPECT_GT(c.kind_scores["requirement"], c.kind_scores["bug"]);
  // A native kind label outweighs the model.
  EXPECT_EQ(clf.Classify({"please add ring attention", "", "", {"bug"}}).kind, "bug");
}

TEST_F(DefaultTaxonomyClassifier, StrongSlownessSymptomMakesABugWithoutAKindModel) {
  Classifier clf(&tax_, nullptr);
  // Phrased as a question, but it reports that existing code became slower.
  Classification c = clf.Classify(
      {"Why is training much slower on 2.1?",
       "Training is 3x slower than on 2.0: 40 samples/sec instead of 120.", "", {}});
  EXPECT_EQ(c.kind, "bug");
  EXPECT_EQ(c.theme, "bug.performance");
  bool strong = false;
  for (const Evidence& e : c.evidence) {
    strong |= e.target == "bug" && e.detail.find("strong symptom") != std::string::npos;
  }
  EXPECT_TRUE(strong);
  // A plain how-to question stays a question.
  EXPECT_EQ(clf.Classify({"How can I make inference faster?", "Any suggestion?", "", {}}).kind,
            "question");
}

TEST_F(DefaultTaxonomyClassifier, NonBugClassCollectsTheOtherKindsVotes) {
  // An is-bug model (classes bug / non-bug) that cannot tell these apart.
  FeatureOptions features;
  features.hash_bits = 12;
  LinearModel model(features);
  Head head;
  head.name = "kind";
  head.classes = {"bug", "non-bug"};
  head.bias = {0.0f, 0.0f};
  head.weights.assign((size_t{1} << features.hash_bits) * 2, 0.0f);
  model.AddHead(head);
  Classifier clf(&tax_, &model);
  // Question cues now count for non-bug instead of a kind the model does not know.
  Classification c = clf.Classify({"How to set the learning rate?", "Is there a way?", "", {}});
  EXPECT_EQ(c.kind, "non-bug");
  EXPECT_GT(c.kind_scores["non-bug"], c.kind_scores["bug"]);
  EXPECT_EQ(clf.Classify({"Segfault in conv2d", "crash with a traceback", "", {}}).kind, "bug");
}

TEST_F(DefaultTaxonomyClassifier, SecondaryThemesNeedAMarginAndAnIndependentCue) {
  Classifier clf(&tax_, nullptr);
  // One distributed cue next to three memory cues: no secondary.
  Classification one = clf.Classify(
      {"CUDA out of memory", "OOM: the allocator runs out of memory in a distributed job", "", {}});
  EXPECT_EQ(one.theme, "bug.memory");
  EXPECT_THAT(one.secondary_themes, ::testing::Not(Contains("bug.distributed")));
  // Never more than two secondaries, however many themes a long log mentions.
  Classification many = clf.Classify(
      {"NaN loss",
       "nan loss with bf16 and fp16 after OOM out of memory; NCCL timeout in all_reduce with "
       "FSDP and ZeRO-3; checkpoint state_dict load fails; torch.compile graph break; slow "
       "throughput 3x slower; flash attention kernel; install pip wheel fails",
       "", {"bug"}});
  EXPECT_LE(many.secondary_themes.size(), 2u);
}

#ifdef ISSUESCOPE_SHARED_DATA_DIR
TEST(Nlbse24, MacroF1OnTheTestSplit) {
  const std::string dir =
      std::string(ISSUESCOPE_SHARED_DATA_DIR) + "/labeled/nlbse24-issue-classification/data/";
  if (!std::ifstream(dir + "issues_train.csv") || !std::ifstream(dir + "issues_test.csv")) {
    GTEST_SKIP() << "NLBSE'24 data not found under " << dir;
  }
  auto train = ReadIssuesFile(dir + "issues_train.csv");
  auto test = ReadIssuesFile(dir + "issues_test.csv");
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(test.ok()) << test.status();
  FeatureOptions features;
  std::vector<FeatureVector> x;
  std::vector<std::string> y;
  for (const LabeledIssue& r : *train) {
    x.push_back(Featurize(r.issue, features));
    y.push_back(r.kind);
  }
  LinearModel model(features);
  model.AddHead(*TrainHead("kind", x, y, features, TrainOptions{}));
  auto tax = taxonomy::LoadTaxonomyFile(taxonomy::DefaultTaxonomyPath());
  ASSERT_TRUE(tax.ok());
  Classifier clf(&*tax, &model);
  std::vector<std::string> gold, predicted;
  for (const LabeledIssue& r : *test) {
    gold.push_back(r.kind);
    predicted.push_back(clf.Classify(r.issue).kind);
  }
  EvalReport report = Evaluate("kind", gold, predicted);
  std::printf("%s", FormatReport(report).c_str());
  EXPECT_GE(report.macro_f1, ISSUESCOPE_NLBSE_MIN_MACRO_F1);
}
#endif

}  // namespace
}  // namespace issuescope::classifier
