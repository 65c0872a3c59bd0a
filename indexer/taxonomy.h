// Taxonomy: a versioned, editable classification scheme for issues, loaded from a TOML file
// (format in docs/TAXONOMY.md). Kinds (bug, requirement, question) hold themes, which hold
// sub-themes; every node carries a stable id (`<kind>`, `<kind>.<theme>`,
// `<kind>.<theme>.<subtheme>`), a title, a definition and cue terms/patterns (English and
// Chinese). Native tracker labels map to nodes, globally or per repository, and an `llm` cue set
// marks issues about LLM workloads.
//
// A Taxonomy is a plain value: copyable, immutable once loaded, safe to share between threads
// for reading. The loader validates the whole file (unique ids, known parents and label targets,
// RE2-compilable patterns, no unknown keys) and names the file, line and problem on error.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace issuescope::taxonomy {

// CueSet is what marks a node in an issue's title and body.
struct CueSet {
  // Literal terms matched case-insensitively; ASCII terms only at word boundaries, terms with
  // non-ASCII characters (Chinese) anywhere.
  std::vector<std::string> terms;
  // Literal terms matched case-sensitively at word boundaries (e.g. "ZeRO", "MoE").
  std::vector<std::string> case_terms;
  // RE2 patterns, matched case-insensitively (a pattern may turn that off with `(?-i)`).
  std::vector<std::string> patterns;

  // empty is true when the set has no cue at all.
  bool empty() const { return terms.empty() && case_terms.empty() && patterns.empty(); }
};

// SubTheme is a leaf of the taxonomy.
struct SubTheme {
  std::string id;          // full id, e.g. "bug.memory.oom"
  std::string key;         // last component, e.g. "oom"
  std::string title;       // short human title
  std::string definition;  // what belongs here
  CueSet cues;
  int line = 0;  // line of its table in the source file
};

// Theme groups sub-themes of one kind.
struct Theme {
  std::string id;   // full id, e.g. "bug.memory"
  std::string key;  // last component, e.g. "memory"
  std::string title;
  std::string definition;
  // priority breaks ties between themes with equal evidence: the theme of the root symptom
  // (memory, numerics) should outrank the context it occurs in (distributed). Default: 0.
  int priority = 0;
  CueSet cues;
  std::vector<SubTheme> subthemes;
  int line = 0;
};

// Kind is a top-level category: bug, requirement or question in the default taxonomy.
struct Kind {
  std::string id;  // e.g. "bug"
  std::string title;
  std::string definition;
  CueSet cues;  // phrasing that suggests this kind ("how do i", "feature request")
  std::vector<Theme> themes;
  int line = 0;
};

// LabelMapping maps one native tracker label to taxonomy nodes.
struct LabelMapping {
  std::string label;  // normalised with NormalizeLabel
  std::string repo;   // "owner/name" (lower case), or "" for every repository
  // Node ids (kind, theme or sub-theme), or "llm" for the llm flag.
  std::vector<std::string> targets;
  int line = 0;
};

// Taxonomy is a whole loaded taxonomy file.
struct Taxonomy {
  std::string name;         // e.g. "llm-dl"
  int version = 0;          // e.g. 1
  std::string description;  // free text
  std::vector<Kind> kinds;
  std::vector<LabelMapping> labels;
  CueSet llm;          // the llm keyword set
  // Repositories ("owner/name", lower case) whose every issue concerns LLM workloads.
  std::vector<std::string> llm_repos;
  std::string source;  // file name it was loaded from (or the name given to ParseTaxonomy)

  // Tag is "<name>/<version>", e.g. "llm-dl/1"; recorded with every tagged issue.
  std::string Tag() const;
  // FindKind returns the kind with `id`, or nullptr.
  const Kind* FindKind(absl::string_view id) const;
  // FindTheme returns the theme with full id `id`, or nullptr.
  const Theme* FindTheme(absl::string_view id) const;
  // FindSubTheme returns the sub-theme with full id `id`, or nullptr.
  const SubTheme* FindSubTheme(absl::string_view id) const;
  // HasNode is true for a known kind, theme or sub-theme id.
  bool HasNode(absl::string_view id) const;
};

// NormalizeLabel lower-cases a native label, trims it and removes blanks around ':' so that
// "Type: Bug", "type:bug" and "type : bug" compare equal.
std::string NormalizeLabel(absl::string_view label);

// ParseTaxonomy parses and validates TOML `text`; `source_name` names it in errors.
// INVALID_ARGUMENT "<source>:<line>: <what is wrong>" on any problem.
absl::StatusOr<Taxonomy> ParseTaxonomy(absl::string_view text, absl::string_view source_name);

// LoadTaxonomyFile reads and parses the file at `path`. NOT_FOUND when it cannot be read.
absl::StatusOr<Taxonomy> LoadTaxonomyFile(const std::string& path);

// DefaultTaxonomyPath is where the shipped `llm-dl/1` taxonomy lives: $ISSUESCOPE_TAXONOMY when
// set, else <dir of the running executable>/../share/issuescope/taxonomies/llm-dl-1.toml when it
// exists, else the file in the source tree this binary was built from.
std::string DefaultTaxonomyPath();

}  // namespace issuescope::taxonomy
