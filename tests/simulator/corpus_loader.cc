#include "tests/simulator/corpus_loader.h"

#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/time_util.h"
#include "nlohmann/json.hpp"

namespace issuescope::sim {
namespace {

using nlohmann::json;

// LineReader converts one JSON object into model values, naming file, line and field in errors.
class LineReader {
 public:
  LineReader(absl::string_view name, int line) : name_(name), line_(line) {}

  absl::Status Error(absl::string_view field, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line_, ": field '", field, "': ", what));
  }

  absl::StatusOr<std::string> String(const json& obj, const char* field, bool required,
                                     absl::string_view prefix = "") const {
    auto it = obj.find(field);
    if (it == obj.end() || it->is_null()) {
      if (required) return Error(absl::StrCat(prefix, field), "missing");
      return std::string();
    }
    if (!it->is_string()) return Error(absl::StrCat(prefix, field), "must be a string");
    return it->get<std::string>();
  }

  absl::StatusOr<int64_t> Integer(const json& obj, const char* field,
                                  absl::string_view prefix = "") const {
    auto it = obj.find(field);
    if (it == obj.end() || it->is_null()) return Error(absl::StrCat(prefix, field), "missing");
    if (!it->is_number_integer() || it->get<int64_t>() < 1) {
      return Error(absl::StrCat(prefix, field), "must be a positive integer");
    }
    return it->get<int64_t>();
  }

  // Time returns Unix seconds, or 0 for an absent/null optional field.
  absl::StatusOr<int64_t> Time(const json& obj, const char* field, bool required,
                               absl::string_view prefix = "") const {
    auto text = String(obj, field, required, prefix);
    if (!text.ok()) return text.status();
    if (text->empty()) return int64_t{0};
    auto t = ParseRfc3339(*text);
    if (!t.ok()) return Error(absl::StrCat(prefix, field), t.status().message());
    return absl::ToUnixSeconds(*t);
  }

  absl::StatusOr<std::vector<std::string>> Strings(const json& obj, const char* field) const {
    std::vector<std::string> out;
    auto it = obj.find(field);
    if (it == obj.end() || it->is_null()) return out;
    if (!it->is_array()) return Error(field, "must be an array of strings");
    for (const json& v : *it) {
      if (!v.is_string()) return Error(field, "must be an array of strings");
      out.push_back(v.get<std::string>());
    }
    return out;
  }

 private:
  absl::string_view name_;
  int line_;
};

#define LOADER_ASSIGN(lhs, expr)        \
  do {                                  \
    auto loader_v_ = (expr);            \
    if (!loader_v_.ok()) return loader_v_.status(); \
    lhs = *std::move(loader_v_);        \
  } while (0)

absl::Status ParseLine(const json& obj, const LineReader& r, Corpus& corpus,
                       std::map<std::string, size_t>& repo_index, std::set<int64_t>& comment_ids) {
  if (!obj.is_object()) return r.Error("(line)", "must be a JSON object");
  std::string full;
  LOADER_ASSIGN(full, r.String(obj, "repo", true));
  std::string tracker_name;
  LOADER_ASSIGN(tracker_name, r.String(obj, "tracker", false));
  Tracker tracker = Tracker::kGithub;
  if (!tracker_name.empty() && !ParseTracker(tracker_name, &tracker)) {
    return r.Error("tracker", "must be github, gitlab or gitee");
  }
  const size_t slash = full.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == full.size() ||
      (tracker != Tracker::kGitlab && full.find('/') != slash)) {
    return r.Error("repo", absl::StrCat("'", full, "' is not owner/name"));
  }
  auto [it, inserted] =
      repo_index.emplace(absl::StrCat(TrackerName(tracker), ":", full), corpus.repos.size());
  if (inserted) {
    Repository repo;
    repo.tracker = tracker;
    repo.owner = full.substr(0, slash);
    repo.name = full.substr(slash + 1);
    repo.id = 10000000 + static_cast<int64_t>(corpus.repos.size());
    corpus.repos.push_back(std::move(repo));
  }
  Repository& repo = corpus.repos[it->second];
  Issue issue;
  if (auto num = obj.find("number"); tracker == Tracker::kGitee && num != obj.end() &&
                                     num->is_string()) {
    // A Gitee key ("I10001") is stored decoded; an integer n is stored as kGiteeKeyBase + n.
    if (!ParseGiteeKey(num->get<std::string>(), &issue.number) ||
        issue.number <= kGiteeKeyBase) {
      return r.Error("number", "must be a Gitee key I + 5 or more base-36 digits");
    }
  } else {
    LOADER_ASSIGN(issue.number, r.Integer(obj, "number"));
    if (tracker == Tracker::kGitee) issue.number += kGiteeKeyBase;
  }
  if (repo.issue_index.count(issue.number) > 0) {
    return r.Error("number", absl::StrCat(issue.number, " repeats an earlier issue of ", full));
  }
  LOADER_ASSIGN(issue.title, r.String(obj, "title", true));
  LOADER_ASSIGN(issue.body, r.String(obj, "body", false));
  std::string state;
  LOADER_ASSIGN(state, r.String(obj, "state", true));
  if (tracker == Tracker::kGitee) {
    if (state != "open" && state != "closed" && state != "progressing" && state != "rejected") {
      return r.Error("state", "must be open, progressing, closed or rejected");
    }
    issue.open = state == "open" || state == "progressing";
    if (state == "progressing" || state == "rejected") issue.state_reason = state;
  } else {
    if (tracker == Tracker::kGitlab && state == "opened") state = "open";
    if (state != "open" && state != "closed") return r.Error("state", "must be open or closed");
    issue.open = state == "open";
    LOADER_ASSIGN(issue.state_reason, r.String(obj, "state_reason", false));
    if (!issue.state_reason.empty() && issue.state_reason != "completed" &&
        issue.state_reason != "not_planned" && issue.state_reason != "reopened") {
      return r.Error("state_reason", "must be null, completed, not_planned or reopened");
    }
  }
  LOADER_ASSIGN(issue.labels, r.Strings(obj, "labels"));
  LOADER_ASSIGN(issue.user, r.String(obj, "user", true));
  LOADER_ASSIGN(issue.assignees, r.Strings(obj, "assignees"));
  LOADER_ASSIGN(issue.created_at, r.Time(obj, "created_at", true));
  LOADER_ASSIGN(issue.updated_at, r.Time(obj, "updated_at", true));
  if (issue.updated_at < issue.created_at) return r.Error("updated_at", "is before created_at");
  LOADER_ASSIGN(issue.closed_at, r.Time(obj, "closed_at", false));
  if (!issue.open && issue.closed_at == 0) issue.closed_at = issue.updated_at;
  if (auto pr = obj.find("is_pull_request"); pr != obj.end() && !pr->is_null()) {
    if (!pr->is_boolean()) return r.Error("is_pull_request", "must be a boolean");
    issue.is_pull_request = pr->get<bool>();
    if (issue.is_pull_request && tracker != Tracker::kGithub) {
      return r.Error("is_pull_request", "only GitHub lists pull requests among issues");
    }
  }
  if (auto locked = obj.find("locked"); locked != obj.end() && locked->is_boolean()) {
    issue.locked = locked->get<bool>();
  }
  for (const std::string& l : issue.labels) {
    if (repo.FindLabel(l) == nullptr) {
      char color[8];
      snprintf(color, sizeof(color), "%06llx",
               static_cast<unsigned long long>(StableHash(l) & 0xFFFFFF));
      repo.labels.push_back(Label{l, color, "", l == "bug" || l == "enhancement"});
    }
  }
  if (auto cs = obj.find("comments"); cs != obj.end() && !cs->is_null()) {
    if (!cs->is_array()) return r.Error("comments", "must be an array");
    for (size_t k = 0; k < cs->size(); ++k) {
      const json& cj = (*cs)[k];
      const std::string prefix = absl::StrCat("comments[", k, "].");
      if (!cj.is_object()) return r.Error(absl::StrCat("comments[", k, "]"), "must be an object");
      Comment c;
      c.issue_number = issue.number;
      LOADER_ASSIGN(c.id, r.Integer(cj, "id", prefix));
      if (!comment_ids.insert(c.id).second) {
        return r.Error(prefix + "id", absl::StrCat(c.id, " repeats an earlier comment id"));
      }
      LOADER_ASSIGN(c.user, r.String(cj, "user", true, prefix));
      LOADER_ASSIGN(c.body, r.String(cj, "body", false, prefix));
      LOADER_ASSIGN(c.created_at, r.Time(cj, "created_at", true, prefix));
      LOADER_ASSIGN(c.updated_at, r.Time(cj, "updated_at", false, prefix));
      if (c.updated_at == 0) c.updated_at = c.created_at;
      if (c.updated_at < c.created_at) return r.Error(prefix + "updated_at", "is before created_at");
      if (auto sys = cj.find("system"); sys != cj.end() && !sys->is_null()) {
        if (!sys->is_boolean()) return r.Error(prefix + "system", "must be a boolean");
        c.system = sys->get<bool>();
        if (c.system && tracker != Tracker::kGitlab) {
          return r.Error(prefix + "system", "system notes exist only on GitLab");
        }
      }
      corpus.next_comment_id = std::max(corpus.next_comment_id, c.id + 1);
      repo.comments.push_back(std::move(c));
    }
  }
  issue.id = corpus.next_issue_id++;
  repo.created_at = repo.created_at == 0 ? issue.created_at - 86400
                                         : std::min(repo.created_at, issue.created_at - 86400);
  repo.issue_index[issue.number] = static_cast<uint32_t>(repo.issues.size());
  repo.issues.push_back(std::move(issue));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Corpus> LoadCorpusStream(std::istream& in, absl::string_view name) {
  Corpus corpus;
  corpus.next_issue_id = 100000001;
  std::map<std::string, size_t> repo_index;
  std::set<int64_t> comment_ids;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    json obj = json::parse(text, nullptr, /*allow_exceptions=*/false);
    const LineReader reader(name, line);
    if (obj.is_discarded()) return reader.Error("(line)", "is not valid JSON");
    if (absl::Status s = ParseLine(obj, reader, corpus, repo_index, comment_ids); !s.ok()) {
      return s;
    }
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(name, ": read error"));
  corpus.RebuildIndexes();
  return corpus;
}

absl::StatusOr<Corpus> LoadCorpusFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open corpus file"));
  return LoadCorpusStream(in, path);
}

}  // namespace issuescope::sim
