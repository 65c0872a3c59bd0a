// Every cut of text ends on a character boundary (issue 16, defect 16): the shared helper
// (common/text_tokens.h Utf8Boundary / Utf8Prefix), and each place that cuts text that reaches a
// protobuf string field, a term or a snippet — the taxonomy matcher's 64 KiB scan and its
// 80-byte pattern cues (Tags.evidence), boolean terms and facet values cut at 240 bytes, the
// snippet windows and leading excerpts — fed 2-, 3- and 4-byte characters (Latin, Chinese,
// emoji) so that each cut falls at every offset inside a character. Strict protobuf clients
// (Python's) refuse a message whose string fields are not UTF-8.
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/index_document.h"
#include "common/index_facets.h"
#include "common/text_tokens.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "indexer/taxonomy.h"
#include "indexer/taxonomy_matcher.h"
#include "indexer/taxonomy_tagger.h"
#include "issuescope/v1/model.pb.h"
#include "search/snippet.h"

namespace issuescope {
namespace {

// One character of each length: 2 bytes (é), 3 bytes (中), 4 bytes (😀).
const std::vector<std::string> kWide = {"\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80"};

// Repeat returns `s` `n` times.
std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Shifted returns `lead` ASCII letters followed by `n` copies of `wide`: with lead 0..3 a cut at
// a fixed byte offset lands at every position inside a character.
std::string Shifted(size_t lead, const std::string& wide, size_t n) {
  return std::string(lead, 'x') + Repeat(wide, n);
}

TEST(Utf8HelperTest, BoundaryAtEveryOffset) {
  const std::string text = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80z\xe6\x96\x87";
  ASSERT_TRUE(IsValidUtf8(text));
  const std::vector<size_t> boundaries = {0, 1, 3, 6, 10, 11, 14};
  for (size_t at = 0; at <= text.size() + 2; ++at) {
    size_t want = 0;
    for (size_t b : boundaries) {
      if (b <= at) want = b;
    }
    EXPECT_EQ(Utf8Boundary(text, at), want) << "at " << at;
    const absl::string_view prefix = Utf8Prefix(text, at);
    EXPECT_EQ(prefix.size(), want);
    EXPECT_TRUE(IsValidUtf8(prefix)) << "prefix of " << at << " bytes";
  }
}

TEST(Utf8HelperTest, ValidityChecker) {
  struct Case {
    std::string text;
    bool valid;
  };
  const std::vector<Case> cases = {
      {"", true},
      {"plain ascii", true},
      {"caf\xc3\xa9 \xe5\x86\x85\xe5\xad\x98 \xf0\x9f\x98\x80", true},
      {"\xef\xbf\xbd", true},              // U+FFFD itself
      {"\xf4\x8f\xbf\xbf", true},          // U+10FFFF
      {"\x80", false},                     // lone continuation byte
      {"\xe4\xb8", false},                 // cut 3-byte character
      {"\xf0\x9f\x98", false},             // cut emoji
      {"a\xc3", false},                    // cut at the end
      {"\xc0\x80", false},                 // overlong NUL
      {"\xe0\x80\xaf", false},             // overlong '/'
      {"\xed\xa0\x80", false},             // surrogate
      {"\xf4\x90\x80\x80", false},         // past U+10FFFF
      {"\xff", false},
  };
  for (const Case& c : cases) EXPECT_EQ(IsValidUtf8(c.text), c.valid) << absl::CEscape(c.text);
}

// The matcher scans the first kMaxScanBytes of a text; a pattern cue is the text it matched,
// at most 80 bytes. Both cuts used to split characters.
TEST(Utf8CutsTest, TaxonomyMatcherCuesAreValid) {
  auto tax = taxonomy::ParseTaxonomy(R"(
name = "utf8"
version = 1
[[kind]]
id = "bug"
title = "Bug"
patterns = ['x.{0,200}', 'tail.{0,20}']
)",
                                     "utf8.toml");
  ASSERT_TRUE(tax.ok()) << tax.status();
  taxonomy::TaxonomyMatcher matcher(&*tax);
  const size_t scan = taxonomy::TaxonomyMatcher::kMaxScanBytes;
  for (const std::string& wide : kWide) {
    for (size_t lead = 1; lead <= 4; ++lead) {
      // Pattern cue cut at 80 bytes.
      for (const taxonomy::CueMatch& m : matcher.Match(Shifted(lead, wide, 60))) {
        EXPECT_TRUE(IsValidUtf8(m.cue)) << absl::CEscape(m.cue);
        EXPECT_LE(m.cue.size(), 80u);
        EXPECT_GT(m.cue.size(), 76u) << "cut no more than one character short";
      }
      // The scan's cut at 64 KiB, inside a character, just after "tail".
      std::string text(scan - 8 - lead, ' ');
      text += "tail";
      text += Repeat(wide, 10);
      bool found = false;
      for (const taxonomy::CueMatch& m : matcher.Match(text)) {
        if (m.cue.rfind("tail", 0) != 0) continue;
        found = true;
        EXPECT_TRUE(IsValidUtf8(m.cue)) << absl::CEscape(m.cue);
      }
      EXPECT_TRUE(found) << "lead " << lead;
    }
  }
}

TEST(Utf8CutsTest, TaggerEvidenceIsValid) {
  auto tagger = indexer::TaxonomyTagger::FromText(R"(
name = "utf8"
version = 1
[[kind]]
id = "bug"
title = "Bug"
patterns = ['x.{0,200}']
)",
                                                  "utf8.toml");
  ASSERT_TRUE(tagger.ok()) << tagger.status();
  for (const std::string& wide : kWide) {
    for (size_t lead = 1; lead <= 4; ++lead) {
      v1::IssueWithComments iwc;
      iwc.mutable_issue()->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
      iwc.mutable_issue()->mutable_repo()->set_owner("o");
      iwc.mutable_issue()->mutable_repo()->set_name("r");
      iwc.mutable_issue()->set_number(1);
      iwc.mutable_issue()->set_title(Shifted(lead, wide, 60));
      (*tagger)->Tag(&iwc);
      const v1::Tags& tags = iwc.issue().tags();
      ASSERT_GT(tags.evidence_size(), 0);
      for (const std::string& e : tags.evidence()) {
        EXPECT_TRUE(IsValidUtf8(e)) << absl::CEscape(e);
      }
      v1::Tags parsed;
      ASSERT_TRUE(parsed.ParseFromString(tags.SerializeAsString()));
    }
  }
}

// Boolean terms (labels, authors, …) are cut at 240 bytes, and facet values with them.
TEST(Utf8CutsTest, TermsAndFacetValuesAreValid) {
  for (const std::string& wide : kWide) {
    for (size_t lead = 0; lead < 4; ++lead) {
      v1::IssueWithComments iwc;
      v1::Issue* issue = iwc.mutable_issue();
      issue->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
      issue->mutable_repo()->set_owner("o");
      issue->mutable_repo()->set_name("r");
      issue->set_number(1);
      issue->set_title("t");
      issue->add_labels(Shifted(lead, wide, 120));
      issue->set_author(Shifted(lead, wide, 120));
      issue->mutable_created_at()->set_seconds(1700000000);
      issue->mutable_updated_at()->set_seconds(1700000000);
      const Xapian::Document doc = index::BuildDocument(iwc);
      for (auto t = doc.termlist_begin(); t != doc.termlist_end(); ++t) {
        EXPECT_TRUE(IsValidUtf8(*t)) << absl::CEscape(*t);
      }
      const index::FacetValues values = index::IssueFacetValues(iwc);
      for (const auto& field : values) {
        for (const std::string& v : field) EXPECT_TRUE(IsValidUtf8(v)) << absl::CEscape(v);
      }
    }
  }
}

TEST(Utf8CutsTest, SnippetsAreValid) {
  for (const std::string& wide : kWide) {
    // Leading excerpts of every length.
    const std::string text = Shifted(1, wide, 40) + " " + Repeat(wide, 40);
    for (size_t length = 0; length <= text.size(); ++length) {
      const std::string excerpt = search::LeadingExcerpt(text, length);
      EXPECT_TRUE(IsValidUtf8(excerpt)) << length << ": " << absl::CEscape(excerpt);
    }
    // Snippet windows in long sections (cut to 1 KiB around the match), the word at every
    // offset.
    for (size_t lead = 0; lead < 4; ++lead) {
      v1::IssueWithComments iwc;
      iwc.mutable_issue()->set_title("title");
      iwc.mutable_issue()->set_body(absl::StrCat(Shifted(lead, wide, 300), " needle ",
                                                 Shifted(lead, wide, 600)));
      iwc.add_comments()->set_body(
          absl::StrCat(Repeat(wide, 200), " needle ", Repeat(wide, 500)));
      search::SnippetTerms terms;
      terms.words.insert("needle");
      for (size_t length : {20u, 57u, 200u, 333u}) {
        const std::string snippet = search::MakeSnippet(terms, true, iwc, length);
        EXPECT_THAT(snippet, ::testing::HasSubstr("needle"));
        EXPECT_TRUE(IsValidUtf8(snippet)) << absl::CEscape(snippet);
        const std::string leading = search::MakeSnippet(terms, false, iwc, length);
        EXPECT_TRUE(IsValidUtf8(leading)) << absl::CEscape(leading);
      }
    }
  }
}

}  // namespace
}  // namespace issuescope
