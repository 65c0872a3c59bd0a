#include "tests/simulator/corpus_generator.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "tests/simulator/text_generator.h"

namespace issuescope::sim {
namespace {

int64_t UnixSeconds(int y, int m, int d) {
  return absl::ToUnixSeconds(absl::FromCivil(absl::CivilDay(y, m, d), absl::UTCTimeZone()));
}

// The generated history spans 2019-01-01 .. 2025-12-31; issues are created before mid-2025.
const int64_t kHistoryStart = UnixSeconds(2019, 1, 1);
const int64_t kCreatedEnd = UnixSeconds(2025, 7, 1);
const int64_t kHistoryEnd = UnixSeconds(2025, 12, 31);
constexpr int64_t kDay = 86400;

std::vector<std::string> PickLabels(Rng& rng, const ProjectStyle& style, bool pr) {
  std::vector<std::string> labels;
  auto add = [&labels](const std::string& l) {
    if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
  };
  if (!pr) add(rng.Chance(0.75) ? rng.Pick(style.kind_bug) : rng.Pick(style.kind_feature));
  const int modules = static_cast<int>(rng.Range(pr ? 0 : 1, 2));
  for (int i = 0; i < modules; ++i) add(rng.Pick(style.modules));
  if (rng.Chance(0.35)) add(rng.Pick(style.extra));
  return labels;
}

// RepoPlan is what one generated repository will be.
struct RepoPlan {
  int index = 0;  // seeds the repository's Rng
  Tracker tracker = Tracker::kGithub;
  std::string owner;
  std::string name;
  int issues = 0;
  const ProjectStyle* style = nullptr;
};

// SystemNote is a GitLab system note body.
std::string SystemNoteBody(Rng& rng, const Issue& issue) {
  switch (rng.Uniform(3)) {
    case 0:
      if (!issue.labels.empty()) return absl::StrCat("added ~\"", issue.labels[0], "\" label");
      break;
    case 1:
      return absl::StrCat("assigned to @", rng.Pick(Logins()));
    default:
      break;
  }
  return absl::StrCat("mentioned in merge request !", rng.Range(1, 5000));
}

// AddSystemNotes gives a GitLab issue system notes between its creation and last update, and a
// "closed" note at its close; ids come after the user notes'.
void AddSystemNotes(const RepoPlan& plan, const Issue& issue, Corpus& corpus,
                    Repository& repo) {
  Rng rng(StableHash(plan.owner + "/" + plan.name, static_cast<uint64_t>(issue.number)));
  const int notes = static_cast<int>(rng.Range(1, 2));
  for (int k = 0; k < notes; ++k) {
    Comment c;
    c.id = corpus.next_comment_id++;
    c.issue_number = issue.number;
    c.user = rng.Pick(Logins());
    c.body = SystemNoteBody(rng, issue);
    c.created_at = rng.Range(issue.created_at, issue.updated_at);
    c.updated_at = c.created_at;
    c.system = true;
    repo.comments.push_back(std::move(c));
  }
  if (!issue.open) {
    Comment c;
    c.id = corpus.next_comment_id++;
    c.issue_number = issue.number;
    c.user = rng.Pick(Logins());
    c.body = "closed";
    c.created_at = issue.closed_at;
    c.updated_at = issue.closed_at;
    c.system = true;
    repo.comments.push_back(std::move(c));
  }
}

void GenerateRepo(const SimulatorOptions& options, const RepoPlan& plan, Corpus& corpus) {
  const ProjectStyle& style = *plan.style;
  const int index = plan.index;
  const bool github = plan.tracker == Tracker::kGithub;
  Rng rng(options.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(index) + 1);
  Repository repo;
  repo.tracker = plan.tracker;
  repo.owner = plan.owner;
  repo.name = plan.name;
  repo.id = 10000000 + index;
  repo.created_at = UnixSeconds(2018, 6, 1) + index * kDay;
  repo.labels = style.labels;

  const int n = plan.issues;
  const double pr_fraction = github ? options.pr_fraction : 0.0;  // only GitHub lists PRs
  const double cjk_fraction =
      plan.tracker == Tracker::kGitee ? options.gitee_cjk_fraction : options.cjk_fraction;
  const int64_t number_base = plan.tracker == Tracker::kGitee ? kGiteeKeyBase : 0;
  std::vector<int64_t> created(static_cast<size_t>(n));
  for (int64_t& c : created) c = rng.Range(kHistoryStart, kCreatedEnd);
  std::sort(created.begin(), created.end());
  const std::vector<std::string>& logins = Logins();
  repo.issues.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Issue issue;
    issue.id = corpus.next_issue_id++;
    issue.number = number_base + i + 1;
    issue.is_pull_request = rng.Chance(pr_fraction);
    const bool cjk = rng.Chance(cjk_fraction);
    IssueText text = MakeIssueText(rng, style, issue.is_pull_request, cjk);
    issue.title = std::move(text.title);
    issue.body = std::move(text.body);
    issue.user = rng.Pick(logins);
    issue.labels = PickLabels(rng, style, issue.is_pull_request);
    if (rng.Chance(0.3)) issue.assignees.push_back(rng.Pick(logins));
    if (rng.Chance(0.05)) issue.assignees.push_back(rng.Pick(logins));
    if (issue.assignees.size() == 2 && issue.assignees[0] == issue.assignees[1]) {
      issue.assignees.pop_back();
    }
    issue.created_at = created[static_cast<size_t>(i)];
    const double r = rng.Real();
    const int64_t lifetime = static_cast<int64_t>(r * r * r * 500 * kDay) + rng.Range(60, 7200);
    issue.updated_at = issue.created_at + lifetime;
    if (issue.updated_at > kHistoryEnd) {
      issue.updated_at = std::max(issue.created_at, kHistoryEnd - rng.Range(0, 60 * kDay));
    }
    issue.open = !rng.Chance(0.6);
    if (!issue.open) {
      issue.closed_at = issue.updated_at;
      if (!issue.is_pull_request) issue.state_reason = rng.Chance(0.8) ? "completed" : "not_planned";
      issue.locked = rng.Chance(0.02);
    } else if (rng.Chance(0.03)) {
      issue.state_reason = "reopened";
    }
    for (int32_t& reaction : issue.reactions) reaction = rng.Chance(0.2) ? rng.Poisson(2.0) : 0;
    if (plan.tracker == Tracker::kGitee) {
      // Gitee's extra states; GitHub's state reasons do not exist there.
      issue.state_reason.clear();
      if (issue.open && rng.Chance(0.3)) issue.state_reason = "progressing";
      if (!issue.open && rng.Chance(0.15)) issue.state_reason = "rejected";
    } else if (plan.tracker == Tracker::kGitlab) {
      issue.state_reason.clear();
    }

    int comments = rng.Poisson(options.comments_per_issue);
    // Long threads (more comments than one GraphQL page nests); drawn only when asked for, so
    // the corpora of other options stay byte-identical.
    if (options.long_thread_fraction > 0 && rng.Chance(options.long_thread_fraction)) {
      comments = 101 + static_cast<int>(rng.Uniform(
                           static_cast<uint64_t>(std::max(1, options.long_thread_max - 100))));
    }
    std::vector<int64_t> times(static_cast<size_t>(comments));
    for (int64_t& t : times) t = rng.Range(issue.created_at, issue.updated_at);
    std::sort(times.begin(), times.end());
    for (int64_t t : times) {
      Comment c;
      c.id = corpus.next_comment_id++;
      c.issue_number = issue.number;
      c.user = rng.Chance(0.3) ? issue.user : rng.Pick(logins);
      c.body = MakeCommentBody(rng, cjk);
      c.created_at = t;
      c.updated_at = rng.Chance(0.1) ? rng.Range(t, issue.updated_at) : t;
      repo.comments.push_back(std::move(c));
    }
    // About 3% of issues share updated_at with their predecessor (~6% take part in a tie): ties must be exercised.
    if (i > 0 && rng.Chance(0.03)) {
      Issue& prev = repo.issues.back();
      const int64_t t = std::max(prev.updated_at, issue.updated_at);
      prev.updated_at = t;
      issue.updated_at = t;
    }
    repo.issues.push_back(std::move(issue));
  }
  if (plan.tracker == Tracker::kGitlab) {
    Rng notes(options.seed ^ 0x5157E3A0DEULL ^ static_cast<uint64_t>(index));
    for (const Issue& issue : repo.issues) {
      if (notes.Chance(options.system_note_fraction)) AddSystemNotes(plan, issue, corpus, repo);
    }
  }
  corpus.repos.push_back(std::move(repo));
}

std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(s); }

bool IssueContains(const Repository& repo, const Issue& issue, absl::string_view lower_phrase) {
  if (absl::StrContains(Lower(issue.title), lower_phrase)) return true;
  if (absl::StrContains(Lower(issue.body), lower_phrase)) return true;
  for (uint32_t c : issue.comments) {
    if (absl::StrContains(Lower(repo.comments[c].body), lower_phrase)) return true;
  }
  return false;
}

}  // namespace

absl::Status ValidateOptions(const SimulatorOptions& o) {
  auto bad = [](absl::string_view field, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("simulator option ", field, " ", why));
  };
  if (o.port < 0 || o.port > 65535) return bad("port", "must be in 0..65535");
  if (o.repos < 0) return bad("repos", "must be >= 0");
  if (o.issues_per_repo < 0) return bad("issues_per_repo", "must be >= 0");
  if (!(o.long_thread_fraction >= 0 && o.long_thread_fraction <= 1)) {
    return bad("long_thread_fraction", "must be in 0..1");
  }
  if (o.long_thread_max < 101 || o.long_thread_max > 100000) {
    return bad("long_thread_max", "must be in 101..100000");
  }
  if (!(o.comments_per_issue >= 0 && o.comments_per_issue <= 1000)) {
    return bad("comments_per_issue", "must be in 0..1000");
  }
  if (!(o.pr_fraction >= 0 && o.pr_fraction <= 1)) return bad("pr_fraction", "must be in 0..1");
  if (!(o.cjk_fraction >= 0 && o.cjk_fraction <= 1)) return bad("cjk_fraction", "must be in 0..1");
  if (o.plant_count < 0) return bad("plant_count", "must be >= 0");
  if (o.plant_count > 0 && absl::StripAsciiWhitespace(o.plant_phrase).empty()) {
    return bad("plant_phrase", "must be set when plant_count > 0");
  }
  if (!(o.gitee_cjk_fraction >= 0 && o.gitee_cjk_fraction <= 1)) {
    return bad("gitee_cjk_fraction", "must be in 0..1");
  }
  if (!(o.system_note_fraction >= 0 && o.system_note_fraction <= 1)) {
    return bad("system_note_fraction", "must be in 0..1");
  }
  for (size_t i = 0; i < o.repo_specs.size(); ++i) {
    const RepoSpec& a = o.repo_specs[i];
    if (a.owner.empty() || a.name.empty()) return bad("repo_specs", "need owner and name");
    for (size_t j = 0; j < i; ++j) {
      const RepoSpec& b = o.repo_specs[j];
      if (a.tracker == b.tracker && absl::EqualsIgnoreCase(a.owner, b.owner) &&
          absl::EqualsIgnoreCase(a.name, b.name)) {
        return bad("repo_specs", absl::StrCat("repeat ", TrackerName(a.tracker), ":", a.owner,
                                              "/", a.name));
      }
    }
  }
  if (absl::Status s = ValidateFaultConfig(o.faults); !s.ok()) return s;
  if (o.rate_limit < 1) return bad("rate_limit", "must be >= 1");
  if (o.threads < 1) return bad("threads", "must be >= 1");
  return absl::OkStatus();
}

absl::StatusOr<RepoSpec> ParseRepoSpec(absl::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "repository spec must be [github|gitlab|gitee:]owner/name[:issues], got '", text, "'"));
  };
  RepoSpec spec;
  absl::string_view rest = text;
  const size_t colon = rest.find(':');
  if (colon != absl::string_view::npos && ParseTracker(rest.substr(0, colon), &spec.tracker)) {
    rest = rest.substr(colon + 1);
  }
  const size_t count = rest.rfind(':');
  if (count != absl::string_view::npos) {
    if (!absl::SimpleAtoi(rest.substr(count + 1), &spec.issues) || spec.issues < 0) return bad();
    rest = rest.substr(0, count);
  }
  const size_t slash = rest.rfind('/');
  if (slash == absl::string_view::npos || slash == 0 || slash + 1 == rest.size() ||
      absl::StrContains(rest, ':')) {
    return bad();
  }
  if (spec.tracker != Tracker::kGitlab && rest.find('/') != slash) return bad();
  spec.owner = std::string(rest.substr(0, slash));
  spec.name = std::string(rest.substr(slash + 1));
  return spec;
}

absl::StatusOr<Corpus> GenerateCorpus(const SimulatorOptions& options) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  if (!options.plant_phrase.empty()) {
    std::vector<std::string> clash = WordsInVocabulary(options.plant_phrase);
    if (!clash.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("simulator option plant_phrase uses words of the generator's vocabulary (",
                       absl::StrJoin(clash, ", "), "); choose words that never occur otherwise"));
    }
  }
  Corpus corpus;
  corpus.next_issue_id = 100000001;
  corpus.next_comment_id = 500000001;
  const std::vector<ProjectStyle>& styles = ProjectStyles();
  if (options.repo_specs.empty()) {
    for (int r = 0; r < options.repos; ++r) {
      RepoPlan plan;
      plan.index = r;
      plan.style = &styles[r % styles.size()];
      plan.owner = plan.style->owner;
      plan.name = plan.style->name;
      if (r >= static_cast<int>(styles.size())) {
        absl::StrAppend(&plan.name, "-", r / styles.size() + 1);
      }
      plan.issues = options.issues_per_repo;
      GenerateRepo(options, plan, corpus);
    }
  }
  for (size_t r = 0; r < options.repo_specs.size(); ++r) {
    const RepoSpec& spec = options.repo_specs[r];
    RepoPlan plan;
    plan.index = static_cast<int>(r);
    plan.tracker = spec.tracker;
    plan.owner = spec.owner;
    plan.name = spec.name;
    plan.issues = spec.issues < 0 ? options.issues_per_repo : spec.issues;
    plan.style = &styles[r % styles.size()];
    for (const ProjectStyle& style : styles) {  // a known project keeps its own style
      if (absl::EqualsIgnoreCase(style.name, spec.name)) plan.style = &style;
    }
    GenerateRepo(options, plan, corpus);
  }
  corpus.RebuildIndexes();
  if (options.plant_count > 0) {
    if (absl::Status s = PlantPhrase(corpus, options.plant_phrase, options.plant_count,
                                     options.seed);
        !s.ok()) {
      return s;
    }
  }
  return corpus;
}

absl::Status PlantPhrase(Corpus& corpus, absl::string_view phrase, int count, uint64_t seed) {
  std::vector<std::pair<uint32_t, uint32_t>> all;  // (repo, issue position)
  for (uint32_t r = 0; r < corpus.repos.size(); ++r) {
    for (uint32_t i = 0; i < corpus.repos[r].issues.size(); ++i) all.emplace_back(r, i);
  }
  if (static_cast<size_t>(count) > all.size()) {
    return absl::InvalidArgumentError(absl::StrCat("simulator option plant_count (", count,
                                                   ") exceeds the number of issues (",
                                                   all.size(), ")"));
  }
  std::vector<std::string> words = absl::StrSplit(phrase, ' ', absl::SkipEmpty());
  const size_t decoys = words.size() > 1 ? std::min<size_t>(all.size() - count, 3 + count / 2) : 0;
  Rng rng(seed ^ 0xA5A5F00DULL);
  for (size_t k = 0; k < count + decoys; ++k) {  // partial Fisher-Yates
    std::swap(all[k], all[k + rng.Uniform(all.size() - k)]);
  }
  for (size_t k = 0; k < count + decoys; ++k) {
    Repository& repo = corpus.repos[all[k].first];
    Issue& issue = repo.issues[all[k].second];
    if (k < static_cast<size_t>(count)) {
      issue.planted = true;
      const std::string sentence = absl::StrCat("Possibly related: ", phrase, ".");
      if (!issue.comments.empty() && rng.Chance(0.3)) {
        Comment& c = repo.comments[issue.comments[rng.Uniform(issue.comments.size())]];
        absl::StrAppend(&c.body, "\n\n", sentence);
      } else {
        absl::StrAppend(&issue.body, "\n\n", sentence, "\n");
      }
    } else {
      std::string text = "\n\n";
      for (auto w = words.rbegin(); w != words.rend(); ++w) {
        absl::StrAppend(&text, "Seen with ", *w, ". ", FillerSentence(rng), " ");
      }
      absl::StrAppend(&issue.body, text, "\n");
    }
  }
  const int64_t found = CountIssuesContaining(corpus, phrase);
  if (found != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("simulator option plant_phrase '", phrase, "' occurs in ", found,
                     " issues instead of ", count, "; choose words that never occur otherwise"));
  }
  return absl::OkStatus();
}

int64_t CountIssuesContaining(const Corpus& corpus, absl::string_view phrase) {
  const std::string lower = Lower(phrase);
  int64_t found = 0;
  for (const Repository& repo : corpus.repos) {
    for (const Issue& issue : repo.issues) found += IssueContains(repo, issue, lower) ? 1 : 0;
  }
  return found;
}

}  // namespace issuescope::sim
