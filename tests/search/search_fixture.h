// A small fixture corpus for the search tests: seven issues over four trackers' repositories,
// six of them tagged with the taxonomy, indexed with index::BuildDocument and
// index::AddFacetValues (as the indexer does) into an in-memory Xapian database. Issue numbers
// are unique across the corpus, so tests compare sets of numbers.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/index_document.h"
#include "common/index_facets.h"
#include "common/index_layout.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "issuescope/v1/model.pb.h"
#include "issuescope/v1/search.pb.h"
#include "xapian.h"

namespace issuescope::search::testing {

// IssueSpec is the compact description of one fixture issue.
struct IssueSpec {
  v1::Tracker tracker;
  std::string owner, name;
  int64_t number;
  std::string title, body;
  std::vector<std::string> labels;
  v1::IssueState state;
  bool pr;
  std::string author;
  std::vector<std::string> assignees;
  std::string created, updated;  // RFC 3339
  int comment_count;
  std::vector<std::string> comments;
};

inline google::protobuf::Timestamp Ts(const std::string& rfc3339) {
  return ToProto(*ParseRfc3339(rfc3339));
}

inline v1::IssueWithComments MakeIssue(const IssueSpec& s) {
  v1::IssueWithComments iwc;
  v1::Issue* issue = iwc.mutable_issue();
  issue->mutable_repo()->set_tracker(s.tracker);
  issue->mutable_repo()->set_owner(s.owner);
  issue->mutable_repo()->set_name(s.name);
  issue->set_number(s.number);
  issue->set_key(std::to_string(s.number));
  issue->set_title(s.title);
  issue->set_body(s.body);
  issue->set_state(s.state);
  for (const auto& l : s.labels) issue->add_labels(l);
  issue->set_author(s.author);
  for (const auto& a : s.assignees) issue->add_assignees(a);
  *issue->mutable_created_at() = Ts(s.created);
  *issue->mutable_updated_at() = Ts(s.updated);
  if (s.state == v1::ISSUE_STATE_CLOSED) *issue->mutable_closed_at() = Ts(s.updated);
  issue->set_comment_count(s.comment_count);
  issue->set_is_pull_request(s.pr);
  issue->set_url("https://example.test/" + s.owner + "/" + s.name + "/issues/" +
                 std::to_string(s.number));
  for (const auto& body : s.comments) {
    v1::Comment* c = iwc.add_comments();
    *c->mutable_repo() = issue->repo();
    c->set_issue_number(s.number);
    c->set_author("commenter");
    c->set_body(body);
    *c->mutable_created_at() = Ts(s.updated);
    *c->mutable_updated_at() = Ts(s.updated);
  }
  return iwc;
}

inline std::vector<IssueSpec> Corpus() {
  using v1::ISSUE_STATE_CLOSED;
  using v1::ISSUE_STATE_OPEN;
  return {
      {v1::TRACKER_GITHUB, "pytorch", "pytorch", 1, "CUDA illegal memory access in matmul",
       "Running matmul on an A100 gives an illegal memory access error. <script>alert(1)</script>",
       {"bug", "module: cuda"}, ISSUE_STATE_OPEN, false, "alice", {"bob"},
       "2024-01-10T10:00:00Z", "2024-01-12T00:00:00Z", 2, {"Same here on H100."}},
      {v1::TRACKER_GITHUB, "pytorch", "pytorch", 2, "Leak when tensors are freed",
       "Memory grows: an illegal pattern of access to freed tensors leaks memory.", {"bug"},
       ISSUE_STATE_CLOSED, false, "bob", {}, "2024-02-01T09:00:00Z", "2024-02-20T00:00:00Z", 0,
       {}},
      {v1::TRACKER_GITHUB, "PyTorch", "PyTorch", 3, "Quantization of ARM models",
       "The quantized model will crash at load time on ARM boards.",
       {"module: quantization", "triaged"}, ISSUE_STATE_OPEN, true, "carol", {"alice"},
       "2024-03-15T12:00:00Z", "2024-03-16T00:00:00Z", 5, {}},
      {v1::TRACKER_GITHUB, "pytorch", "vision", 4, "Feature request: add resize op",
       "Please add a resize operator to transforms.", {"enhancement"}, ISSUE_STATE_OPEN, false,
       "alice", {}, "2023-12-31T23:59:59Z", "2024-01-05T00:00:00Z", 1, {}},
      {v1::TRACKER_GITHUB, "tensorflow", "tensorflow", 5, "Segfault in tf.function",
       "The program crashed with a segfault inside tf.function tracing.", {"type:bug"},
       ISSUE_STATE_CLOSED, false, "dave", {}, "2024-01-10T08:00:00Z", "2024-01-30T00:00:00Z",
       3, {"Workaround: disable XLA jit compilation and it works."}},
      {v1::TRACKER_GITEE, "mindspore", "mindspore", 6, "内存泄漏问题",
       "在训练大模型时出现内存泄漏，显存不断增长。", {"bug"}, v1::ISSUE_STATE_PROGRESSING,
       false, "erin", {}, "2024-04-01T00:00:00Z", "2024-04-02T00:00:00Z", 0, {}},
      {v1::TRACKER_GITLAB, "group", "project", 7, "Docs typo", "A typo in the docs page.", {},
       ISSUE_STATE_OPEN, false, "frank", {}, "2022-05-05T05:05:05Z", "2022-05-06T00:00:00Z", 0,
       {}},
  };
}

// TagSpec is the taxonomy tags and reactions of one fixture issue.
struct TagSpec {
  std::string kind, theme;
  std::vector<std::string> secondary, subthemes;
  bool llm;
  int reactions;
};

// TagsFor returns the tags of fixture issue `number` (issue 7 is untagged).
inline TagSpec TagsFor(int64_t number) {
  switch (number) {
    case 1: return {"bug", "bug.memory", {}, {"bug.memory.illegal-access"}, false, 5};
    case 2: return {"bug", "bug.memory", {"bug.performance"}, {"bug.memory.leak"}, true, 0};
    case 3: return {"bug", "bug.quantization", {}, {}, true, 12};
    case 4: return {"requirement", "requirement.api", {}, {}, false, 1};
    case 5: return {"bug", "bug.compiler", {}, {}, false, 3};
    case 6: return {"bug", "bug.memory", {}, {"bug.memory.leak"}, true, 0};
    default: return {"", "", {}, {}, false, 0};
  }
}

// TaggedIssue is MakeIssue plus the issue's TagsFor.
inline v1::IssueWithComments TaggedIssue(const IssueSpec& spec) {
  v1::IssueWithComments iwc = MakeIssue(spec);
  const TagSpec t = TagsFor(spec.number);
  iwc.mutable_issue()->set_reactions(t.reactions);
  if (t.kind.empty()) return iwc;
  v1::Tags* tags = iwc.mutable_issue()->mutable_tags();
  tags->set_taxonomy("llm-dl/1");
  tags->set_kind(t.kind);
  tags->set_theme(t.theme);
  for (const auto& s : t.secondary) tags->add_secondary_themes(s);
  for (const auto& s : t.subthemes) tags->add_subthemes(s);
  tags->set_llm(t.llm);
  return iwc;
}

// IndexedDocument is the document the indexer makes of an issue.
inline Xapian::Document IndexedDocument(const v1::IssueWithComments& iwc) {
  Xapian::Document doc = index::BuildDocument(iwc);
  index::AddFacetValues(iwc, &doc);
  return doc;
}

// GeneratedIssue n: one of 5 repositories ("org/repo0".."org/repo4"), words from a small
// vocabulary so that queries match many issues with different weights.
inline v1::IssueWithComments GeneratedIssue(int n) {
  static const char* kWords[] = {"cuda", "memory", "leak", "crash", "tensor", "kernel", "error",
                                 "gradient", "nan", "slow", "compile", "export", "onnx", "cache",
                                 "attention", "quantization", "segfault", "distributed"};
  constexpr int kVocabulary = sizeof(kWords) / sizeof(kWords[0]);
  auto word = [&](int i) {
    return std::string(kWords[(n * 7 + i * 13 + (n / 3) * i) % kVocabulary]);
  };
  IssueSpec s{};
  s.tracker = v1::TRACKER_GITHUB;
  s.owner = "org";
  s.name = "repo" + std::to_string(n % 5);
  s.number = n + 1;
  s.title = word(0) + " " + word(1) + " in " + word(2);
  s.body = "When I run the " + word(3) + " step the " + word(4) + " shows " + word(5) + " and " +
           word(n % 4) + " " + word(6) + ".";
  s.labels = {n % 3 == 0 ? "bug" : "question"};
  s.state = n % 4 == 0 ? v1::ISSUE_STATE_CLOSED : v1::ISSUE_STATE_OPEN;
  s.author = "user" + std::to_string(n % 11);
  s.created = "2024-0" + std::to_string(1 + n % 9) + "-1" + std::to_string(n % 10) + "T10:00:00Z";
  s.updated = s.created;
  return MakeIssue(s);
}

// WriteGeneratedIssues writes GeneratedIssue(n) for n in [from, to) into `shards` (each issue in
// its ShardOf shard) and commits each.
inline void WriteGeneratedIssues(std::vector<Xapian::WritableDatabase>* shards, int from,
                                 int to) {
  const uint32_t count = static_cast<uint32_t>(shards->size());
  for (int n = from; n < to; ++n) {
    const v1::IssueWithComments iwc = GeneratedIssue(n);
    const std::string slug = RepoSlug(iwc.issue().repo());
    (*shards)[index::ShardOf(slug, count)].replace_document(
        index::IdTerm(slug, iwc.issue().number()), IndexedDocument(iwc));
  }
  for (Xapian::WritableDatabase& db : *shards) {
    db.set_metadata(index::kTextSchemeKey, index::kTextScheme);  // as the indexer records it
    db.commit();
  }
}

// FixtureDatabase returns an in-memory database holding the corpus.
inline Xapian::WritableDatabase FixtureDatabase() {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  for (const IssueSpec& spec : Corpus()) {
    v1::IssueWithComments iwc = TaggedIssue(spec);
    db.replace_document(index::IdTerm(RepoSlug(iwc.issue().repo()), spec.number),
                        IndexedDocument(iwc));
  }
  db.commit();
  return db;
}

// Numbers returns the issue numbers of a response's hits, in order.
inline std::vector<int64_t> Numbers(const v1::SearchResponse& response) {
  std::vector<int64_t> numbers;
  for (const v1::SearchHit& hit : response.hits()) numbers.push_back(hit.number());
  return numbers;
}

// WriteShardedCorpus writes the tagged Corpus() into `shards` databases `dir`/shard-NNN, each
// issue in its ShardOf shard, with the stub beside them; returns the shards, committed and
// still open for writing.
inline std::vector<Xapian::WritableDatabase> WriteShardedCorpus(const std::string& dir,
                                                                uint32_t shards) {
  std::vector<Xapian::WritableDatabase> dbs;
  for (uint32_t i = 0; i < shards; ++i) {
    dbs.emplace_back(dir + "/" + index::ShardDirName(i), Xapian::DB_CREATE_OR_OPEN);
  }
  for (const IssueSpec& spec : Corpus()) {
    v1::IssueWithComments iwc = TaggedIssue(spec);
    const std::string slug = RepoSlug(iwc.issue().repo());
    dbs[index::ShardOf(slug, shards)].replace_document(index::IdTerm(slug, spec.number),
                                                       IndexedDocument(iwc));
  }
  for (Xapian::WritableDatabase& db : dbs) db.commit();
  if (!index::WriteStubFile(dir, shards).ok()) throw std::runtime_error("cannot write the stub");
  return dbs;
}

}  // namespace issuescope::search::testing
