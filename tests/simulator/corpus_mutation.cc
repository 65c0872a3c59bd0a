#include "tests/simulator/corpus_mutation.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tests/simulator/text_generator.h"

namespace issuescope::sim {
namespace {

// Mutator applies one MutationSpec; it remembers what changed.
class Mutator {
 public:
  Mutator(Corpus& corpus, std::vector<size_t> repos, uint64_t seed, int64_t now)
      : corpus_(corpus), repos_(std::move(repos)), rng_(seed * 0x2545F4914F6CDD1DULL + 7),
        now_(now) {}

  void NewIssue() {
    const size_t r = PickRepo();
    Repository& repo = corpus_.repos[r];
    const auto& styles = ProjectStyles();
    const ProjectStyle& style = styles[r % styles.size()];
    // Gitee numbers start above kGiteeKeyBase; deleted and moved numbers are never reused.
    const int64_t number = repo.NextNumber() - 1;
    Issue issue;
    issue.id = corpus_.next_issue_id++;
    issue.number = number + 1;
    const bool pr = rng_.Chance(0.15);
    issue.is_pull_request = repo.tracker == Tracker::kGithub && pr;
    const bool cjk = rng_.Chance(repo.tracker == Tracker::kGitee ? 0.8 : 0.1);
    IssueText text = MakeIssueText(rng_, style, issue.is_pull_request, cjk);
    issue.title = std::move(text.title);
    issue.body = std::move(text.body);
    issue.user = rng_.Pick(Logins());
    if (!issue.is_pull_request && !style.kind_bug.empty() && repo.FindLabel(style.kind_bug[0])) {
      issue.labels.push_back(style.kind_bug[0]);
    }
    issue.created_at = now_;
    issue.updated_at = now_;
    repo.AddIssue(std::move(issue));
    Record(repo, number + 1);
  }

  void EditIssue() {
    Repository* repo = nullptr;
    uint32_t pos = 0;
    if (!PickIssue(false, &repo, &pos)) return;
    Issue& issue = repo->issues[pos];
    issue.title = MakeEditedTitle(rng_, issue.title);
    issue.body += MakeEditNote(rng_);
    Touch(*repo, pos);
  }

  void NewComment() {
    Repository* repo = nullptr;
    uint32_t pos = 0;
    if (!PickIssue(false, &repo, &pos)) return;
    Comment c;
    c.id = corpus_.next_comment_id++;
    c.issue_number = repo->issues[pos].number;
    c.user = rng_.Pick(Logins());
    c.body = MakeCommentBody(rng_, false);
    c.created_at = now_;
    c.updated_at = now_;
    result_.new_comment_ids.push_back(c.id);
    repo->AddComment(std::move(c));
    Touch(*repo, pos);
  }

  void CloseIssue() {
    Repository* repo = nullptr;
    uint32_t pos = 0;
    if (!PickIssue(true, &repo, &pos)) return;
    Issue& issue = repo->issues[pos];
    issue.open = false;
    issue.closed_at = now_;
    issue.state_reason = issue.is_pull_request || repo->tracker != Tracker::kGithub ? ""
                                                                                   : "completed";
    if (repo->tracker == Tracker::kGitlab) {  // GitLab records the close as a system note
      Comment c;
      c.id = corpus_.next_comment_id++;
      c.issue_number = issue.number;
      c.user = rng_.Pick(Logins());
      c.body = "closed";
      c.created_at = now_;
      c.updated_at = now_;
      c.system = true;
      repo->AddComment(std::move(c));
    }
    Touch(*repo, pos);
  }

  // DeleteIssue deletes an issue (not a pull request: GitHub cannot delete those).
  void DeleteIssue() {
    Repository* repo = nullptr;
    uint32_t pos = 0;
    if (!PickPlainIssue(&repo, &pos)) return;
    const int64_t number = repo->issues[pos].number;
    repo->DeleteIssue(number);
    result_.deleted.push_back(IssueRef{repo->FullName(), number, TrackerName(repo->tracker)});
  }

  // TransferIssue moves an issue to another repository of the same tracker in the corpus (none
  // when there is no other).
  void TransferIssue() {
    Repository* repo = nullptr;
    uint32_t pos = 0;
    if (!PickPlainIssue(&repo, &pos)) return;
    std::vector<Repository*> targets;
    for (Repository& r : corpus_.repos) {
      if (&r != repo && r.tracker == repo->tracker) targets.push_back(&r);
    }
    if (targets.empty()) return;
    Repository* to = targets[rng_.Uniform(targets.size())];
    const int64_t number = repo->issues[pos].number;
    absl::StatusOr<int64_t> to_number = corpus_.TransferIssue(*repo, number, *to);
    if (!to_number.ok()) return;
    result_.transferred.push_back(
        IssueMove{IssueRef{repo->FullName(), number, TrackerName(repo->tracker)},
                  IssueRef{to->FullName(), *to_number, TrackerName(to->tracker)}});
  }

  MutationResult Take() { return std::move(result_); }

 private:
  size_t PickRepo() { return repos_[rng_.Uniform(repos_.size())]; }

  // PickPlainIssue chooses an issue that is not a pull request; false when there is none.
  bool PickPlainIssue(Repository** repo_out, uint32_t* pos_out) {
    return PickWhere([](const Issue& i) { return !i.is_pull_request; }, repo_out, pos_out);
  }

  // PickIssue chooses an issue (an open one when `open_only`; Gitee's "progressing" issues are
  // open too and may be closed); false when there is none.
  bool PickIssue(bool open_only, Repository** repo_out, uint32_t* pos_out) {
    return PickWhere([open_only](const Issue& i) { return !open_only || i.open; }, repo_out,
                     pos_out);
  }

  // PickWhere chooses an issue for which `ok` holds, starting at a random repository and a random
  // position in it; false when there is none.
  template <typename Pred>
  bool PickWhere(const Pred& ok, Repository** repo_out, uint32_t* pos_out) {
    const size_t start = rng_.Uniform(repos_.size());
    for (size_t k = 0; k < repos_.size(); ++k) {
      Repository& repo = corpus_.repos[repos_[(start + k) % repos_.size()]];
      const size_t n = repo.issues.size();
      if (n == 0) continue;
      const size_t first = rng_.Uniform(n);
      for (size_t j = 0; j < n; ++j) {
        const size_t pos = (first + j) % n;
        if (ok(repo.issues[pos])) {
          *repo_out = &repo;
          *pos_out = static_cast<uint32_t>(pos);
          return true;
        }
      }
    }
    return false;
  }

  void Touch(Repository& repo, uint32_t pos) {
    Issue& issue = repo.issues[pos];
    const int64_t old = issue.updated_at;
    issue.updated_at = std::max(now_, issue.updated_at);
    repo.ReindexIssueUpdated(pos, old);
    Record(repo, issue.number);
  }

  void Record(const Repository& repo, int64_t number) {
    IssueRef ref{repo.FullName(), number, TrackerName(repo.tracker)};
    if (std::find(result_.changed_issues.begin(), result_.changed_issues.end(), ref) ==
        result_.changed_issues.end()) {
      result_.changed_issues.push_back(std::move(ref));
    }
  }

  Corpus& corpus_;
  std::vector<size_t> repos_;
  Rng rng_;
  int64_t now_;
  MutationResult result_;
};

}  // namespace

absl::StatusOr<MutationResult> ApplyMutation(Corpus& corpus, const MutationSpec& spec,
                                             int64_t now) {
  if (spec.new_issues < 0 || spec.edited_issues < 0 || spec.new_comments < 0 ||
      spec.closed_issues < 0 || spec.deleted_issues < 0 || spec.transferred_issues < 0) {
    return absl::InvalidArgumentError("mutation counts must be >= 0");
  }
  std::vector<size_t> repos;
  if (!spec.repo.empty()) {
    const Repository* repo = corpus.FindRepoSpec(spec.repo);
    if (repo == nullptr) {
      return absl::NotFoundError(absl::StrCat("mutation repo '", spec.repo, "' not found"));
    }
    repos.push_back(static_cast<size_t>(repo - corpus.repos.data()));
  } else {
    for (size_t r = 0; r < corpus.repos.size(); ++r) repos.push_back(r);
  }
  if (repos.empty()) return MutationResult{};
  Mutator m(corpus, std::move(repos), spec.seed, now);
  for (int i = 0; i < spec.new_issues; ++i) m.NewIssue();
  for (int i = 0; i < spec.edited_issues; ++i) m.EditIssue();
  for (int i = 0; i < spec.new_comments; ++i) m.NewComment();
  for (int i = 0; i < spec.closed_issues; ++i) m.CloseIssue();
  for (int i = 0; i < spec.deleted_issues; ++i) m.DeleteIssue();
  for (int i = 0; i < spec.transferred_issues; ++i) m.TransferIssue();
  return m.Take();
}

}  // namespace issuescope::sim
