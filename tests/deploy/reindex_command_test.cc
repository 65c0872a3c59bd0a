// `issuescope reindex` on a temporary one-machine index: re-tags every stored issue after a
// taxonomy change, does nothing the second time, and refuses while a writer holds the index.
#include "deploy/cli/reindex_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/index_schema.h"
#include "gtest/gtest.h"
#include "indexer/embedded_taxonomy.h"
#include "indexer/index_writer.h"
#include "indexer/taxonomy_tagger.h"
#include "tests/indexer/test_issues.h"
#include "xapian.h"

namespace issuescope::cli {
namespace {

using indexer::testing::Batch;
using indexer::testing::MakeIssue;
using indexer::testing::Upsert;

class ReindexCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "reindex_XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    auto tagger = indexer::TaxonomyTagger::Create("", "");
    ASSERT_TRUE(tagger.ok());
    indexer::IndexWriterOptions options;
    options.tagger = tagger->get();
    auto writer = indexer::IndexWriter::Open(dir_ + "/index", options);
    ASSERT_TRUE(writer.ok()) << writer.status();
    std::vector<v1::ChangeEvent> events;
    for (int i = 1; i <= kDocs; ++i) {
      events.push_back(Upsert(i, MakeIssue("acme/app", i, "the widget breaks", 10)));
    }
    ASSERT_TRUE((*writer)->Apply(Batch("s", kDocs, events)).ok());
    ASSERT_TRUE((*writer)->CommitMetadata({{index::kTaggerMetadataKey,
                                            (*tagger)->Fingerprint()}}).ok());
    // Taxonomy v2: the same file with another version and "widget" as an llm keyword.
    std::string text(indexer::EmbeddedTaxonomyText());
    text.replace(text.find("version = 1"), 11, "version = 2");
    text.replace(text.find("terms = [\"llm\","), 15, "terms = [\"llm\", \"widget\",");
    taxonomy_ = dir_ + "/v2.toml";
    std::ofstream(taxonomy_) << text;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Run runs the command and returns what it printed.
  absl::Status Run(const ReindexCommandOptions& options, std::string* output) {
    std::FILE* out = std::tmpfile();
    absl::Status status = RunReindex(options, out);
    std::rewind(out);
    char buf[4096];
    output->clear();
    while (size_t n = std::fread(buf, 1, sizeof(buf), out)) output->append(buf, n);
    std::fclose(out);
    return status;
  }

  static constexpr int kDocs = 7;
  std::string dir_;
  std::string taxonomy_;
};

TEST_F(ReindexCommandTest, RetagsStoredIssuesWithTheNewTaxonomy) {
  ReindexCommandOptions options;
  options.data_dir = dir_;
  options.taxonomy = taxonomy_;
  options.batch_size = 3;
  std::string output;
  ASSERT_TRUE(Run(options, &output).ok()) << output;
  EXPECT_NE(output.find("re-tagging 7 documents"), std::string::npos) << output;
  EXPECT_NE(output.find("re-tagged 7 / 7"), std::string::npos) << output;
  EXPECT_NE(output.find("re-tagged 7 documents with llm-dl/2"), std::string::npos) << output;
  {
    Xapian::Database db(dir_ + "/index");
    EXPECT_EQ(db.get_doccount(), static_cast<unsigned>(kDocs));
    EXPECT_EQ(db.get_termfreq("XTXllm-dl/2"), static_cast<unsigned>(kDocs));
    EXPECT_EQ(db.get_termfreq("XKWwidget"), static_cast<unsigned>(kDocs));
    EXPECT_EQ(db.get_termfreq("XLtrue"), static_cast<unsigned>(kDocs));
  }
  // Same taxonomy again: nothing to do.
  ASSERT_TRUE(Run(options, &output).ok());
  EXPECT_NE(output.find("nothing to do"), std::string::npos) << output;
}

// An index whose documents were written in an older free-text scheme (here: the scheme key
// removed, and one document stripped of its all-text terms, as the per-field scheme had none)
// is rebuilt by reindex even with an unchanged taxonomy; then plain words find it again.
TEST_F(ReindexCommandTest, RebuildsDocumentsOfAnOlderTextScheme) {
  {
    Xapian::WritableDatabase db(dir_ + "/index", Xapian::DB_OPEN);
    EXPECT_EQ(db.get_metadata(index::kTextSchemeKey), index::kTextScheme);
    db.set_metadata(index::kTextSchemeKey, "");
    Xapian::Document doc = db.get_document(1);
    doc.remove_term("widget");
    doc.remove_term("Zwidget");
    db.replace_document(1, doc);
    db.commit();
    EXPECT_EQ(db.get_termfreq("Zwidget"), static_cast<Xapian::doccount>(kDocs - 1));
  }
  ReindexCommandOptions options;
  options.data_dir = dir_;
  std::string output;
  ASSERT_TRUE(Run(options, &output).ok()) << output;
  EXPECT_NE(output.find("re-tagged 7"), std::string::npos) << output;
  Xapian::Database db(dir_ + "/index");
  EXPECT_EQ(db.get_metadata(index::kTextSchemeKey), index::kTextScheme);
  EXPECT_EQ(db.get_termfreq("Zwidget"), static_cast<Xapian::doccount>(kDocs));
  // Current now: a second run has nothing to do.
  ASSERT_TRUE(Run(options, &output).ok()) << output;
  EXPECT_NE(output.find("nothing to do"), std::string::npos) << output;
}

TEST_F(ReindexCommandTest, RefusesWhileAnIndexerHoldsTheIndex) {
  auto live = indexer::IndexWriter::Open(dir_ + "/index");
  ASSERT_TRUE(live.ok());
  ReindexCommandOptions options;
  options.data_dir = dir_;
  options.taxonomy = taxonomy_;
  std::string output;
  absl::Status status = Run(options, &output);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("running indexer"), std::string::npos) << status;
}

TEST_F(ReindexCommandTest, MissingIndexAndBadTaxonomyAreNamed) {
  ReindexCommandOptions options;
  options.data_dir = dir_ + "/nowhere";
  std::string output;
  absl::Status missing = Run(options, &output);
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("no index"), std::string::npos);
  options.data_dir = dir_;
  options.taxonomy = dir_ + "/absent.toml";
  absl::Status bad = Run(options, &output);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("absent.toml"), std::string::npos);
}

}  // namespace
}  // namespace issuescope::cli
