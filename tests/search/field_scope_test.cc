// The free-text scheme's field scoping (common/index_text.h): all text is one unprefixed
// posting list per word, and `in:body` / `in:comments` check positions against each document's
// field bounds. These cases pin the edges: a word in the title and comments but not the body, a
// phrase that would span two fields or two comments, stems and wildcards inside a field, CJK,
// negation, a document written without bounds, and a sharded database.
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "common/index_document.h"
#include "common/index_schema.h"
#include "common/index_text.h"
#include "gtest/gtest.h"
#include "search/query_parser.h"
#include "tests/search/search_fixture.h"
#include "xapian.h"

namespace issuescope::index {
namespace {

using search::testing::IssueSpec;
using search::testing::MakeIssue;

IssueSpec Spec(int64_t number, std::string title, std::string body,
               std::vector<std::string> comments) {
  IssueSpec s;
  s.tracker = v1::TRACKER_GITHUB;
  s.owner = "org";
  s.name = "repo";
  s.number = number;
  s.title = std::move(title);
  s.body = std::move(body);
  s.state = v1::ISSUE_STATE_OPEN;
  s.pr = false;
  s.author = "someone";
  s.created = "2024-06-01T00:00:00Z";
  s.updated = "2024-06-02T00:00:00Z";
  s.comment_count = static_cast<int>(comments.size());
  s.comments = std::move(comments);
  return s;
}

std::vector<IssueSpec> Issues() {
  return {
      // 1: "zebra" in the title and a comment, not in the body.
      Spec(1, "zebra crossing", "nothing to see here", {"a zebra again"}),
      // 2: "stripes" ends the title, "zebra" starts the body: the phrase "stripes zebra" spans
      // the two fields and must not match anywhere.
      Spec(2, "black stripes", "zebra herd leaking memory", {}),
      // 3: a phrase split over two comments must not match either.
      Spec(3, "plain", "plain body", {"the kernel", "crashed hard", "kernel crashed twice"}),
      // 4: CJK in the body, a stemmed form in the comments.
      Spec(4, "显存", "训练时显存泄漏", {"it keeps leaking tensors"}),
  };
}

Xapian::WritableDatabase Build(const std::vector<IssueSpec>& specs) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  for (const IssueSpec& s : specs) db.add_document(BuildDocument(MakeIssue(s)));
  return db;
}

std::set<int64_t> Find(const Xapian::Database& db, TextField field, const std::string& text) {
  // As the search service parses it: the group's text scoped with `in:`.
  static const char* const kNames[] = {"", "title", "body", "comments", "code", "logs"};
  const std::string query =
      field == TextField::kAll ? text : "(" + text + ") in:" + kNames[static_cast<int>(field)];
  absl::StatusOr<search::ParsedQuery> parsed = search::QueryParser(db).Parse(query);
  EXPECT_TRUE(parsed.ok()) << query << ": " << parsed.status();
  if (!parsed.ok()) return {};
  Xapian::Enquire enquire(db);
  enquire.set_query(parsed->query);
  if (getenv("DEBUG_SCOPE")) std::cerr << query << " => " << parsed->query.get_description() << "\n";
  std::set<int64_t> numbers;
  Xapian::MSet mset = enquire.get_mset(0, 100);
  for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) {
    numbers.insert(ReadDocument(it.get_document())->issue().number());
  }
  return numbers;
}

TEST(FieldScopeTest, WordsAreFoundInTheirField) {
  Xapian::WritableDatabase db = Build(Issues());
  EXPECT_EQ(Find(db, TextField::kAll, "zebra"), (std::set<int64_t>{1, 2}));
  EXPECT_EQ(Find(db, TextField::kTitle, "zebra"), (std::set<int64_t>{1}));
  EXPECT_EQ(Find(db, TextField::kBody, "zebra"), (std::set<int64_t>{2}));
  EXPECT_EQ(Find(db, TextField::kComments, "zebra"), (std::set<int64_t>{1}));
  EXPECT_EQ(Find(db, TextField::kBody, "nothing"), (std::set<int64_t>{1}));
  EXPECT_EQ(Find(db, TextField::kComments, "nothing"), (std::set<int64_t>{}));
  // Every word of an AND must be inside the field.
  EXPECT_EQ(Find(db, TextField::kBody, "zebra memory"), (std::set<int64_t>{2}));
  EXPECT_EQ(Find(db, TextField::kComments, "zebra memory"), (std::set<int64_t>{}));
}

// `in:code` and `in:logs` search the code blocks and the logs (with their exception lines) of
// the body and the comments, recognised by common/issue_sections.h.
TEST(FieldScopeTest, CodeAndLogsAreSearchableOnTheirOwn) {
  Xapian::WritableDatabase db = Build({
      Spec(10, "loader fails", "I call it like this:\n\n```python\nloader = make_loader(pin_memory=True)\n```\n\nand "
               "pin memory is slow.", {"```\nTraceback (most recent call last):\n  File \"a.py\", line 3\n"
               "RuntimeError: pinned memory exhausted\n```"}),
      Spec(11, "pin memory docs", "The docs about pin_memory are unclear.", {}),
  });
  EXPECT_EQ(Find(db, TextField::kCode, "make_loader"), (std::set<int64_t>{10}));
  EXPECT_EQ(Find(db, TextField::kCode, "pin_memory"), (std::set<int64_t>{10}));
  EXPECT_EQ(Find(db, TextField::kAll, "pin_memory"), (std::set<int64_t>{10, 11}));
  EXPECT_EQ(Find(db, TextField::kLogs, "exhausted"), (std::set<int64_t>{10}));
  EXPECT_EQ(Find(db, TextField::kLogs, "\"pinned memory exhausted\""), (std::set<int64_t>{10}));
  EXPECT_EQ(Find(db, TextField::kLogs, "slow"), (std::set<int64_t>{}));
  EXPECT_EQ(Find(db, TextField::kCode, "unclear"), (std::set<int64_t>{}));
  EXPECT_EQ(Find(db, TextField::kLogs, "make_loader"), (std::set<int64_t>{}));
}

TEST(FieldScopeTest, PhrasesNeverSpanTwoFieldsOrTwoComments) {
  Xapian::WritableDatabase db = Build(Issues());
  EXPECT_EQ(Find(db, TextField::kAll, "\"stripes zebra\""), (std::set<int64_t>{}));
  EXPECT_EQ(Find(db, TextField::kAll, "\"zebra herd\""), (std::set<int64_t>{2}));
  EXPECT_EQ(Find(db, TextField::kBody, "\"zebra herd\""), (std::set<int64_t>{2}));
  EXPECT_EQ(Find(db, TextField::kComments, "\"zebra herd\""), (std::set<int64_t>{}));
  EXPECT_EQ(Find(db, TextField::kAll, "\"kernel crashed\""), (std::set<int64_t>{3}));
  // Only the third comment holds the phrase; the first two end and start with its words.
  EXPECT_EQ(Find(db, TextField::kComments, "\"kernel crashed\""), (std::set<int64_t>{3}));
  EXPECT_EQ(Find(db, TextField::kComments, "\"kernel crashed hard\""), (std::set<int64_t>{}));
  EXPECT_EQ(Find(db, TextField::kBody, "\"kernel crashed\""), (std::set<int64_t>{}));
}

TEST(FieldScopeTest, StemsAndWildcardsMatchThroughTheirSurfaceForms) {
  Xapian::WritableDatabase db = Build(Issues());
  // "leaks" stems to "leak"; the body of 2 says "leaking", a comment of 4 says "leaking".
  EXPECT_EQ(Find(db, TextField::kAll, "leaks"), (std::set<int64_t>{2, 4}));
  EXPECT_EQ(Find(db, TextField::kBody, "leaks"), (std::set<int64_t>{2}));
  EXPECT_EQ(Find(db, TextField::kComments, "leaks"), (std::set<int64_t>{4}));
  EXPECT_EQ(Find(db, TextField::kBody, "zeb*"), (std::set<int64_t>{2}));
  EXPECT_EQ(Find(db, TextField::kComments, "zeb*"), (std::set<int64_t>{1}));
  EXPECT_EQ(Find(db, TextField::kComments, "tens* OR crossing"), (std::set<int64_t>{4}));
}

TEST(FieldScopeTest, CjkAndNegation) {
  Xapian::WritableDatabase db = Build(Issues());
  EXPECT_EQ(Find(db, TextField::kBody, "显存泄漏"), (std::set<int64_t>{4}));
  EXPECT_EQ(Find(db, TextField::kTitle, "显存"), (std::set<int64_t>{4}));
  EXPECT_EQ(Find(db, TextField::kComments, "显存"), (std::set<int64_t>{}));
  // Negation is scoped too: 1 and 2 have zebra somewhere, only 2 in its body.
  EXPECT_EQ(Find(db, TextField::kBody, "(herd OR nothing) -zebra"), (std::set<int64_t>{1}));
}

TEST(FieldScopeTest, ADocumentWithoutBoundsIsNotMatchedByAScopedQuery) {
  Xapian::WritableDatabase db = Build(Issues());
  Xapian::Document doc = BuildDocument(MakeIssue(Spec(9, "t", "zebra in an old document", {})));
  doc.remove_value(kTextBoundsSlot);
  db.add_document(doc);
  EXPECT_EQ(Find(db, TextField::kAll, "zebra"), (std::set<int64_t>{1, 2, 9}));
  EXPECT_EQ(Find(db, TextField::kBody, "zebra"), (std::set<int64_t>{2}));
}

TEST(FieldScopeTest, ShardedDatabasesScopeEachShard) {
  std::vector<IssueSpec> specs = Issues();
  Xapian::WritableDatabase a = Build({specs[0], specs[1]});
  Xapian::WritableDatabase b = Build({specs[2], specs[3]});
  Xapian::Database combined;
  combined.add_database(a);
  combined.add_database(b);
  EXPECT_EQ(Find(combined, TextField::kBody, "zebra OR plain"), (std::set<int64_t>{2, 3}));
  EXPECT_EQ(Find(combined, TextField::kComments, "zebra OR leaks"), (std::set<int64_t>{1, 4}));
}

TEST(FieldScopeTest, BoundsRoundTripAndRejectBadValues) {
  const TextBounds bounds{17, 4000000000u};
  std::optional<TextBounds> decoded = DecodeTextBounds(EncodeTextBounds(bounds));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->body, 17u);
  EXPECT_EQ(decoded->comments, 4000000000u);
  EXPECT_FALSE(DecodeTextBounds("").has_value());
  EXPECT_FALSE(DecodeTextBounds("123").has_value());
}

TEST(FieldScopeTest, DocumentsCarryMonthBucketTerms) {
  Xapian::WritableDatabase db = Build(Issues());
  EXPECT_EQ(db.get_termfreq(std::string(kCreatedMonthPrefix) + "2024-06"), 4u);
  EXPECT_EQ(db.get_termfreq(std::string(kUpdatedMonthPrefix) + "2024-06"), 4u);
  EXPECT_EQ(db.get_termfreq(std::string(kCreatedMonthPrefix) + "2024-07"), 0u);
}

}  // namespace
}  // namespace issuescope::index
