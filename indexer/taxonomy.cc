#include "indexer/taxonomy.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "re2/re2.h"
#include "toml++/toml.h"

#ifndef ISSUESCOPE_DEFAULT_TAXONOMY_PATH
#define ISSUESCOPE_DEFAULT_TAXONOMY_PATH "indexer/taxonomies/llm-dl-1.toml"
#endif

namespace issuescope::taxonomy {
namespace {

// Parser walks a parsed TOML table and fills a Taxonomy, naming source and line in errors.
class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  absl::Status Error(const toml::node& node, absl::string_view what) const {
    return Error(static_cast<int>(node.source().begin.line), what);
  }
  absl::Status Error(int line, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ":", line, ": ", what));
  }

  // CheckKeys rejects keys outside `allowed` (catches typos such as `term =`).
  absl::Status CheckKeys(const toml::table& table, absl::string_view where,
                         const std::set<std::string>& allowed) const {
    for (auto&& [key, value] : table) {
      if (allowed.count(std::string(key.str())) == 0) {
        return Error(value, absl::StrCat("unknown key '", std::string(key.str()), "' in ", where,
                                         " (allowed: ", absl::StrJoin(allowed, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  // String reads an optional (or required) string field.
  absl::Status String(const toml::table& table, const char* key, bool required,
                      absl::string_view where, std::string* out) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) {
      if (required) {
        return Error(table, absl::StrCat(where, " lacks the required string '", key, "'"));
      }
      return absl::OkStatus();
    }
    auto value = node->value<std::string>();
    if (!node->is_string() || !value) {
      return Error(*node, absl::StrCat("'", key, "' in ", where, " must be a string"));
    }
    *out = *value;
    return absl::OkStatus();
  }

  // StringList reads an optional array of non-empty strings.
  absl::Status StringList(const toml::node& node, absl::string_view what,
                          std::vector<std::string>* out) const {
    const toml::array* array = node.as_array();
    if (array == nullptr) return Error(node, absl::StrCat(what, " must be an array of strings"));
    for (const toml::node& element : *array) {
      auto value = element.value<std::string>();
      if (!element.is_string() || !value) {
        return Error(element, absl::StrCat(what, " must hold only strings"));
      }
      if (value->empty()) return Error(element, absl::StrCat(what, " holds an empty string"));
      out->push_back(*value);
    }
    return absl::OkStatus();
  }

  absl::Status Cues(const toml::table& table, absl::string_view where, CueSet* cues) const {
    if (const toml::node* n = table.get("terms")) {
      RETURN_IF_ERROR(StringList(*n, absl::StrCat("'terms' of ", where), &cues->terms));
    }
    if (const toml::node* n = table.get("case_terms")) {
      RETURN_IF_ERROR(StringList(*n, absl::StrCat("'case_terms' of ", where), &cues->case_terms));
    }
    if (const toml::node* n = table.get("patterns")) {
      RETURN_IF_ERROR(StringList(*n, absl::StrCat("'patterns' of ", where), &cues->patterns));
      const toml::array& array = *n->as_array();
      for (size_t i = 0; i < cues->patterns.size(); ++i) {
        RE2::Options options;
        options.set_log_errors(false);
        RE2 re(cues->patterns[i], options);
        if (!re.ok()) {
          return Error(*array.get(i), absl::StrCat("invalid pattern '", cues->patterns[i],
                                                   "' in ", where, ": ", re.error()));
        }
      }
    }
    return absl::OkStatus();
  }

  // Node reads the fields every kind/theme/sub-theme has; `key` must be a valid id component.
  absl::Status Common(const toml::table& table, absl::string_view where, std::string* key,
                      std::string* title, std::string* definition, CueSet* cues) const {
    RETURN_IF_ERROR(String(table, "id", true, where, key));
    if (key->empty() || key->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") !=
                            std::string::npos) {
      return Error(*table.get("id"),
                   absl::StrCat("id '", *key, "' of ", where,
                                " must be non-empty and use only a-z, 0-9, '-' and '_'"));
    }
    RETURN_IF_ERROR(String(table, "title", true, where, title));
    RETURN_IF_ERROR(String(table, "definition", false, where, definition));
    return Cues(table, where, cues);
  }

  // Tables returns the tables of an array-of-tables field (empty when absent).
  absl::StatusOr<std::vector<const toml::table*>> Tables(const toml::table& parent,
                                                         const char* key,
                                                         absl::string_view where) const {
    std::vector<const toml::table*> out;
    const toml::node* node = parent.get(key);
    if (node == nullptr) return out;
    const toml::array* array = node->as_array();
    if (array == nullptr || !array->is_array_of_tables()) {
      return Error(*node, absl::StrCat("'", key, "' in ", where,
                                       " must be an array of tables ([[...]])"));
    }
    for (const toml::node& element : *array) out.push_back(element.as_table());
    return out;
  }

  absl::StatusOr<Taxonomy> Parse(const toml::table& root) {
    Taxonomy tax;
    tax.source = source_;
    RETURN_IF_ERROR(CheckKeys(root, "the top level",
                              {"name", "version", "description", "llm", "kind", "labels"}));
    RETURN_IF_ERROR(String(root, "name", true, "the taxonomy", &tax.name));
    const toml::node* version = root.get("version");
    if (version == nullptr || !version->is_integer() || version->value<int64_t>().value() < 1) {
      return Error(version ? *version : static_cast<const toml::node&>(root),
                   "the taxonomy needs an integer 'version' >= 1");
    }
    tax.version = static_cast<int>(version->value<int64_t>().value());
    RETURN_IF_ERROR(String(root, "description", false, "the taxonomy", &tax.description));

    if (const toml::node* llm = root.get("llm")) {
      if (!llm->is_table()) return Error(*llm, "'llm' must be a table");
      RETURN_IF_ERROR(
          CheckKeys(*llm->as_table(), "[llm]", {"terms", "case_terms", "patterns", "repos"}));
      RETURN_IF_ERROR(Cues(*llm->as_table(), "[llm]", &tax.llm));
      if (const toml::node* repos = llm->as_table()->get("repos")) {
        RETURN_IF_ERROR(StringList(*repos, "'repos' of [llm]", &tax.llm_repos));
        for (std::string& r : tax.llm_repos) {
          if (std::count(r.begin(), r.end(), '/') != 1) {
            return Error(*repos, absl::StrCat("'repos' of [llm] holds '", r,
                                              "', not a repository OWNER/NAME"));
          }
          r = absl::AsciiStrToLower(r);
        }
      }
    }

    std::map<std::string, int> seen;  // full id -> line
    auto claim = [&](const std::string& id, int line) -> absl::Status {
      auto [it, inserted] = seen.emplace(id, line);
      if (!inserted) {
        return Error(line, absl::StrCat("duplicate id '", id, "' (first defined on line ",
                                        it->second, ")"));
      }
      return absl::OkStatus();
    };
    const std::set<std::string> node_keys = {"id", "title", "definition", "terms", "case_terms",
                                             "patterns"};
    ASSIGN_OR_RETURN(auto kinds, Tables(root, "kind", "the taxonomy"));
    if (kinds.empty()) return Error(root, "the taxonomy defines no [[kind]]");
    for (const toml::table* kt : kinds) {
      Kind kind;
      kind.line = static_cast<int>(kt->source().begin.line);
      std::set<std::string> allowed = node_keys;
      allowed.insert("theme");
      RETURN_IF_ERROR(CheckKeys(*kt, "a [[kind]]", allowed));
      RETURN_IF_ERROR(Common(*kt, "a [[kind]]", &kind.id, &kind.title, &kind.definition,
                             &kind.cues));
      RETURN_IF_ERROR(claim(kind.id, kind.line));
      std::string kind_where = absl::StrCat("kind '", kind.id, "'");
      ASSIGN_OR_RETURN(auto themes, Tables(*kt, "theme", kind_where));
      for (const toml::table* tt : themes) {
        Theme theme;
        theme.line = static_cast<int>(tt->source().begin.line);
        std::set<std::string> theme_keys = node_keys;
        theme_keys.insert({"subtheme", "priority"});
        std::string where = absl::StrCat("a [[kind.theme]] of ", kind_where);
        RETURN_IF_ERROR(CheckKeys(*tt, where, theme_keys));
        RETURN_IF_ERROR(Common(*tt, where, &theme.key, &theme.title, &theme.definition,
                               &theme.cues));
        theme.id = absl::StrCat(kind.id, ".", theme.key);
        RETURN_IF_ERROR(claim(theme.id, theme.line));
        if (const toml::node* p = tt->get("priority")) {
          if (!p->is_integer()) return Error(*p, absl::StrCat("'priority' of ", theme.id,
                                                              " must be an integer"));
          theme.priority = static_cast<int>(p->value<int64_t>().value());
        }
        std::string theme_where = absl::StrCat("theme '", theme.id, "'");
        ASSIGN_OR_RETURN(auto subs, Tables(*tt, "subtheme", theme_where));
        for (const toml::table* st : subs) {
          SubTheme sub;
          sub.line = static_cast<int>(st->source().begin.line);
          std::string sub_where = absl::StrCat("a [[kind.theme.subtheme]] of ", theme_where);
          RETURN_IF_ERROR(CheckKeys(*st, sub_where, node_keys));
          RETURN_IF_ERROR(Common(*st, sub_where, &sub.key, &sub.title, &sub.definition,
                                 &sub.cues));
          sub.id = absl::StrCat(theme.id, ".", sub.key);
          RETURN_IF_ERROR(claim(sub.id, sub.line));
          theme.subthemes.push_back(std::move(sub));
        }
        kind.themes.push_back(std::move(theme));
      }
      tax.kinds.push_back(std::move(kind));
    }

    if (const toml::node* labels = root.get("labels")) {
      if (!labels->is_table()) return Error(*labels, "'labels' must be a table of tables");
      for (auto&& [scope, node] : *labels->as_table()) {
        std::string repo(scope.str());
        if (repo != "global" && std::count(repo.begin(), repo.end(), '/') != 1) {
          return Error(node, absl::StrCat("[labels.\"", repo,
                                          "\"] must be 'global' or a repository OWNER/NAME"));
        }
        if (!node.is_table()) {
          return Error(node, absl::StrCat("labels.", repo, " must be a table"));
        }
        for (auto&& [label, target] : *node.as_table()) {
          LabelMapping mapping;
          mapping.label = NormalizeLabel(std::string(label.str()));
          mapping.repo = repo == "global" ? "" : absl::AsciiStrToLower(repo);
          mapping.line = static_cast<int>(target.source().begin.line);
          std::string what = absl::StrCat("the mapping of label '", std::string(label.str()), "'");
          if (auto single = target.value<std::string>(); target.is_string() && single) {
            mapping.targets.push_back(*single);
          } else {
            RETURN_IF_ERROR(StringList(target, what, &mapping.targets));
          }
          for (const std::string& t : mapping.targets) {
            if (t != "llm" && seen.count(t) == 0) {
              return Error(target, absl::StrCat(what, " names unknown node '", t, "'"));
            }
          }
          tax.labels.push_back(std::move(mapping));
        }
      }
    }
    return tax;
  }

 private:
  std::string source_;
};

}  // namespace

std::string Taxonomy::Tag() const { return absl::StrCat(name, "/", version); }

const Kind* Taxonomy::FindKind(absl::string_view id) const {
  for (const Kind& k : kinds) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

const Theme* Taxonomy::FindTheme(absl::string_view id) const {
  for (const Kind& k : kinds) {
    for (const Theme& t : k.themes) {
      if (t.id == id) return &t;
    }
  }
  return nullptr;
}

const SubTheme* Taxonomy::FindSubTheme(absl::string_view id) const {
  for (const Kind& k : kinds) {
    for (const Theme& t : k.themes) {
      for (const SubTheme& s : t.subthemes) {
        if (s.id == id) return &s;
      }
    }
  }
  return nullptr;
}

bool Taxonomy::HasNode(absl::string_view id) const {
  return FindKind(id) != nullptr || FindTheme(id) != nullptr || FindSubTheme(id) != nullptr;
}

std::string NormalizeLabel(absl::string_view label) {
  std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(label));
  std::string out;
  for (size_t i = 0; i < lower.size(); ++i) {
    char c = lower[i];
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < lower.size() && absl::ascii_isspace(static_cast<unsigned char>(lower[j]))) ++j;
      bool near_colon = (!out.empty() && out.back() == ':') || (j < lower.size() && lower[j] == ':');
      if (!near_colon) out.push_back(' ');
      i = j - 1;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<Taxonomy> ParseTaxonomy(absl::string_view text, absl::string_view source_name) {
  std::string source(source_name);
  try {
    toml::table root = toml::parse(std::string_view(text.data(), text.size()),
                                   std::string_view(source));
    return Parser(source).Parse(root);
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", static_cast<int>(e.source().begin.line),
                                                   ": TOML syntax error: ", std::string(e.description())));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": cannot read taxonomy: ", e.what()));
  }
}

absl::StatusOr<Taxonomy> LoadTaxonomyFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path, "taxonomy"));
  return ParseTaxonomy(text, path);
}

std::string DefaultTaxonomyPath() {
  if (const char* env = std::getenv("ISSUESCOPE_TAXONOMY"); env != nullptr && *env != '\0') {
    return env;
  }
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    std::string installed = dir + "/../share/issuescope/taxonomies/llm-dl-1.toml";
    if (access(installed.c_str(), R_OK) == 0) return installed;
  }
  return ISSUESCOPE_DEFAULT_TAXONOMY_PATH;
}

}  // namespace issuescope::taxonomy
