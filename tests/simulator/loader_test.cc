// Tests of the JSONL corpus loader: a good file is served faithfully; every bad line yields an
// error naming the file, the line and the field.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/simulator/corpus_loader.h"
#include "tests/simulator/sim_test_util.h"

namespace issuescope::sim {
namespace {

const char kGood[] =
    R"({"repo":"acme/widgets","number":1,"title":"CUDA OOM","body":"boom","state":"open",)"
    R"("state_reason":null,"labels":["bug"],"user":"alice","assignees":["bob"],)"
    R"("created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-02T00:00:00Z","closed_at":null,)"
    R"("is_pull_request":false,"comments":[{"id":7,"user":"bob","body":"same here",)"
    R"("created_at":"2024-01-01T12:00:00Z","updated_at":"2024-01-01T12:00:00Z"}]})"
    "\n\n"
    R"({"repo":"acme/widgets","number":2,"title":"Fix it","body":"patch","state":"closed",)"
    R"("state_reason":null,"labels":[],"user":"bob","assignees":[],)"
    R"("created_at":"2024-02-01T00:00:00Z","updated_at":"2024-02-03T00:00:00Z",)"
    R"("closed_at":"2024-02-03T00:00:00Z","is_pull_request":true,"comments":[]})"
    "\n";

std::string WriteTemp(const std::string& content) {
  char name[] = "/tmp/simulator_loader_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << content;
  return name;
}

TEST(LoaderTest, LoadsAndServesAFile) {
  const std::string path = WriteTemp(kGood);
  SimulatorOptions o;
  o.corpus_file = path;
  auto sim = testing::StartOrDie(o);
  ASSERT_NE(sim, nullptr);
  testing::Reply r = testing::Get(*sim, "/repos/acme/widgets/issues?state=all&direction=asc");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json.size(), 2u);
  EXPECT_EQ(r.json[0]["title"], "CUDA OOM");
  EXPECT_EQ(r.json[0]["labels"][0]["name"], "bug");
  EXPECT_EQ(r.json[0]["assignee"]["login"], "bob");
  EXPECT_EQ(r.json[0]["comments"], 1);
  EXPECT_EQ(r.json[0]["updated_at"], "2024-01-02T00:00:00Z");
  EXPECT_FALSE(r.json[0].contains("pull_request"));
  EXPECT_TRUE(r.json[1].contains("pull_request"));
  EXPECT_EQ(r.json[1]["state"], "closed");
  EXPECT_EQ(r.json[1]["closed_at"], "2024-02-03T00:00:00Z");
  testing::Reply c = testing::Get(*sim, "/repos/acme/widgets/issues/1/comments");
  ASSERT_EQ(c.status, 200);
  ASSERT_EQ(c.json.size(), 1u);
  EXPECT_EQ(c.json[0]["id"], 7);
  EXPECT_EQ(c.json[0]["body"], "same here");
  // Simulator time starts one hour after the newest timestamp of the corpus.
  EXPECT_EQ(r.Header("Date"), "Sat, 03 Feb 2024 01:00:00 GMT");
  std::remove(path.c_str());
}

TEST(LoaderTest, ErrorsNameFileLineAndField) {
  const std::string base =
      R"("repo":"a/b","title":"t","state":"open","user":"u",)"
      R"("created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z")";
  struct Case {
    std::string line2;
    std::string field;
  };
  const Case cases[] = {
      {"{not json", "(line)"},
      {"[1,2]", "(line)"},
      {"{" + base + "}", "number"},
      {R"({"number":2,"title":"t","state":"open","user":"u"})", "repo"},
      {R"({"repo":"nope","number":2})", "repo"},
      {"{" + base + R"(,"number":-3})", "number"},
      {"{" + base + R"(,"number":1})", "number"},  // repeats line 1
      {R"({"repo":"a/b","number":2,"title":"t","state":"maybe","user":"u"})", "state"},
      {R"({"repo":"a/b","number":2,"title":5})", "title"},
      {R"({"repo":"a/b","number":2,"title":"t","state":"open","user":"u",)"
       R"("created_at":"yesterday","updated_at":"2024-01-01T00:00:00Z"})",
       "created_at"},
      {R"({"repo":"a/b","number":2,"title":"t","state":"open","user":"u",)"
       R"("created_at":"2024-02-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"})",
       "updated_at"},
      {"{" + base + R"(,"number":2,"labels":"bug"})", "labels"},
      {"{" + base + R"(,"number":2,"state_reason":"bored"})", "state_reason"},
      {"{" + base + R"(,"number":2,"is_pull_request":"yes"})", "is_pull_request"},
      {"{" + base + R"(,"number":2,"comments":[{"id":1,"user":"x","body":"b"}]})",
       "comments[0].created_at"},
      {"{" + base + R"(,"number":2,"comments":[{"user":"x"}]})", "comments[0].id"},
      {"{" + base + R"(,"number":2,"comments":[{"id":9,"user":"x","body":"b",)"
                    R"("created_at":"2024-01-01T00:00:00Z"}]})",
       "comments[0].id"},  // repeats line 1's comment id
  };
  const std::string line1 = "{" + base +
                            R"(,"number":1,"comments":[{"id":9,"user":"x","body":"b",)"
                            R"("created_at":"2024-01-01T00:00:00Z"}]})";
  for (const Case& c : cases) {
    std::istringstream in(line1 + "\n" + c.line2 + "\n");
    auto corpus = LoadCorpusStream(in, "corpus.jsonl");
    ASSERT_FALSE(corpus.ok()) << c.line2;
    EXPECT_EQ(corpus.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string want = absl::StrCat("corpus.jsonl:2: field '", c.field, "'");
    EXPECT_TRUE(absl::StartsWith(corpus.status().message(), want))
        << "line: " << c.line2 << "\nwant prefix: " << want << "\ngot: " << corpus.status();
  }
}

TEST(LoaderTest, MissingFileIsNotFoundAndStartFails) {
  SimulatorOptions o;
  o.corpus_file = "/nonexistent/corpus.jsonl";
  auto sim = TrackerSimulator::Start(o);
  ASSERT_FALSE(sim.ok());
  EXPECT_EQ(sim.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(sim.status().message(), "/nonexistent/corpus.jsonl"));
}

}  // namespace
}  // namespace issuescope::sim
