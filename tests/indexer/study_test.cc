// The study's files and workflow pieces: the seeded stratified sample (reproducible whatever
// the order of the hits), label files checked against the taxonomy with errors naming file,
// line, field and value, agreement over the development set's two passes (the κ reported in
// docs/LABELLING.md), the adjudication sheet and the population report.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "indexer/embedded_taxonomy.h"
#include "indexer/study.h"
#include "indexer/study_labels.h"
#include "indexer/taxonomy.h"

namespace issuescope::study {
namespace {

taxonomy::Taxonomy DefaultTaxonomy() {
  auto tax = taxonomy::ParseTaxonomy(indexer::EmbeddedTaxonomyText(),
                                     indexer::EmbeddedTaxonomyName());
  EXPECT_TRUE(tax.ok()) << tax.status();
  return *tax;
}

// Population: 300 issues in three repositories (150, 100, 50), kinds cycling.
std::vector<PopulationUnit> Population() {
  std::vector<PopulationUnit> out;
  const std::pair<const char*, int> repos[] = {{"acme/big", 150}, {"acme/mid", 100},
                                               {"Acme/Small", 50}};
  const char* kinds[] = {"bug", "requirement", "question"};
  for (const auto& [repo, n] : repos) {
    for (int i = 1; i <= n; ++i) {
      PopulationUnit u;
      u.repo = repo;
      u.repo_slug = absl::StrCat("github:", repo);
      u.number = i;
      u.ref = absl::StrCat(repo, "#", i);
      u.tracker = "github";
      u.kind = kinds[i % 3];
      u.year = 2020 + i % 4;
      out.push_back(u);
    }
  }
  return out;
}

TEST(StudySampleTest, SameSeedSameSampleWhateverTheHitOrder) {
  SampleSpec spec;
  spec.size = 60;
  spec.by = {"repo"};
  spec.seed = 42;
  std::vector<PopulationUnit> population = Population();
  Manifest m1, m2;
  auto first = DrawSample(population, spec, &m1);
  ASSERT_TRUE(first.ok()) << first.status();
  std::shuffle(population.begin(), population.end(), std::mt19937(7));
  population.push_back(population.front());  // a duplicate hit counts once
  auto second = DrawSample(population, spec, &m2);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(first->size(), 60u);
  for (size_t i = 0; i < first->size(); ++i) EXPECT_EQ((*first)[i].ref, (*second)[i].ref) << i;
  EXPECT_EQ(m1.population, 300);
  EXPECT_EQ(m2.population, 300);
  // Proportional allocation: 30, 20, 10; strata named in lower case, sorted.
  ASSERT_EQ(m1.strata.size(), 3u);
  EXPECT_EQ(m1.strata[0].name, "repo=acme/big");
  EXPECT_EQ(m1.strata[0].population, 150);
  EXPECT_EQ(m1.strata[0].sample, 30);
  EXPECT_EQ(m1.strata[1].sample, 20);
  EXPECT_EQ(m1.strata[2].name, "repo=acme/small");
  EXPECT_EQ(m1.strata[2].sample, 10);
  int small = 0;
  for (const SampledUnit& u : *first) small += u.stratum == "repo=acme/small";
  EXPECT_EQ(small, 10);

  // Another seed, another sample.
  spec.seed = 43;
  Manifest m3;
  auto third = DrawSample(Population(), spec, &m3);
  ASSERT_TRUE(third.ok());
  int same = 0;
  for (size_t i = 0; i < third->size(); ++i) same += (*third)[i].ref == (*first)[i].ref;
  EXPECT_LT(same, 10);
}

TEST(StudySampleTest, CochranSizeAndSeveralDimensions) {
  SampleSpec spec;
  spec.by = {"repo", "kind"};
  Manifest m;
  auto sample = DrawSample(Population(), spec, &m);
  ASSERT_TRUE(sample.ok());
  // n0 = 384.15; N = 300: 384.15 / (1 + 383.15 / 300) = 168.7 → 169.
  EXPECT_EQ(sample->size(), 169u);
  EXPECT_EQ(m.sample_size, 169);
  EXPECT_EQ(m.strata.size(), 9u);
  int64_t sum = 0;
  for (const Stratum& s : m.strata) sum += s.sample;
  EXPECT_EQ(sum, 169);
  EXPECT_EQ(m.strata[0].name, "repo=acme/big|kind=bug");

  spec.by = {"colour"};
  auto bad = DrawSample(Population(), spec, &m);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("unknown dimension 'colour'"), std::string::npos);
  spec.by = {};
  EXPECT_FALSE(DrawSample({}, spec, &m).ok());
}

TEST(StudySampleTest, ManifestRoundTrips) {
  Manifest m;
  m.query = "label:bug";
  m.data_dir = "/data";
  m.index.documents = 300;
  m.index.tagger = "llm-dl/1 taxonomy=abc model=none";
  m.index.feeds = {{"store-1", 77}};
  m.taxonomy = "llm-dl/1";
  SampleSpec spec;
  spec.size = 30;
  spec.by = {"repo"};
  spec.seed = 9;
  ASSERT_TRUE(DrawSample(Population(), spec, &m).ok());
  auto back = ParseManifest(ManifestJson(m), "manifest.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->query, m.query);
  EXPECT_EQ(back->index.feeds, m.index.feeds);
  EXPECT_EQ(back->taxonomy, "llm-dl/1");
  EXPECT_EQ(back->seed, 9u);
  EXPECT_EQ(back->strata.size(), 3u);
  EXPECT_EQ(back->strata[1].population, 100);
  EXPECT_EQ(back->sample_size, 30);
}

TEST(StudyLabelsTest, AcceptsShortIdsAndInfersParents) {
  const taxonomy::Taxonomy tax = DefaultTaxonomy();
  const std::string text =
      "{\"ref\": \"o/r#1\", \"kind\": \"bug\", \"theme\": \"memory\", \"subtheme\": \"oom\", "
      "\"llm\": true}\n"
      "\n"
      "{\"ref\": \"github:O/R#2\", \"theme\": \"question.usage\", \"llm\": \"no\"}\n"
      "{\"ref\": \"o/r#3\", \"subtheme\": \"bug.distributed.elastic\"}\n"
      "{\"ref\": \"o/r#4\", \"kind\": \"\", \"theme\": null}\n"
      "{\"ref\": \"o/r#5\", \"kind\": \"Feature\", \"title\": \"ignored\"}\n";
  auto labels = ParseLabels(text, "a.jsonl", false, tax);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), 4u);  // #4 is empty: not a label
  EXPECT_EQ((*labels)[0].theme, "bug.memory");
  EXPECT_EQ((*labels)[0].subtheme, "bug.memory.oom");
  EXPECT_EQ((*labels)[0].llm, true);
  EXPECT_EQ((*labels)[1].key, "github:o/r#2");
  EXPECT_EQ((*labels)[1].kind, "question");
  EXPECT_EQ((*labels)[1].llm, false);
  EXPECT_EQ((*labels)[2].kind, "bug");
  EXPECT_EQ((*labels)[2].theme, "bug.distributed");
  EXPECT_EQ((*labels)[3].kind, "requirement");
  EXPECT_EQ(FieldValue((*labels)[3], "theme"), std::nullopt);
  EXPECT_EQ(FieldValue((*labels)[1], "subtheme"), std::string(kNoSubtheme));
  EXPECT_EQ(FieldValue((*labels)[3], "subtheme"), std::nullopt);
}

TEST(StudyLabelsTest, BadLabelsNameFileLineFieldAndValue) {
  const taxonomy::Taxonomy tax = DefaultTaxonomy();
  struct Case {
    const char* name;
    std::string text;
    bool csv;
    std::vector<std::string> want;  // substrings of the message
  };
  const std::string ok = "{\"ref\": \"o/r#1\", \"kind\": \"bug\"}\n";
  const Case cases[] = {
      {"unknown theme", ok + "{\"ref\": \"o/r#2\", \"kind\": \"bug\", \"theme\": \"bug.nonsense\"}",
       false, {"f:2: field 'theme'", "unknown theme 'bug.nonsense'", "bug.memory"}},
      {"unknown kind", "{\"ref\": \"o/r#2\", \"kind\": \"bgu\"}", false,
       {"f:1: field 'kind'", "unknown kind 'bgu'", "bug, requirement, question"}},
      {"theme of another kind", "{\"ref\": \"o/r#2\", \"kind\": \"question\", \"theme\": \"bug.memory\"}",
       false, {"field 'theme'", "'bug.memory' is a theme of kind 'bug', not of kind 'question'"}},
      {"sub-theme of another theme",
       "{\"ref\": \"o/r#2\", \"theme\": \"bug.memory\", \"subtheme\": \"bug.numerics.nan-inf\"}",
       false, {"field 'subtheme'", "not a sub-theme of theme 'bug.memory'"}},
      {"bad llm", "{\"ref\": \"o/r#2\", \"kind\": \"bug\", \"llm\": \"maybe\"}", false,
       {"field 'llm'", "'maybe' is not true or false"}},
      {"malformed line", ok + "{\"ref\": \"o/r#2\", \"kind\": \"bug\"\n", false,
       {"f:2:", "not valid JSON"}},
      {"not an object", "[1, 2]", false, {"f:1:", "must be a JSON object"}},
      {"no ref", "{\"kind\": \"bug\"}", false, {"f:1: field 'ref'", "missing"}},
      {"bad ref", "{\"ref\": \"issue seven\", \"kind\": \"bug\"}", false,
       {"f:1: field 'ref'", "'issue seven' is not an issue reference"}},
      {"array value", "{\"ref\": \"o/r#1\", \"kind\": [\"bug\"]}", false,
       {"f:1: field 'kind'", "expected a string, got array"}},
      {"twice", ok + "{\"ref\": \"O/R#1\", \"kind\": \"question\"}", false,
       {"f:2:", "labelled again (first on line 1)"}},
      {"csv without ref", "title,kind\r\nx,bug\r\n", true, {"f:1:", "no 'ref' column"}},
      {"csv row width", "ref,kind\r\no/r#1,bug\r\no/r#2,bug,extra\r\n", true,
       {"f:3:", "row has 3 fields, the header 2"}},
      {"csv unterminated quote", "ref,kind\r\n\"o/r#1,bug\r\n", true,
       {"f:2:", "unterminated quoted field"}},
      {"csv unknown theme", "ref,body,theme\r\no/r#1,\"two\nlines\",bug.nonsense\r\n", true,
       {"f:2: field 'theme'", "unknown theme 'bug.nonsense'"}},
  };
  for (const Case& c : cases) {
    auto labels = ParseLabels(c.text, "f", c.csv, tax);
    ASSERT_FALSE(labels.ok()) << c.name;
    EXPECT_EQ(labels.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    for (const std::string& want : c.want) {
      EXPECT_NE(labels.status().message().find(want), std::string::npos)
          << c.name << ": " << labels.status().message() << " lacks " << want;
    }
  }
}

TEST(StudyLabelsTest, ReadsTheExportedCsvFilledIn) {
  const taxonomy::Taxonomy tax = DefaultTaxonomy();
  IssueRecord issue;
  issue.ref = "o/r#1";
  issue.repo = "o/r";
  issue.title = "OOM, with \"quotes\"";
  issue.body = "<!-- template -->\nIt crashes.\n\n```\nTraceback\nRuntimeError: CUDA out of memory\n```\n";
  issue.kind = "bug";
  ExportOptions options;
  std::string csv = AnnotatorFile({issue}, options);
  EXPECT_EQ(csv.find("tag_kind"), std::string::npos);  // blind
  EXPECT_EQ(csv.find("template"), std::string::npos);  // HTML comment dropped
  EXPECT_NE(csv.find("RuntimeError: CUDA out of memory"), std::string::npos);
  // Fill in the last five columns (kind, theme, subtheme, llm, notes).
  const size_t end = csv.rfind(",,,,\r\n");
  ASSERT_NE(end, std::string::npos);
  csv.replace(end, 6, "bug,bug.memory,oom,yes,\"a note, with a comma\"\r\n");
  auto labels = ParseLabels(csv, "alice.csv", true, tax);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), 1u);
  EXPECT_EQ((*labels)[0].subtheme, "bug.memory.oom");
  EXPECT_EQ((*labels)[0].line, 2);

  options.show_tags = true;
  options.csv = false;
  const std::string jsonl = AnnotatorFile({issue}, options);
  EXPECT_NE(jsonl.find("\"tag_kind\":\"bug\""), std::string::npos);
}

TEST(StudyLabelsTest, AnnotatorTextKeepsCodeAndDropsMarkup) {
  const std::string text = AnnotatorText(
      "### Describe the bug\n\nThe **loss** is `nan` after [step 3](http://x).\n\n"
      "```python\nx = torch.ones(2)\n  y = x / 0\n```\n");
  EXPECT_NE(text.find("The loss is nan after step 3."), std::string::npos) << text;
  EXPECT_NE(text.find("  y = x / 0"), std::string::npos) << text;
  EXPECT_EQ(text.find("**"), std::string::npos) << text;
}

// docs/LABELLING.md reports Cohen's κ 0.943 (kind), 0.894 (theme), 0.850 (sub-theme) and 1.000
// (llm) between the two passes over devset-1; the label files carry only refs.
TEST(StudyAgreementTest, ReproducesTheDevsetKappas) {
  const taxonomy::Taxonomy tax = DefaultTaxonomy();
  const std::string dir = std::string(ISSUESCOPE_SOURCE_DIR) + "/indexer/taxonomies/devset/";
  auto a = ReadLabelFile(dir + "pass-a.jsonl", tax);
  auto b = ReadLabelFile(dir + "pass-b.jsonl", tax);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->size(), 620u);
  const AgreementReport report = ComputeAgreement({{"a", *a}, {"b", *b}});
  EXPECT_EQ(report.units, 620);
  ASSERT_EQ(report.fields.size(), 4u);
  const double want_kappa[] = {0.943, 0.894, 0.850, 1.000};
  const double want_agreement[] = {0.966, 0.902, 0.855, 1.000};
  for (size_t f = 0; f < 4; ++f) {
    const FieldAgreement& field = report.fields[f];
    ASSERT_EQ(field.pairs.size(), 1u);
    EXPECT_EQ(field.pairs[0].units, 620) << field.field;
    ASSERT_TRUE(field.pairs[0].kappa.has_value()) << field.field;
    EXPECT_NEAR(*field.pairs[0].kappa, want_kappa[f], 0.0005) << field.field;
    EXPECT_NEAR(*field.pairs[0].agreement, want_agreement[f], 0.0005) << field.field;
    EXPECT_NEAR(*field.unanimous, want_agreement[f], 0.0005) << field.field;
    // Two raters without missing values: Fleiss' κ and α are within a hair of Cohen's κ here.
    EXPECT_NEAR(*field.fleiss, want_kappa[f], 0.002) << field.field;
    EXPECT_NEAR(*field.alpha, want_kappa[f], 0.002) << field.field;
  }
  // The kind confusion: 327 bugs agreed, 9 of A's bugs were B's questions.
  EXPECT_EQ(report.fields[0].categories,
            (std::vector<std::string>{"bug", "question", "requirement"}));
  EXPECT_EQ(report.fields[0].pairs[0].confusion[0][0], 327);
  EXPECT_EQ(report.fields[0].pairs[0].confusion[0][1], 9);
}

// CheckDevset reads a development set's two passes and adjudicated labels from the source tree,
// checks the Cohen's κ and raw agreement per field (kind, theme, sub-theme, llm) that
// docs/LABELLING.md reports for it, and that the adjudicated labels keep every field both passes
// agreed on.
void CheckDevset(const std::string& folder, const double (&want_kappa)[4],
                 const double (&want_agreement)[4]) {
  const taxonomy::Taxonomy tax = DefaultTaxonomy();
  const std::string dir =
      absl::StrCat(ISSUESCOPE_SOURCE_DIR, "/indexer/taxonomies/", folder, "/");
  auto a = ReadLabelFile(dir + "pass-a.jsonl", tax);
  auto b = ReadLabelFile(dir + "pass-b.jsonl", tax);
  auto final_labels = ReadLabelFile(dir + "adjudicated.jsonl", tax);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(final_labels.ok()) << final_labels.status();
  ASSERT_EQ(a->size(), 600u);
  ASSERT_EQ(final_labels->size(), 600u);
  const AgreementReport report = ComputeAgreement({{"a", *a}, {"b", *b}});
  EXPECT_EQ(report.units, 600);
  ASSERT_EQ(report.fields.size(), 4u);
  for (size_t f = 0; f < 4; ++f) {
    const FieldAgreement& field = report.fields[f];
    ASSERT_EQ(field.pairs.size(), 1u);
    ASSERT_TRUE(field.pairs[0].kappa.has_value()) << field.field;
    EXPECT_NEAR(*field.pairs[0].kappa, want_kappa[f], 0.0005) << field.field;
    EXPECT_NEAR(*field.pairs[0].agreement, want_agreement[f], 0.0005) << field.field;
  }
  // The adjudicated labels as a third rater: every field both passes labelled alike is labelled
  // so in the final file too, so all three agree exactly as often as the two passes do.
  const AgreementReport with_final =
      ComputeAgreement({{"a", *a}, {"b", *b}, {"final", *final_labels}});
  for (size_t f = 0; f < 4; ++f) {
    EXPECT_NEAR(*with_final.fields[f].unanimous, want_agreement[f], 0.0005)
        << with_final.fields[f].field;
  }
}

// devset-2: κ 0.975 (kind), 0.936 (theme), 0.918 (sub-theme), 1.000 (llm).
TEST(StudyAgreementTest, ReproducesTheDevset2KappasAndKeepsAgreedLabels) {
  CheckDevset("devset-2", {0.975, 0.936, 0.918, 1.000}, {0.985, 0.942, 0.922, 1.000});
}

// devset-3: κ 0.944 (kind), 0.906 (theme), 0.883 (sub-theme), 1.000 (llm).
TEST(StudyAgreementTest, ReproducesTheDevset3KappasAndKeepsAgreedLabels) {
  CheckDevset("devset-3", {0.9439, 0.9058, 0.8826, 1.000}, {0.9667, 0.915, 0.8883, 1.000});
}

TEST(StudyAdjudicationTest, SheetListsDisagreementsFirstWithAgreedFieldsFilled) {
  const taxonomy::Taxonomy tax = DefaultTaxonomy();
  auto alice = ParseLabels(
      "{\"ref\": \"o/r#1\", \"kind\": \"bug\", \"theme\": \"bug.memory\", \"subtheme\": \"\", \"llm\": true}\n"
      "{\"ref\": \"o/r#2\", \"kind\": \"bug\", \"theme\": \"bug.memory\", \"subtheme\": \"\", \"llm\": true}\n"
      "{\"ref\": \"o/r#3\", \"kind\": \"question\", \"theme\": \"question.usage\", \"llm\": false}\n",
      "alice", false, tax);
  auto bob = ParseLabels(
      "{\"ref\": \"o/r#1\", \"kind\": \"bug\", \"theme\": \"bug.numerics\", \"subtheme\": \"\", \"llm\": true}\n"
      "{\"ref\": \"o/r#2\", \"kind\": \"bug\", \"theme\": \"bug.memory\", \"subtheme\": \"\", \"llm\": true}\n",
      "bob", false, tax);
  ASSERT_TRUE(alice.ok() && bob.ok());
  const std::vector<AdjudicationItem> items = Adjudicate({{"alice", *alice}, {"bob", *bob}}, nullptr);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].ref, "o/r#1");
  EXPECT_EQ(items[0].status, "disagreed");
  // No sub-theme from either: that field agrees.
  EXPECT_EQ(items[0].disagree_on, (std::vector<std::string>{"theme"}));
  EXPECT_EQ(items[0].final_label.kind, "bug");  // agreed
  EXPECT_EQ(items[0].final_label.theme, "");    // for the adjudicator
  EXPECT_EQ(items[1].ref, "o/r#3");
  EXPECT_EQ(items[1].status, "single");
  EXPECT_EQ(items[1].final_label.kind, "");
  EXPECT_EQ(items[2].status, "agreed");
  EXPECT_EQ(items[2].final_label.theme, "bug.memory");
  const std::string csv = AdjudicationSheet(items, {"alice", "bob"}, {}, true);
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")),
            "ref,status,disagree_on,kind:alice,kind:bob,theme:alice,theme:bob,subtheme:alice,"
            "subtheme:bob,llm:alice,llm:bob,kind,theme,subtheme,llm,reason");
  EXPECT_NE(csv.find("o/r#1,disagreed,theme,bug,bug,bug.memory,bug.numerics,(none),(none),"
                     "true,true,bug,,,true,"),
            std::string::npos)
      << csv;
  // The sheet itself reads back as labels: its final columns.
  auto finals = ParseLabels(csv, "sheet.csv", true, tax);
  ASSERT_TRUE(finals.ok()) << finals.status();
  EXPECT_FALSE(CheckFinal(*finals, "sheet.csv").ok());
  EXPECT_NE(CheckFinal(*finals, "sheet.csv").message().find("sheet.csv:2: ref 'o/r#1': no final theme"),
            std::string::npos)
      << CheckFinal(*finals, "sheet.csv");
}

TEST(StudyReportTest, EstimatesPerKindFromStrata) {
  const taxonomy::Taxonomy tax = DefaultTaxonomy();
  Study study;
  study.dir = "/study";
  study.manifest.population = 1000;
  study.manifest.strata = {{"repo=a", 600, 4}, {"repo=b", 400, 2}};
  for (int i = 1; i <= 4; ++i) study.units.push_back({absl::StrCat("a/a#", i), "github:a/a", i, "repo=a"});
  for (int i = 1; i <= 2; ++i) study.units.push_back({absl::StrCat("b/b#", i), "github:b/b", i, "repo=b"});
  auto labels = ParseLabels(
      "{\"ref\": \"a/a#1\", \"kind\": \"bug\"}\n{\"ref\": \"a/a#2\", \"kind\": \"bug\"}\n"
      "{\"ref\": \"a/a#3\", \"kind\": \"question\"}\n{\"ref\": \"a/a#4\", \"kind\": \"question\"}\n"
      "{\"ref\": \"b/b#1\", \"kind\": \"bug\"}\n{\"ref\": \"b/b#2\", \"kind\": \"requirement\"}\n",
      "final.jsonl", false, tax);
  ASSERT_TRUE(labels.ok());
  auto report = ComputeReport(study, *labels, tax, 0.95, "final.jsonl");
  ASSERT_TRUE(report.ok()) << report.status();
  const ReportRow& bug = report->rows[0];
  EXPECT_EQ(bug.value, "bug");
  EXPECT_EQ(bug.in_sample, 3);
  EXPECT_EQ(bug.labelled, 6);
  EXPECT_NEAR(bug.share.proportion, 0.6 * 0.5 + 0.4 * 0.5, 1e-12);
  EXPECT_NEAR(bug.count, 500, 1e-9);
  EXPECT_LE(bug.count_low, bug.count);
  EXPECT_GE(bug.count_high, bug.count);
  EXPECT_EQ(report->rows.back().field, "llm");
  EXPECT_EQ(report->rows.back().labelled, 0);
  EXPECT_EQ(report->rows.back().share.method, "none");

  auto stranger = ParseLabels("{\"ref\": \"c/c#1\", \"kind\": \"bug\"}\n", "final.jsonl", false, tax);
  auto bad = ComputeReport(study, *stranger, tax, 0.95, "final.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("final.jsonl:1: ref 'c/c#1' is not in the sample"),
            std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace issuescope::study
