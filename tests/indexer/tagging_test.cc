// TaxonomyTagger and re-tagging: tags at index time from the built-in taxonomy, the boolean
// terms BuildDocument makes of them, and re-tagging stored documents after a taxonomy change
// (against real Xapian, in memory and on disk).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/index_document.h"
#include "common/index_schema.h"
#include "gtest/gtest.h"
#include "indexer/embedded_model.h"
#include "indexer/embedded_taxonomy.h"
#include "indexer/index_writer.h"
#include "indexer/retagger.h"
#include "indexer/taxonomy_tagger.h"
#include "tests/indexer/test_issues.h"
#include "xapian.h"

namespace issuescope::indexer {
namespace {

using testing::Batch;
using testing::MakeIssue;
using testing::Slug;
using testing::Upsert;

std::unique_ptr<TaxonomyTagger> DefaultTagger() {
  auto tagger = TaxonomyTagger::Create("", "");
  EXPECT_TRUE(tagger.ok()) << tagger.status();
  return std::move(tagger).value();
}

bool Contains(const google::protobuf::RepeatedPtrField<std::string>& values,
              const std::string& want) {
  return std::find(values.begin(), values.end(), want) != values.end();
}

std::vector<std::string> Terms(const Xapian::Document& doc) {
  std::vector<std::string> terms;
  for (auto it = doc.termlist_begin(); it != doc.termlist_end(); ++it) terms.push_back(*it);
  return terms;
}

bool HasTerm(const Xapian::Document& doc, const std::string& term) {
  const auto terms = Terms(doc);
  return std::find(terms.begin(), terms.end(), term) != terms.end();
}

TEST(TaxonomyTaggerTest, EmbeddedTaxonomyIsTheShippedFile) {
  std::ifstream in(taxonomy::DefaultTaxonomyPath(), std::ios::binary);
  ASSERT_TRUE(in);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(EmbeddedTaxonomyText(), file.str());
  auto tagger = DefaultTagger();
  EXPECT_EQ(tagger->taxonomy().Tag(), "llm-dl/1");
  EXPECT_FALSE(tagger->has_model());
  EXPECT_EQ(tagger->Fingerprint(),
            "llm-dl/1 taxonomy=" + FingerprintHash(file.str()) + " model=none");
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(TaxonomyTaggerTest, ShipsTheDefaultModelAndRecordsItWithEveryTag) {
  const std::string model_path =
      (std::filesystem::path(taxonomy::DefaultTaxonomyPath()).parent_path() / "llm-dl-1.model")
          .string();
  const std::string file = ReadBytes(model_path);
  ASSERT_FALSE(file.empty()) << model_path;
  EXPECT_EQ(EmbeddedModelBytes(), file) << "the binary embeds the model file of the tree";

  auto with = TaxonomyTagger::Create("", std::string(kModelDefault));
  ASSERT_TRUE(with.ok()) << with.status();
  ASSERT_TRUE((*with)->has_model());
  EXPECT_EQ((*with)->model_label(),
            "llm-dl-1-devset123-nlbse24@" + FingerprintHash(file).substr(0, 8));
  EXPECT_NE((*with)->Fingerprint().find("model=" + FingerprintHash(file)), std::string::npos);
  // The same model given as a file is the same tagger.
  auto from_file = TaxonomyTagger::Create("", model_path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ((*from_file)->Fingerprint(), (*with)->Fingerprint());

  v1::IssueWithComments iwc = MakeIssue("acme/train", 5, "Segfault in conv2d backward on ROCm", 10);
  iwc.mutable_issue()->set_body("Running the backward pass crashes with SIGSEGV.");
  (*with)->Tag(&iwc);
  EXPECT_EQ(iwc.issue().tags().model(), (*with)->model_label());
  EXPECT_EQ(iwc.issue().tags().kind(), "bug");
  bool model_evidence = false;
  for (const std::string& e : iwc.issue().tags().evidence()) {
    if (e.rfind("model:", 0) == 0) model_evidence = true;
  }
  EXPECT_TRUE(model_evidence) << iwc.issue().tags().DebugString();

  // --model none: rules and labels only, and the tags say no model.
  auto none = TaxonomyTagger::Create("", std::string(kModelNone));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE((*none)->has_model());
  EXPECT_NE((*none)->Fingerprint(), (*with)->Fingerprint());
  (*none)->Tag(&iwc);
  EXPECT_EQ(iwc.issue().tags().model(), "");
  for (const std::string& e : iwc.issue().tags().evidence()) EXPECT_NE(e.rfind("model:", 0), 0u);
}

TEST(TaxonomyTaggerTest, AnotherTaxonomyHasNoDefaultModel) {
  std::string text(EmbeddedTaxonomyText());
  const size_t at = text.find("version = 1\n");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "version = 2\n");
  const std::string path = ::testing::TempDir() + "/tagging_test_llm-dl-2.toml";
  std::ofstream(path) << text;
  auto tagger = TaxonomyTagger::Create(path, "default");
  ASSERT_TRUE(tagger.ok()) << tagger.status();
  EXPECT_EQ((*tagger)->taxonomy().Tag(), "llm-dl/2");
  EXPECT_FALSE((*tagger)->has_model());
  // A model file trained for llm-dl/1 is refused for llm-dl/2, naming both.
  const std::string model_path =
      (std::filesystem::path(taxonomy::DefaultTaxonomyPath()).parent_path() / "llm-dl-1.model")
          .string();
  auto refused = TaxonomyTagger::Create(path, model_path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("llm-dl/1"), std::string::npos);
  EXPECT_NE(refused.status().message().find("llm-dl/2"), std::string::npos);
  auto missing = TaxonomyTagger::Create("", "/nonexistent/m.model");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/m.model"), std::string::npos);
  std::filesystem::remove(path);
}

struct TagCase {
  std::string name;
  std::string title;
  std::string body;
  std::vector<std::string> labels;
  std::string kind;
  std::string subtheme;  // must be among the sub-themes ("" = not checked)
  bool llm;
  std::string keyword;   // must be among the keywords ("" = none at all)
};

TEST(TaxonomyTaggerTest, TagsIssues) {
  const std::vector<TagCase> cases = {
      {"cuda oom", "CUDA out of memory when training", "RuntimeError: CUDA out of memory. "
       "Tried to allocate 2.00 GiB while fine-tuning a ResNet.", {}, "bug", "bug.memory.oom",
       false, ""},
      {"cuda oom with llama", "CUDA out of memory when fine-tuning Llama",
       "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB.", {}, "bug",
       "bug.memory.oom", true, "llama"},
      {"chinese llm", "大模型推理报错", "使用大模型推理时程序崩溃", {}, "bug", "", true, "大模型"},
  };
  auto tagger = DefaultTagger();
  for (const TagCase& c : cases) {
    SCOPED_TRACE(c.name);
    v1::IssueWithComments iwc = MakeIssue("acme/train", 1, c.title, 10);
    iwc.mutable_issue()->set_body(c.body);
    for (const auto& l : c.labels) iwc.mutable_issue()->add_labels(l);
    tagger->Tag(&iwc);
    const v1::Tags& tags = iwc.issue().tags();
    EXPECT_EQ(tags.taxonomy(), "llm-dl/1");
    EXPECT_EQ(tags.kind(), c.kind);
    if (!c.subtheme.empty()) {
      EXPECT_TRUE(Contains(tags.subthemes(), c.subtheme)) << tags.DebugString();
      EXPECT_EQ(tags.theme(), c.subtheme.substr(0, c.subtheme.rfind('.')));
    }
    EXPECT_EQ(tags.llm(), c.llm) << tags.DebugString();
    if (c.keyword.empty()) {
      EXPECT_EQ(tags.keywords_size(), 0) << tags.DebugString();
    } else {
      EXPECT_TRUE(Contains(tags.keywords(), c.keyword)) << tags.DebugString();
      EXPECT_TRUE(Contains(tags.evidence(), "cue:" + c.keyword + " -> llm"))
          << tags.DebugString();
    }
    EXPECT_GT(tags.evidence_size(), 0);
  }
}

TEST(TaxonomyTaggerTest, LabelEvidenceIsReadable) {
  auto tagger = DefaultTagger();
  v1::IssueWithComments iwc = MakeIssue("pytorch/pytorch", 7, "Crash in a kernel", 10);
  iwc.mutable_issue()->add_labels("module: cuda");
  iwc.mutable_issue()->add_labels("triaged");
  tagger->Tag(&iwc);
  bool found = false;
  for (const std::string& e : iwc.issue().tags().evidence()) {
    if (e.rfind("label:module: cuda -> ", 0) == 0) found = true;
  }
  EXPECT_TRUE(found) << iwc.issue().tags().DebugString();
}

TEST(TaxonomyTaggerTest, BadFilesAreNamed) {
  auto missing = TaxonomyTagger::Create("/nonexistent/tax.toml", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/tax.toml"), std::string::npos);
  auto bad = TaxonomyTagger::FromText("name = 3\n[[kind", "bad.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.toml"), std::string::npos);
}

TEST(TaggedDocumentTest, TagTermsArePresent) {
  auto tagger = DefaultTagger();
  v1::IssueWithComments iwc = MakeIssue("acme/train", 3, "CUDA out of memory with Llama", 10);
  iwc.mutable_issue()->set_body("RuntimeError: CUDA out of memory. Tried to allocate 2 GiB.");
  tagger->Tag(&iwc);
  const Xapian::Document doc = index::BuildDocument(iwc);
  const v1::Tags& tags = iwc.issue().tags();
  EXPECT_TRUE(HasTerm(doc, "XKbug"));
  EXPECT_TRUE(HasTerm(doc, "XTH" + tags.theme()));
  EXPECT_TRUE(HasTerm(doc, "XSTbug.memory.oom"));
  EXPECT_TRUE(HasTerm(doc, "XLtrue"));
  EXPECT_TRUE(HasTerm(doc, "XKWllama"));
  EXPECT_TRUE(HasTerm(doc, "XTXllm-dl/1"));
  // An untagged issue has no tag terms at all.
  const Xapian::Document plain = index::BuildDocument(MakeIssue("acme/train", 4, "x", 1));
  for (const std::string& term : Terms(plain)) {
    EXPECT_NE(term.rfind("XTX", 0), 0u) << term;
    EXPECT_NE(term.rfind("XL", 0), 0u) << term;
  }
}

// A taxonomy derived from the default one whose version and llm keywords differ.
std::string EditedTaxonomy() {
  std::string text(EmbeddedTaxonomyText());
  const std::string version = "version = 1";
  const size_t at = text.find(version);
  EXPECT_NE(at, std::string::npos);
  text.replace(at, version.size(), "version = 2");
  const std::string llm = "terms = [\"llm\",";
  const size_t llm_at = text.find(llm);
  EXPECT_NE(llm_at, std::string::npos);
  text.replace(llm_at, llm.size(), "terms = [\"llm\", \"widget\",");
  return text;
}

TEST(RetaggerTest, RetagsEveryDocumentAfterATaxonomyChange) {
  auto v1_tagger = DefaultTagger();
  auto v2 = TaxonomyTagger::FromText(EditedTaxonomy(), "edited.toml");
  ASSERT_TRUE(v2.ok()) << v2.status();
  ASSERT_NE((*v2)->Fingerprint(), v1_tagger->Fingerprint());

  IndexWriterOptions options;
  options.tagger = v1_tagger.get();
  auto writer = IndexWriter::Open(":memory:", options);
  ASSERT_TRUE(writer.ok());
  std::vector<v1::ChangeEvent> events;
  constexpr int kDocs = 23;
  for (int i = 1; i <= kDocs; ++i) {
    events.push_back(Upsert(i, MakeIssue("acme/app", i, "the widget breaks", 10)));
  }
  ASSERT_TRUE((*writer)->Apply(Batch("s", kDocs, events)).ok());
  {
    Retagger first((std::vector<IndexWriter*>{writer->get()}), v1_tagger.get());
    auto needed = first.Prepare();
    ASSERT_TRUE(needed.ok());
    EXPECT_TRUE(*needed);  // nothing recorded yet
    ASSERT_TRUE(first.Run().ok());
    auto again = Retagger(std::vector<IndexWriter*>{writer->get()}, v1_tagger.get()).Prepare();
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(*again);
  }
  auto before = (*writer)->Lookup(Slug("acme/app"), 5);
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->issue().tags().llm());
  EXPECT_EQ(before->issue().tags().taxonomy(), "llm-dl/1");

  std::vector<RetagProgress> reports;
  RetaggerOptions retag_options;
  retag_options.batch_size = 5;
  retag_options.on_progress = [&](const RetagProgress& p) { reports.push_back(p); };
  Retagger retagger({writer->get()}, v2->get(), retag_options);
  ASSERT_TRUE(retagger.Run().ok());
  const RetagProgress done = retagger.Progress();
  EXPECT_EQ(done.done, kDocs);
  EXPECT_EQ(done.total, kDocs);
  EXPECT_FALSE(done.running);
  ASSERT_GE(reports.size(), 5u);  // ceil(23 / 5) batches
  EXPECT_EQ(reports.front().done, 5);

  for (int i = 1; i <= kDocs; ++i) {
    auto after = (*writer)->Lookup(Slug("acme/app"), i);
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(after->issue().tags().taxonomy(), "llm-dl/2");
    EXPECT_TRUE(after->issue().tags().llm());
  }
  EXPECT_EQ((*writer)->DocumentCount(), kDocs);
  EXPECT_EQ(*(*writer)->GetMetadata(index::kTaggerMetadataKey), (*v2)->Fingerprint());
  EXPECT_EQ(*(*writer)->GetMetadata(kRetagCursorKey), "");
}

TEST(RetaggerTest, InterruptedRetagResumesAndSearchesSeeCommittedBatches) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("retag_test_" + std::to_string(getpid())))
          .string();
  std::filesystem::remove_all(dir);
  auto v1_tagger = DefaultTagger();
  auto v2 = TaxonomyTagger::FromText(EditedTaxonomy(), "edited.toml");
  ASSERT_TRUE(v2.ok());
  constexpr int kDocs = 12;
  {
    IndexWriterOptions options;
    options.tagger = v1_tagger.get();
    auto writer = IndexWriter::Open(dir, options);
    ASSERT_TRUE(writer.ok()) << writer.status();
    std::vector<v1::ChangeEvent> events;
    for (int i = 1; i <= kDocs; ++i) {
      events.push_back(Upsert(i, MakeIssue("acme/app", i, "the widget breaks", 10)));
    }
    ASSERT_TRUE((*writer)->Apply(Batch("s", kDocs, events)).ok());
    ASSERT_TRUE((*writer)->CommitMetadata({{index::kTaggerMetadataKey,
                                            v1_tagger->Fingerprint()}}).ok());
  }
  // The child re-tags one batch of 4 and crashes after that commit.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int commits = 0;
    IndexWriterOptions options;
    options.after_commit = [&](const std::string&) {
      // Commit 1 records the plan; commit 2 is the first batch.
      if (++commits == 2) _exit(0);
    };
    auto writer = IndexWriter::Open(dir, options);
    if (!writer.ok()) _exit(3);
    RetaggerOptions retag_options;
    retag_options.batch_size = 4;
    Retagger retagger({writer->get()}, v2->get(), retag_options);
    (void)retagger.Run();
    _exit(4);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus));
  ASSERT_EQ(WEXITSTATUS(wstatus), 0);

  {
    // A reader sees the committed batch: 4 documents with the new taxonomy, the rest old.
    Xapian::Database reader(dir);
    EXPECT_EQ(reader.get_termfreq("XTXllm-dl/2"), 4u);
    EXPECT_EQ(reader.get_termfreq("XTXllm-dl/1"), static_cast<unsigned>(kDocs - 4));
    TaggingStatus status = ReadTaggingStatus(dir);
    EXPECT_TRUE(status.retag.running);
    EXPECT_EQ(status.retag.done, 4);
    EXPECT_EQ(status.retag.total, kDocs);
  }
  {
    auto writer = IndexWriter::Open(dir);
    ASSERT_TRUE(writer.ok());
    Retagger retagger({writer->get()}, v2->get());
    ASSERT_TRUE(retagger.Run().ok());
    EXPECT_EQ(retagger.Progress().done, kDocs);
  }
  Xapian::Database reader(dir);
  EXPECT_EQ(reader.get_termfreq("XTXllm-dl/2"), static_cast<unsigned>(kDocs));
  EXPECT_EQ(reader.get_doccount(), static_cast<unsigned>(kDocs));
  TaggingStatus status = ReadTaggingStatus(dir);
  EXPECT_FALSE(status.retag.running);
  EXPECT_EQ(status.tagger, (*v2)->Fingerprint());
  std::filesystem::remove_all(dir);
}

TEST(RetaggerTest, EmptyIndexJustRecordsTheFingerprint) {
  auto tagger = DefaultTagger();
  auto writer = IndexWriter::Open(":memory:");
  ASSERT_TRUE(writer.ok());
  Retagger retagger({writer->get()}, tagger.get());
  auto needed = retagger.Prepare();
  ASSERT_TRUE(needed.ok());
  EXPECT_FALSE(*needed);
  EXPECT_EQ(*(*writer)->GetMetadata(index::kTaggerMetadataKey), tagger->Fingerprint());
}

}  // namespace
}  // namespace issuescope::indexer
