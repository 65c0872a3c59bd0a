#include "common/index_facets.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/index_document.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/text_tokens.h"

namespace issuescope::index {
namespace {

// Boolean terms are truncated to this many bytes, at a character boundary
// (common/index_document.cc).
constexpr size_t kMaxTermBytes = 240;

const FacetInfo& Info(FacetField field) { return FacetInfos()[static_cast<size_t>(field)]; }

// Add appends the normalized value of `field` unless it is empty or already present.
void Add(FacetValues& values, FacetField field, const std::string& raw) {
  if (raw.empty()) return;
  std::string value = NormalizeTermValue(raw);
  value.erase(std::remove(value.begin(), value.end(), '\0'), value.end());
  const size_t room = kMaxTermBytes - std::string(Info(field).term_prefix).size();
  if (value.size() > room) value.resize(Utf8Boundary(value, room));  // as the term is cut
  std::vector<std::string>& list = values[static_cast<size_t>(field)];
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}


}  // namespace

std::string FacetYear(int64_t unix_seconds) {
  const absl::CivilSecond civil =
      absl::ToCivilSecond(absl::FromUnixSeconds(unix_seconds), absl::UTCTimeZone());
  return absl::StrCat(civil.year());
}

const std::array<FacetInfo, kFacetFieldCount>& FacetInfos() {
  static const std::array<FacetInfo, kFacetFieldCount> infos = {{
      {FacetField::kRepo, "repo", kRepoSlugPrefix, 'r'},
      {FacetField::kLabel, "label", kLabelPrefix, 'l'},
      {FacetField::kState, "state", kStatePrefix, 's'},
      {FacetField::kType, "type", kTypePrefix, 't'},
      {FacetField::kKind, "kind", kKindPrefix, 'k'},
      {FacetField::kTheme, "theme", kThemePrefix, 'h'},
      {FacetField::kSubtheme, "subtheme", kSubthemePrefix, 'u'},
      {FacetField::kLlm, "llm", kLlmPrefix, 'm'},
      {FacetField::kAuthor, "author", kAuthorPrefix, 'a'},
      {FacetField::kYear, "year", kYearPrefix, 'y'},
      {FacetField::kTracker, "tracker", kTrackerPrefix, 'c'},
  }};
  return infos;
}

const FacetInfo* FindFacet(absl::string_view name) {
  for (const FacetInfo& info : FacetInfos()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

std::string FacetNames() {
  std::vector<std::string> names;
  for (const FacetInfo& info : FacetInfos()) names.push_back(info.name);
  return absl::StrJoin(names, ", ");
}

FacetValues IssueFacetValues(const v1::IssueWithComments& iwc) {
  const v1::Issue& issue = iwc.issue();
  FacetValues values;
  Add(values, FacetField::kRepo, RepoSlug(issue.repo()));
  for (const std::string& label : issue.labels()) Add(values, FacetField::kLabel, label);
  Add(values, FacetField::kState, IssueStateName(issue.state()));
  Add(values, FacetField::kType, issue.is_pull_request() ? "pr" : "issue");
  const v1::Tags& tags = issue.tags();
  Add(values, FacetField::kKind, tags.kind());
  Add(values, FacetField::kTheme, tags.theme());
  for (const std::string& t : tags.secondary_themes()) Add(values, FacetField::kTheme, t);
  for (const std::string& t : tags.subthemes()) Add(values, FacetField::kSubtheme, t);
  if (!tags.taxonomy().empty()) Add(values, FacetField::kLlm, tags.llm() ? "true" : "false");
  Add(values, FacetField::kAuthor, issue.author());
  if (issue.has_created_at()) Add(values, FacetField::kYear, FacetYear(issue.created_at().seconds()));
  Add(values, FacetField::kTracker, TrackerName(issue.repo().tracker()));
  return values;
}

void AddFacetValues(const v1::IssueWithComments& issue, Xapian::Document* doc) {
  const FacetValues values = IssueFacetValues(issue);
  doc->add_value(kFacetsSlot, EncodeFacetValues(values));
  for (const std::string& year : values[static_cast<size_t>(FacetField::kYear)]) {
    doc->add_boolean_term(absl::StrCat(kYearPrefix, year));
  }
}

std::string EncodeFacetValues(const FacetValues& values) {
  std::string out;
  for (const FacetInfo& info : FacetInfos()) {
    for (const std::string& value : values[static_cast<size_t>(info.field)]) {
      out.push_back(info.code);
      out.append(value);
      out.push_back('\0');
    }
  }
  return out;
}

std::optional<FacetValues> DecodeFacetValues(absl::string_view encoded) {
  if (encoded.empty()) return std::nullopt;
  FacetValues values;
  size_t pos = 0;
  while (pos < encoded.size()) {
    const size_t end = encoded.find('\0', pos);
    if (end == absl::string_view::npos) return std::nullopt;
    const char code = encoded[pos];
    const FacetInfo* info = nullptr;
    for (const FacetInfo& candidate : FacetInfos()) {
      if (candidate.code == code) info = &candidate;
    }
    if (info == nullptr) return std::nullopt;
    values[static_cast<size_t>(info->field)].emplace_back(encoded.substr(pos + 1, end - pos - 1));
    pos = end + 1;
  }
  return values;
}


}  // namespace issuescope::index
