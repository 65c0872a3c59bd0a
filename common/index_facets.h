// Facet values of indexed issues: the fields search results are counted by (repository, label,
// state, type, kind, theme, sub-theme, llm, author, year, tracker). The indexer stores them in
// one value slot (kFacetsSlot) so a Xapian::MatchSpy reads a single value per matching document
// instead of walking its term list; every value is the same string as the suffix of the
// boolean term of that field (lower-cased, truncated like the term), so counts taken from term
// frequencies and counts taken from the slot agree. Plain functions over values; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "issuescope/v1/model.pb.h"
#include "xapian.h"

namespace issuescope::index {

// FacetField names one facet.
enum class FacetField {
  kRepo,      // repository slug, "github:owner/name" (term kRepoSlugPrefix)
  kLabel,     // label names (term kLabelPrefix); several per issue
  kState,     // "open", "closed", "progressing", "rejected"
  kType,      // "issue" or "pr"
  kKind,      // taxonomy kind id, "bug"
  kTheme,     // theme ids, primary and secondary, "bug.memory"; several per issue
  kSubtheme,  // sub-theme ids, "bug.memory.oom"; several per issue
  kLlm,       // "true" / "false"; none for untagged issues
  kAuthor,    // author login
  kYear,      // UTC year of created_at, "2024"
  kTracker,   // "github", "gitlab", "gitee"
};

// kFacetFieldCount is the number of FacetField values.
inline constexpr size_t kFacetFieldCount = 11;

// FacetInfo describes one facet: its public name ("repo", …), the prefix of its boolean terms
// and the one-character code it has inside the kFacetsSlot value.
struct FacetInfo {
  FacetField field;
  const char* name;
  const char* term_prefix;
  char code;
};

// FacetInfos lists every facet, in FacetField order.
const std::array<FacetInfo, kFacetFieldCount>& FacetInfos();

// FindFacet returns the facet called `name` (exact, lower-case), or nullptr.
const FacetInfo* FindFacet(absl::string_view name);

// FacetNames returns the facet names, comma-separated, for error messages.
std::string FacetNames();

// FacetValues holds the values of every facet of one document, indexed by FacetField.
using FacetValues = std::array<std::vector<std::string>, kFacetFieldCount>;

// IssueFacetValues computes the facet values of an issue (deduplicated, in a stable order).
FacetValues IssueFacetValues(const v1::IssueWithComments& issue);

// AddFacetValues stores the facet values of `issue` in kFacetsSlot of `doc` and adds the
// kYearPrefix term of its creation year. BuildDocument calls it.
void AddFacetValues(const v1::IssueWithComments& issue, Xapian::Document* doc);

// EncodeFacetValues makes the kFacetsSlot value: for each value, its facet's code, the value
// and a NUL byte.
std::string EncodeFacetValues(const FacetValues& values);

// DecodeFacetValues parses a kFacetsSlot value; nullopt when it is empty or malformed.
std::optional<FacetValues> DecodeFacetValues(absl::string_view encoded);

// FacetYear is the kYear facet value of a time: its UTC year ("2024").
std::string FacetYear(int64_t unix_seconds);

}  // namespace issuescope::index
