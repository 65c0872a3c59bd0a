#include "tests/bench/bench_corpus.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"
#include "tests/simulator/corpus_generator.h"

namespace issuescope::bench {
namespace {

google::protobuf::Timestamp Ts(int64_t unix_seconds) {
  google::protobuf::Timestamp ts;
  ts.set_seconds(unix_seconds);
  return ts;
}

v1::Tracker ToTracker(sim::Tracker tracker) {
  switch (tracker) {
    case sim::Tracker::kGitlab:
      return v1::TRACKER_GITLAB;
    case sim::Tracker::kGitee:
      return v1::TRACKER_GITEE;
    case sim::Tracker::kGithub:
      break;
  }
  return v1::TRACKER_GITHUB;
}

// Convert makes the stored form of one generated issue, as a crawl would store it.
v1::IssueWithComments Convert(const sim::Repository& repo, const sim::Issue& in,
                              const v1::RepositoryRef& ref) {
  v1::IssueWithComments out;
  v1::Issue* issue = out.mutable_issue();
  *issue->mutable_repo() = ref;
  issue->set_number(in.number);
  issue->set_key(ref.tracker() == v1::TRACKER_GITEE ? sim::GiteeKey(in.number)
                                                    : std::to_string(in.number));
  issue->set_id(in.id);
  issue->set_title(in.title);
  issue->set_body(in.body);
  issue->set_state(in.open ? v1::ISSUE_STATE_OPEN : v1::ISSUE_STATE_CLOSED);
  issue->set_state_reason(in.state_reason);
  for (const std::string& label : in.labels) issue->add_labels(label);
  issue->set_author(in.user);
  for (const std::string& a : in.assignees) issue->add_assignees(a);
  *issue->mutable_created_at() = Ts(in.created_at);
  *issue->mutable_updated_at() = Ts(in.updated_at);
  if (in.closed_at != 0) *issue->mutable_closed_at() = Ts(in.closed_at);
  issue->set_comment_count(static_cast<int32_t>(in.comments.size()));
  issue->set_is_pull_request(in.is_pull_request);
  issue->set_url(absl::StrCat("https://example.test/", ref.owner(), "/", ref.name(), "/issues/",
                              in.number));
  int32_t reactions = 0;
  for (int32_t r : in.reactions) reactions += r;
  issue->set_reactions(reactions);
  *issue->mutable_fetched_at() = Ts(in.updated_at + 60);
  for (uint32_t index : in.comments) {
    const sim::Comment& c = repo.comments[index];
    v1::Comment* comment = out.add_comments();
    *comment->mutable_repo() = ref;
    comment->set_issue_number(in.number);
    comment->set_id(c.id);
    comment->set_author(c.user);
    comment->set_body(c.body);
    *comment->mutable_created_at() = Ts(c.created_at);
    *comment->mutable_updated_at() = Ts(c.updated_at);
    *comment->mutable_fetched_at() = Ts(in.updated_at + 60);
  }
  return out;
}

}  // namespace

int64_t TextBytes(const v1::IssueWithComments& issue) {
  int64_t bytes = static_cast<int64_t>(issue.issue().title().size() + issue.issue().body().size());
  for (const v1::Comment& c : issue.comments()) bytes += static_cast<int64_t>(c.body().size());
  return bytes;
}

absl::Status GenerateChunks(const CorpusOptions& options,
                            const std::function<absl::Status(RepoIssues&)>& fn) {
  if (options.issues < 0 || options.issues_per_repo < 1 || options.repos_per_chunk < 1) {
    return absl::InvalidArgumentError("corpus: issues >= 0, issues_per_repo and repos_per_chunk >= 1");
  }
  int64_t remaining = options.issues;
  for (int64_t chunk = 0; remaining > 0; ++chunk) {
    const int64_t chunk_issues =
        std::min<int64_t>(remaining, int64_t{options.issues_per_repo} * options.repos_per_chunk);
    sim::SimulatorOptions sim;
    sim.issues_per_repo = static_cast<int>(
        std::min<int64_t>(options.issues_per_repo, chunk_issues));
    sim.repos = static_cast<int>((chunk_issues + sim.issues_per_repo - 1) / sim.issues_per_repo);
    sim.comments_per_issue = options.comments_per_issue;
    sim.seed = options.seed + static_cast<uint64_t>(chunk);
    absl::StatusOr<sim::Corpus> corpus = sim::GenerateCorpus(sim);
    if (!corpus.ok()) return corpus.status();
    for (const sim::Repository& repo : corpus->repos) {
      v1::RepositoryRef ref;
      ref.set_tracker(ToTracker(repo.tracker));
      ref.set_owner(repo.owner);
      ref.set_name(absl::StrCat(repo.name, "-c", chunk));
      RepoIssues out;
      out.slug = RepoSlug(ref);
      for (const sim::Issue& issue : repo.issues) {
        if (remaining == 0) break;
        out.issues.push_back(Convert(repo, issue, ref));
        --remaining;
      }
      if (out.issues.empty()) continue;
      if (absl::Status s = fn(out); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace issuescope::bench
