// End-to-end: an annotation study with the real `issuescope` binary over an index built in the
// test (60 tagged issues in three repositories): sample → export → import of two annotators →
// agreement (κ and α checked against values computed by hand) → adjudicate → resolve →
// `taxonomy train` on the result → report; the clear errors of bad label files; and `study
// agreement` over the development set's two passes, which must give the κ docs/LABELLING.md
// reports.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/csv.h"
#include "common/index_schema.h"
#include "common/subprocess.h"
#include "indexer/index_writer.h"
#include "indexer/study.h"
#include "indexer/taxonomy_tagger.h"
#include "nlohmann/json.hpp"
#include "tests/indexer/test_issues.h"

namespace issuescope {
namespace {

std::string Bin(const std::string& name) { return std::string(ISSUESCOPE_BIN_DIR) + "/" + name; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// One annotator's label of one issue.
struct Label {
  std::string kind, theme, subtheme;
  bool llm = false;
};

class StudyE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp ? tmp : "/tmp", "/issuescope-study-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    BuildIndex();
  }
  void TearDown() override {
    if (!HasFailure() && std::getenv("ISSUESCOPE_KEEP_TEST_DIR") == nullptr) {
      std::filesystem::remove_all(dir_);
    }
  }

  // BuildIndex writes DIR/data/index: acme/llm-serve 30 issues, acme/vision 20, acme/tools 10,
  // created over three years, tagged with the built-in taxonomy.
  void BuildIndex() {
    auto tagger = indexer::TaxonomyTagger::Create("", "");
    ASSERT_TRUE(tagger.ok()) << tagger.status();
    indexer::IndexWriterOptions options;
    options.tagger = tagger->get();
    std::filesystem::create_directories(dir_ + "/data");
    auto writer = indexer::IndexWriter::Open(dir_ + "/data/index", options);
    ASSERT_TRUE(writer.ok()) << writer.status();
    const std::pair<std::string, int> repos[] = {
        {"acme/llm-serve", 30}, {"acme/vision", 20}, {"acme/tools", 10}};
    const char* titles[] = {"CUDA out of memory when serving the model",
                            "Feature request: support a new model architecture",
                            "How do I configure the batch size?"};
    std::vector<v1::ChangeEvent> events;
    uint64_t seq = 0;
    for (const auto& [repo, n] : repos) {
      for (int i = 1; i <= n; ++i) {
        v1::IssueWithComments iwc = indexer::testing::MakeIssue(
            repo, i, absl::StrCat(titles[i % 3], " (", repo, " ", i, ")"), 1700000000 + i);
        v1::Issue* issue = iwc.mutable_issue();
        issue->set_body(absl::StrCat(
            "<!-- Please describe the problem -->\n### Describe the bug\n\nIssue ", i, " of ",
            repo, ": ", titles[i % 3], ".\n\n```\nTraceback (most recent call last):\n"
            "RuntimeError: something failed\n```\n"));
        issue->add_labels(i % 3 == 0 ? "bug" : i % 3 == 1 ? "enhancement" : "question");
        issue->mutable_created_at()->set_seconds(1609459200 + (i % 3) * 31622400);  // 2021..2023
        v1::Comment* comment = iwc.add_comments();
        comment->set_id(i);
        comment->set_author("helper");
        comment->set_body(absl::StrCat("A comment on issue ", i, "."));
        events.push_back(indexer::testing::Upsert(++seq, iwc));
      }
    }
    ASSERT_TRUE((*writer)->Apply(indexer::testing::Batch("store-1", seq, events)).ok());
    ASSERT_TRUE((*writer)->CommitMetadata({{index::kTaggerMetadataKey,
                                            (*tagger)->Fingerprint()}}).ok());
  }

  RunResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), Bin("issuescope"));
    const std::string log = absl::StrCat(dir_, "/run-", runs_++, ".log");
    RunResult r;
    auto proc = Subprocess::Start(args, log);
    EXPECT_TRUE(proc.ok()) << proc.status();
    if (!proc.ok()) return r;
    int status = 0;
    EXPECT_TRUE((*proc)->Wait(absl::Minutes(5), &status)) << "issuescope did not finish";
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.output = ReadFile(log);
    return r;
  }

  // Sample reads the refs and strata of a study's sample.jsonl, in order.
  std::vector<std::pair<std::string, std::string>> Sample(const std::string& study) {
    std::vector<std::pair<std::string, std::string>> out;
    for (absl::string_view line : absl::StrSplit(ReadFile(study + "/sample.jsonl"), '\n')) {
      if (line.empty()) continue;
      auto j = nlohmann::json::parse(line);
      out.emplace_back(j.at("ref").get<std::string>(), j.at("stratum").get<std::string>());
    }
    return out;
  }

  std::string dir_;
  int runs_ = 0;
};

// Alice's label of the i-th sampled issue: 15 bugs (8 memory, 7 environment), 10 requirements,
// 5 questions; llm for the issues of acme/llm-serve.
Label Alice(int i, const std::string& ref) {
  const bool llm = ref.rfind("acme/llm-serve#", 0) == 0;
  if (i < 8) return {"bug", "bug.memory", "bug.memory.oom", llm};
  if (i < 15) return {"bug", "bug.environment", "bug.environment.install-build", llm};
  if (i < 25) return {"requirement", "requirement.capability", "", llm};
  return {"question", "question.usage", "", llm};
}

// Bob agrees except on three issues: #3 (theme), #14 (kind and theme), #20 (kind and theme).
Label Bob(int i, const std::string& ref) {
  Label l = Alice(i, ref);
  if (i == 3) l = {"bug", "bug.performance", "", l.llm};
  if (i == 14) l = {"question", "question.usage", "", l.llm};
  if (i == 20) l = {"bug", "bug.environment", "bug.environment.install-build", l.llm};
  return l;
}

TEST_F(StudyE2eTest, SampleExportImportAgreementAdjudicateTrainReport) {
  const std::string data = dir_ + "/data", study = dir_ + "/study";

  // sample: 30 of 60, proportional to the repositories (15, 10, 5); reproducible.
  RunResult r = Run({"study", "sample", "--data", data, "--size", "30", "--by", "repo", "--seed",
                     "7", "--out", study});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sampled 30 of 60 issues (seed 7)"), std::string::npos) << r.output;
  nlohmann::json manifest = nlohmann::json::parse(ReadFile(study + "/manifest.json"));
  EXPECT_EQ(manifest["population"], 60);
  EXPECT_EQ(manifest["sample_size"], 30);
  EXPECT_EQ(manifest["seed"], 7);
  EXPECT_EQ(manifest["taxonomy"]["tag"], "llm-dl/1");
  EXPECT_EQ(manifest["index"]["documents"], 60);
  EXPECT_EQ(manifest["index"]["feeds"]["store-1"], 60);
  ASSERT_EQ(manifest["strata"].size(), 3u);
  EXPECT_EQ(manifest["strata"][0]["stratum"], "repo=acme/llm-serve");
  EXPECT_EQ(manifest["strata"][0]["population"], 30);
  EXPECT_EQ(manifest["strata"][0]["sample"], 15);
  EXPECT_EQ(manifest["strata"][1]["sample"], 5);   // acme/tools
  EXPECT_EQ(manifest["strata"][2]["sample"], 10);  // acme/vision
  ASSERT_EQ(Run({"study", "sample", "--data", data, "--size", "30", "--by", "repo", "--seed", "7",
                 "--out", dir_ + "/again"}).exit_code, 0);
  EXPECT_EQ(ReadFile(study + "/sample.jsonl"), ReadFile(dir_ + "/again/sample.jsonl"));
  r = Run({"study", "sample", "--data", data, "--size", "30", "--out", study});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("already holds a sample"), std::string::npos) << r.output;
  // Sized by Cochran: N = 60 → 384.15 / (1 + 383.15 / 60) = 52.01 → 53.
  r = Run({"study", "sample", "--data", data, "--by", "repo,year", "--out", dir_ + "/cochran"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir_ + "/cochran/manifest.json"))["sample_size"], 53);

  // export: blind CSV with the definitions; with --show-tags the index's tags too.
  r = Run({"study", "export", "--sample", study, "--format", "csv", "--out",
           study + "/annotate.csv", "--comments"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = ReadFile(study + "/annotate.csv");
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")), "ref,repo,title,labels,body,kind,theme,subtheme,llm,notes");
  EXPECT_EQ(csv.find("Please describe"), std::string::npos);  // HTML comment dropped
  EXPECT_NE(csv.find("RuntimeError: something failed"), std::string::npos);
  EXPECT_NE(csv.find("--- comment by helper"), std::string::npos);
  const std::string definitions = ReadFile(study + "/annotate.definitions.md");
  EXPECT_NE(definitions.find("# Taxonomy llm-dl/1"), std::string::npos);
  EXPECT_NE(definitions.find("`bug.memory.oom`"), std::string::npos);
  ASSERT_EQ(Run({"study", "export", "--sample", study, "--format", "jsonl", "--show-tags",
                 "--out", dir_ + "/tagged.jsonl"}).exit_code, 0);
  EXPECT_NE(ReadFile(dir_ + "/tagged.jsonl").find("\"tag_kind\""), std::string::npos);

  // Two annotators: alice fills in the exported CSV, bob writes JSON Lines.
  auto rows = issuescope::ParseCsvRows(csv, "annotate.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 31u);
  const std::vector<std::pair<std::string, std::string>> sample = Sample(study);
  std::map<std::string, Label> alice_by_ref;
  std::string alice_csv, bob_jsonl;
  for (size_t r = 0; r < rows->size(); ++r) {
    std::vector<std::string> cells = (*rows)[r].fields;
    if (r > 0) {
      const int i = static_cast<int>(r - 1);
      ASSERT_EQ(cells[0], sample[i].first);
      const Label a = Alice(i, cells[0]), b = Bob(i, cells[0]);
      alice_by_ref[cells[0]] = a;
      cells[5] = a.kind;
      cells[6] = a.theme;
      cells[7] = a.subtheme;
      cells[8] = a.llm ? "TRUE" : "FALSE";  // as a spreadsheet writes it
      bob_jsonl += nlohmann::json({{"ref", cells[0]}, {"kind", b.kind}, {"theme", b.theme},
                                   {"subtheme", b.subtheme}, {"llm", b.llm}}).dump() + "\n";
    }
    for (size_t c = 0; c < cells.size(); ++c) {
      alice_csv += (c ? "," : "") + issuescope::CsvQuote(cells[c]);
    }
    alice_csv += "\r\n";
  }
  WriteFile(dir_ + "/alice.csv", alice_csv);
  WriteFile(dir_ + "/bob.jsonl", bob_jsonl);
  r = Run({"study", "import", "--sample", study, "alice=" + dir_ + "/alice.csv",
           "bob=" + dir_ + "/bob.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("alice: 30 labels"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(study + "/labels/bob.jsonl"));

  // agreement. Kind (alice rows × bob columns: bug 14/1/0, question 0/5/0, requirement 1/0/9):
  // p_o = 28/30, p_e = (15·15 + 5·6 + 10·9)/900 = 0.38333, Cohen's κ = 0.55/0.61667 = 0.89189;
  // Fleiss (pooled p = 30/60, 11/60, 19/60): p_e = 0.38389, κ = 0.89179; Krippendorff:
  // 1 − 59 · 4 / (60² − 30² − 11² − 19²) = 1 − 236/2218 = 0.89360.
  // Theme: p_o = 27/30, p_e = (8·7 + 7·7 + 10·9 + 5·6)/900 = 0.25, κ = 0.65/0.75 = 0.86667.
  r = Run({"study", "agreement", "--sample", study, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json agreement = nlohmann::json::parse(r.output);
  const nlohmann::json& kind = agreement["fields"]["kind"];
  EXPECT_NEAR(kind["pairs"][0]["cohen_kappa"].get<double>(), 0.55 / (1 - 345.0 / 900), 1e-9);
  EXPECT_NEAR(kind["pairs"][0]["agreement"].get<double>(), 28.0 / 30, 1e-9);
  EXPECT_NEAR(kind["fleiss_kappa"].get<double>(), 0.89179, 1e-5);
  EXPECT_NEAR(kind["krippendorff_alpha"].get<double>(), 1 - 236.0 / 2218, 1e-9);
  EXPECT_EQ(kind["pairs"][0]["confusion"],
            nlohmann::json::parse("[[14, 1, 0], [0, 5, 0], [1, 0, 9]]"));
  EXPECT_NEAR(agreement["fields"]["theme"]["pairs"][0]["cohen_kappa"].get<double>(), 0.65 / 0.75,
              1e-9);
  EXPECT_NEAR(agreement["fields"]["llm"]["pairs"][0]["cohen_kappa"].get<double>(), 1.0, 1e-12);
  r = Run({"study", "agreement", "--sample", study});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("alice × bob"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0.892"), std::string::npos) << r.output;

  // adjudicate: 3 disagreements first; resolve them as alice labelled.
  r = Run({"study", "adjudicate", "--sample", study, "--out", study + "/adjudicate.csv"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 disagreed, 0 labelled once, 27 agreed"), std::string::npos)
      << r.output;
  auto sheet = issuescope::ParseCsvRows(ReadFile(study + "/adjudicate.csv"), "adjudicate.csv");
  ASSERT_TRUE(sheet.ok());
  std::map<std::string, size_t> col;
  for (size_t c = 0; c < (*sheet)[0].fields.size(); ++c) col[(*sheet)[0].fields[c]] = c;
  ASSERT_TRUE(col.count("title") && col.count("kind:alice") && col.count("theme:bob"));
  // An unresolved sheet is refused, naming what is missing.
  r = Run({"study", "adjudicate", "--sample", study, "--resolved", study + "/adjudicate.csv",
           "--out", dir_ + "/labels.jsonl"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no final"), std::string::npos) << r.output;
  std::string resolved;
  for (size_t i = 0; i < sheet->size(); ++i) {
    std::vector<std::string> cells = (*sheet)[i].fields;
    if (i > 0) {
      EXPECT_EQ(cells[col["status"]], i <= 3 ? "disagreed" : "agreed") << i;
      const Label& a = alice_by_ref[cells[col["ref"]]];
      if (cells[col["kind"]].empty()) cells[col["kind"]] = a.kind;
      if (cells[col["theme"]].empty()) cells[col["theme"]] = a.theme;
      if (cells[col["subtheme"]].empty()) cells[col["subtheme"]] = a.subtheme;
      if (i <= 3) cells[col["reason"]] = "per the guidelines";
    }
    for (size_t c = 0; c < cells.size(); ++c) resolved += (c ? "," : "") + issuescope::CsvQuote(cells[c]);
    resolved += "\r\n";
  }
  WriteFile(dir_ + "/resolved.csv", resolved);
  r = Run({"study", "adjudicate", "--sample", study, "--resolved", dir_ + "/resolved.csv",
           "--out", dir_ + "/labels.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> lines =
      absl::StrSplit(ReadFile(dir_ + "/labels.jsonl"), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 30u);
  nlohmann::json first = nlohmann::json::parse(lines[0]);
  EXPECT_NE(first["title"].get<std::string>().find("("), std::string::npos);
  EXPECT_NE(first["body"].get<std::string>().find("Traceback"), std::string::npos);

  // The labelled file trains a model as it is.
  r = Run({"taxonomy", "train", "--data", dir_ + "/labels.jsonl", "--out", dir_ + "/model.json",
           "--hash-bits", "12", "--epochs", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/model.json"));

  // report: the final labels are alice's. Bugs: p = Σ W_h p_h over the three repositories.
  r = Run({"study", "report", "--sample", study, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json report = nlohmann::json::parse(r.output);
  EXPECT_EQ(report["population"], 60);
  EXPECT_EQ(report["labelled"], 30);
  std::map<std::string, std::pair<int, int>> per_stratum;  // stratum → (bugs, labelled)
  for (size_t i = 0; i < sample.size(); ++i) {
    per_stratum[sample[i].second].second += 1;
    per_stratum[sample[i].second].first += alice_by_ref[sample[i].first].kind == "bug";
  }
  const std::map<std::string, int> population = {
      {"repo=acme/llm-serve", 30}, {"repo=acme/vision", 20}, {"repo=acme/tools", 10}};
  double want = 0;
  for (const auto& [stratum, counts] : per_stratum) {
    want += population.at(stratum) / 60.0 * counts.first / counts.second;
  }
  const nlohmann::json& bug = report["rows"][0];
  EXPECT_EQ(bug["value"], "bug");
  EXPECT_EQ(bug["in_sample"], 15);
  EXPECT_EQ(bug["method"], "stratified");
  EXPECT_NEAR(bug["share"].get<double>(), want, 1e-9);
  EXPECT_NEAR(bug["count"].get<double>(), 60 * want, 1e-9);
  EXPECT_LE(bug["count_low"].get<double>(), bug["count"].get<double>());
  EXPECT_GE(bug["count_high"].get<double>(), bug["count"].get<double>());
  EXPECT_LT(bug["count_low"].get<double>(), bug["count_high"].get<double>());
  r = Run({"study", "report", "--sample", study});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| kind | title | in sample | estimated share (95 % CI)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| bug | Bug | 15 / 30 |"), std::string::npos) << r.output;
}

TEST_F(StudyE2eTest, BadLabelFilesAreClearErrors) {
  const std::string study = dir_ + "/study";
  ASSERT_EQ(Run({"study", "sample", "--data", dir_ + "/data", "--size", "10", "--out", study})
                .exit_code, 0);
  const std::string ref = Sample(study)[0].first;
  struct Case {
    const char* name;
    std::string text;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"unknown theme",
       absl::StrCat("{\"ref\": \"", ref, "\", \"kind\": \"bug\", \"theme\": \"bug.nonsense\"}\n"),
       {"bad.jsonl:1: field 'theme'", "unknown theme 'bug.nonsense'"}},
      {"malformed line",
       absl::StrCat("{\"ref\": \"", ref, "\", \"kind\": \"bug\"}\n{\"ref\": \"x/y#1\", \n"),
       {"bad.jsonl:2:", "not valid JSON"}},
      {"ref not in the sample", "{\"ref\": \"nobody/nothing#1\", \"kind\": \"bug\"}\n",
       {"bad.jsonl:1: ref 'nobody/nothing#1' is not in the sample"}},
  };
  for (const Case& c : cases) {
    WriteFile(dir_ + "/bad.jsonl", c.text);
    RunResult r = Run({"study", "import", "--sample", study, "carol=" + dir_ + "/bad.jsonl"});
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.output;
    for (const std::string& want : c.want) {
      EXPECT_NE(r.output.find(want), std::string::npos) << c.name << ": " << r.output;
    }
    EXPECT_FALSE(std::filesystem::exists(study + "/labels/carol.jsonl")) << c.name;
  }
  RunResult r = Run({"study", "import", "--sample", study, "carol"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("is not ANNOTATOR=FILE"), std::string::npos) << r.output;
  r = Run({"study", "agreement", "--sample", dir_ + "/nowhere"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("is not a study directory"), std::string::npos) << r.output;
}

// The development set's two passes carry only refs: agreement works on label files alone and
// gives the κ of docs/LABELLING.md (kind 0.943, theme 0.894, sub-theme 0.850, llm 1.000).
TEST(StudyDevsetTest, AgreementOfTheTwoPasses) {
  const std::string devset = std::string(ISSUESCOPE_SOURCE_DIR) + "/indexer/taxonomies/devset/";
  const std::string log = (std::filesystem::temp_directory_path() / "study-devset.log").string();
  auto proc = Subprocess::Start({Bin("issuescope"), "study", "agreement", "--labels",
                                 "a=" + devset + "pass-a.jsonl", "--labels",
                                 "b=" + devset + "pass-b.jsonl", "--json"},
                                log);
  ASSERT_TRUE(proc.ok()) << proc.status();
  int status = 0;
  ASSERT_TRUE((*proc)->Wait(absl::Minutes(1), &status));
  const std::string output = ReadFile(log);
  std::filesystem::remove(log);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  nlohmann::json j = nlohmann::json::parse(output);
  EXPECT_EQ(j["units"], 620);
  const std::pair<const char*, double> want[] = {
      {"kind", 0.943}, {"theme", 0.894}, {"subtheme", 0.850}, {"llm", 1.000}};
  for (const auto& [field, kappa] : want) {
    EXPECT_NEAR(j["fields"][field]["pairs"][0]["cohen_kappa"].get<double>(), kappa, 0.0005)
        << field;
  }
}

}  // namespace
}  // namespace issuescope
