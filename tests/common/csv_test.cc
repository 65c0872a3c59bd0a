// The one CSV reader and writer (common/csv.h).
#include "common/csv.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace issuescope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CsvQuoteTest, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvQuote("plain text"), "plain text");
  EXPECT_EQ(CsvQuote(""), "");
  EXPECT_EQ(CsvQuote("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvQuote("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvQuote("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvQuote("cr\r"), "\"cr\r\"");
}

TEST(ParseCsvRowsTest, RecordsFieldsAndTheLinesTheyStartOn) {
  const std::string text =
      "\xEF\xBB\xBFtitle,body\r\n"
      "\"Multi\nline\",\"with \"\"quotes\"\", and a comma\"\n"
      "\n"
      "   \n"
      "last,\n";
  auto rows = ParseCsvRows(text, "in.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_THAT((*rows)[0].fields, ElementsAre("title", "body"));
  EXPECT_EQ((*rows)[0].line, 1);
  EXPECT_THAT((*rows)[1].fields, ElementsAre("Multi\nline", "with \"quotes\", and a comma"));
  EXPECT_EQ((*rows)[1].line, 2);
  EXPECT_THAT((*rows)[2].fields, ElementsAre("last", ""));
  EXPECT_EQ((*rows)[2].line, 6);
}

TEST(ParseCsvRowsTest, RoundTripsWhatCsvQuoteWrites) {
  const std::vector<std::string> cells = {"a", "b,c", "\"q\"", "x\r\ny", ""};
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + CsvQuote(cells[i]);
  auto rows = ParseCsvRows(line + "\r\n", "rt.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].fields, cells);
}

TEST(ParseCsvRowsTest, AnUnterminatedQuoteNamesTheFileAndLine) {
  auto rows = ParseCsvRows("a,b\nc,\"never\nclosed\n", "bad.csv");
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(), HasSubstr("bad.csv:2: unterminated quoted field"));
}

TEST(ParseCsvRowsTest, EmptyTextHasNoRows) {
  auto rows = ParseCsvRows("", "empty.csv");
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

}  // namespace
}  // namespace issuescope
