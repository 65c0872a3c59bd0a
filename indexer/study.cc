#include "indexer/study.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/csv.h"
#include "common/hash.h"
#include "common/issue_sections.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "embedded_taxonomy.h"
#include "indexer/study_stats.h"
#include "nlohmann/json.hpp"

namespace issuescope::study {
namespace {

using Json = nlohmann::ordered_json;

// A spreadsheet cell holds at most 32,767 characters; longer bodies are cut in CSV files.
constexpr size_t kMaxCsvCell = 32000;

// DrawKey is the seeded pseudo-random key of an issue: FNV-1a of its canonical key, mixed with
// the seed. The same on every platform and run.
uint64_t DrawKey(absl::string_view key, uint64_t seed) {
  return SplitMix64(Fnv1a(key) ^ SplitMix64(seed));
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// CutUtf8 cuts `text` to at most `max` bytes at a character boundary, saying so.
std::string CutUtf8(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(text.substr(0, end), "\n[… cut: ", text.size() - end,
                      " more bytes; see the JSONL export for the whole text]");
}

// PlainParagraphs renders prose or template text paragraph by paragraph, keeping line breaks
// inside a paragraph (lists stay lists) unless it holds an HTML comment, which may span lines.
std::string PlainParagraphs(absl::string_view text) {
  std::vector<std::string> paragraphs;
  std::vector<std::string> lines;
  auto flush = [&] {
    if (lines.empty()) return;
    std::string joined = absl::StrJoin(lines, "\n");
    std::string plain;
    if (absl::StrContains(joined, "<!--")) {
      plain = PlainText(joined);
    } else {
      std::vector<std::string> out;
      for (const std::string& line : lines) {
        std::string p = PlainText(line);
        if (!p.empty()) out.push_back(std::move(p));
      }
      plain = absl::StrJoin(out, "\n");
    }
    if (!absl::StripAsciiWhitespace(plain).empty()) paragraphs.push_back(std::move(plain));
    lines.clear();
  };
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StripAsciiWhitespace(line).empty()) {
      flush();
    } else {
      lines.emplace_back(absl::StripTrailingAsciiWhitespace(line));
    }
  }
  flush();
  return absl::StrJoin(paragraphs, "\n\n");
}

absl::StatusOr<Json> ParseJsonLine(absl::string_view line, absl::string_view source, int line_no) {
  try {
    Json j = Json::parse(line.begin(), line.end());
    if (!j.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": a record must be a JSON object"));
    }
    return j;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", line_no, ": not valid JSON: ", e.what()));
  }
}

// Field reads a required key of a JSON object, or fails naming source, line and key.
template <typename T>
absl::StatusOr<T> Field(const Json& j, const char* key, absl::string_view source, int line_no) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, line_no > 0 ? absl::StrCat(":", line_no) : "", ": field '", key,
                     "' ", what));
  };
  if (!j.contains(key)) return bad("is missing");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    return bad(absl::StrCat("has the wrong type (", j.at(key).type_name(), ")"));
  }
}

}  // namespace

absl::StatusOr<std::string> CanonicalRef(absl::string_view ref) {
  std::string slug;
  int64_t number = 0;
  absl::Status s = ParseIssueRef(absl::StripAsciiWhitespace(ref), &slug, &number);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", ref, "' is not an issue reference (OWNER/NAME#N or TRACKER:OWNER/NAME#N)"));
  }
  return IssueKey(slug, number);
}

std::string StratumOf(const PopulationUnit& unit, const std::vector<std::string>& by) {
  if (by.empty()) return "all";
  std::vector<std::string> parts;
  for (const std::string& dim : by) {
    std::string value;
    if (dim == "repo") value = absl::AsciiStrToLower(unit.repo);
    else if (dim == "tracker") value = unit.tracker;
    else if (dim == "kind") value = unit.kind;
    else if (dim == "theme") value = unit.theme;
    else if (dim == "llm") value = unit.llm;
    else if (dim == "year") value = unit.year > 0 ? absl::StrCat(unit.year) : "";
    else if (dim == "state") value = unit.state;
    parts.push_back(absl::StrCat(dim, "=", value.empty() ? "(none)" : value));
  }
  return absl::StrJoin(parts, "|");
}

absl::StatusOr<std::vector<SampledUnit>> DrawSample(const std::vector<PopulationUnit>& population,
                                                    const SampleSpec& spec, Manifest* manifest) {
  for (const std::string& dim : spec.by) {
    if (std::find_if(std::begin(kStrataDimensions), std::end(kStrataDimensions),
                     [&](const char* d) { return dim == d; }) == std::end(kStrataDimensions)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--by: unknown dimension '", dim, "' (one of ",
                       absl::StrJoin(kStrataDimensions, ", "), ")"));
    }
  }
  if (spec.size < 0) return absl::InvalidArgumentError("--size must not be negative");
  if (spec.size == 0 && (spec.confidence <= 0 || spec.confidence >= 1 || spec.margin <= 0 ||
                         spec.margin >= 1)) {
    return absl::InvalidArgumentError("--confidence and --margin must lie strictly between 0 and 1");
  }
  // One entry per issue, keyed and ordered independently of the population's order.
  struct Entry {
    uint64_t draw;
    std::string key;
    const PopulationUnit* unit;
  };
  std::map<std::string, Entry> by_key;
  for (const PopulationUnit& unit : population) {
    std::string key = IssueKey(absl::AsciiStrToLower(unit.repo_slug), unit.number);
    const uint64_t draw = DrawKey(key, spec.seed);
    by_key.emplace(key, Entry{draw, key, &unit});
  }
  if (by_key.empty()) {
    return absl::InvalidArgumentError("the query matches no issue: nothing to sample");
  }
  std::map<std::string, std::vector<const Entry*>> strata;
  for (const auto& [key, entry] : by_key) strata[StratumOf(*entry.unit, spec.by)].push_back(&entry);

  const int64_t big_n = static_cast<int64_t>(by_key.size());
  const int64_t n = spec.size > 0 ? std::min(spec.size, big_n)
                                  : CochranSampleSize(spec.confidence, spec.margin, 0.5, big_n);
  std::vector<int64_t> sizes;
  for (const auto& [name, entries] : strata) sizes.push_back(static_cast<int64_t>(entries.size()));
  const std::vector<int64_t> alloc = AllocateProportional(sizes, n);

  manifest->seed = spec.seed;
  manifest->by = spec.by;
  manifest->requested_size = spec.size;
  manifest->confidence = spec.size > 0 ? 0 : spec.confidence;
  manifest->margin = spec.size > 0 ? 0 : spec.margin;
  manifest->population = big_n;
  manifest->strata.clear();
  std::vector<const Entry*> chosen;
  size_t h = 0;
  for (auto& [name, entries] : strata) {
    std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
      return a->draw != b->draw ? a->draw < b->draw : a->key < b->key;
    });
    chosen.insert(chosen.end(), entries.begin(), entries.begin() + alloc[h]);
    manifest->strata.push_back(Stratum{name, sizes[h], alloc[h]});
    ++h;
  }
  std::sort(chosen.begin(), chosen.end(), [](const Entry* a, const Entry* b) {
    return a->draw != b->draw ? a->draw < b->draw : a->key < b->key;
  });
  manifest->sample_size = static_cast<int64_t>(chosen.size());
  std::vector<SampledUnit> out;
  out.reserve(chosen.size());
  for (const Entry* e : chosen) {
    out.push_back(SampledUnit{e->unit->ref, absl::AsciiStrToLower(e->unit->repo_slug),
                              e->unit->number, StratumOf(*e->unit, spec.by)});
  }
  return out;
}

std::string ManifestJson(const Manifest& m) {
  Json j;
  j["query"] = m.query;
  Json source = Json::object();
  if (!m.data_dir.empty()) source["data"] = m.data_dir;
  if (!m.server.empty()) source["server"] = m.server;
  j["source"] = source;
  Json feeds = Json::object();
  for (const auto& [store, seq] : m.index.feeds) feeds[store] = seq;
  j["index"] = {{"documents", m.index.documents}, {"tagger", m.index.tagger}, {"feeds", feeds}};
  int version = 0;
  (void)absl::SimpleAtoi(m.taxonomy.substr(m.taxonomy.rfind('/') + 1), &version);
  j["taxonomy"] = {{"name", m.taxonomy.substr(0, m.taxonomy.rfind('/'))},
                   {"version", version},
                   {"tag", m.taxonomy},
                   {"file", m.taxonomy_file}};
  j["seed"] = m.seed;
  j["by"] = m.by;
  Json size = {{"requested", m.requested_size}};
  if (m.requested_size == 0) {
    size["confidence"] = m.confidence;
    size["margin"] = m.margin;
    size["method"] = "Cochran, p = 0.5, finite-population correction";
  }
  j["size"] = size;
  j["population"] = m.population;
  j["sample_size"] = m.sample_size;
  Json strata = Json::array();
  for (const Stratum& s : m.strata) {
    strata.push_back({{"stratum", s.name}, {"population", s.population}, {"sample", s.sample}});
  }
  j["strata"] = strata;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

absl::StatusOr<Manifest> ParseManifest(absl::string_view text, absl::string_view source) {
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not valid JSON: ", e.what()));
  }
  Manifest m;
  try {
    m.query = j.at("query").get<std::string>();
    const Json& src = j.at("source");
    m.data_dir = src.value("data", "");
    m.server = src.value("server", "");
    const Json& index = j.at("index");
    m.index.documents = index.value("documents", int64_t{0});
    m.index.tagger = index.value("tagger", "");
    if (index.contains("feeds")) {
      for (auto it = index["feeds"].begin(); it != index["feeds"].end(); ++it) {
        m.index.feeds.emplace_back(it.key(), it.value().get<uint64_t>());
      }
    }
    m.taxonomy = j.at("taxonomy").at("tag").get<std::string>();
    m.taxonomy_file = j.at("taxonomy").value("file", "");
    m.seed = j.at("seed").get<uint64_t>();
    m.by = j.at("by").get<std::vector<std::string>>();
    m.requested_size = j.at("size").at("requested").get<int64_t>();
    m.confidence = j.at("size").value("confidence", 0.0);
    m.margin = j.at("size").value("margin", 0.0);
    m.population = j.at("population").get<int64_t>();
    m.sample_size = j.at("sample_size").get<int64_t>();
    for (const Json& s : j.at("strata")) {
      m.strata.push_back(Stratum{s.at("stratum").get<std::string>(),
                                 s.at("population").get<int64_t>(), s.at("sample").get<int64_t>()});
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a study manifest (", e.what(), ")"));
  }
  return m;
}

absl::Status WriteStudy(const Study& study, bool overwrite) {
  const std::string sample_path = study.dir + "/sample.jsonl";
  if (!overwrite && std::filesystem::exists(sample_path)) {
    return absl::FailedPreconditionError(
        absl::StrCat(study.dir, " already holds a sample; choose another --out directory"));
  }
  std::error_code ec;
  std::filesystem::create_directories(study.dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", study.dir, ": ", ec.message()));
  std::string lines;
  for (const SampledUnit& u : study.units) {
    Json j;
    j["ref"] = u.ref;
    j["repo_slug"] = u.repo_slug;
    j["number"] = u.number;
    j["stratum"] = u.stratum;
    absl::StrAppend(&lines, Dump(j), "\n");
  }
  RETURN_IF_ERROR(WriteFile(sample_path, lines));
  return WriteFile(study.dir + "/manifest.json", ManifestJson(study.manifest));
}

absl::StatusOr<Study> ReadStudy(const std::string& dir) {
  Study study;
  study.dir = dir;
  const std::string manifest_path = dir + "/manifest.json";
  const std::string sample_path = dir + "/sample.jsonl";
  if (!std::filesystem::exists(manifest_path) || !std::filesystem::exists(sample_path)) {
    return absl::NotFoundError(absl::StrCat(
        dir, " is not a study directory (no manifest.json and sample.jsonl; run `issuescope "
             "study sample ... --out ", dir, "` first)"));
  }
  ASSIGN_OR_RETURN(std::string manifest_text, ReadFile(manifest_path));
  ASSIGN_OR_RETURN(study.manifest, ParseManifest(manifest_text, manifest_path));
  ASSIGN_OR_RETURN(std::string text, ReadFile(sample_path));
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    ASSIGN_OR_RETURN(Json j, ParseJsonLine(line, sample_path, line_no));
    SampledUnit u;
    ASSIGN_OR_RETURN(u.ref, Field<std::string>(j, "ref", sample_path, line_no));
    ASSIGN_OR_RETURN(u.repo_slug, Field<std::string>(j, "repo_slug", sample_path, line_no));
    ASSIGN_OR_RETURN(u.number, Field<int64_t>(j, "number", sample_path, line_no));
    ASSIGN_OR_RETURN(u.stratum, Field<std::string>(j, "stratum", sample_path, line_no));
    study.units.push_back(std::move(u));
  }
  return study;
}

absl::StatusOr<taxonomy::Taxonomy> LoadStudyTaxonomy(const Manifest& manifest) {
  absl::StatusOr<taxonomy::Taxonomy> tax;
  if (!manifest.taxonomy_file.empty()) {
    tax = taxonomy::LoadTaxonomyFile(manifest.taxonomy_file);
  } else {
    tax = taxonomy::LoadTaxonomyFile(taxonomy::DefaultTaxonomyPath());
    if (absl::IsNotFound(tax.status())) {
      tax = taxonomy::ParseTaxonomy(indexer::EmbeddedTaxonomyText(),
                                    indexer::EmbeddedTaxonomyName());
    }
  }
  if (!tax.ok()) return tax.status();
  if (!manifest.taxonomy.empty() && tax->Tag() != manifest.taxonomy) {
    return absl::FailedPreconditionError(
        absl::StrCat("the study was sampled with taxonomy ", manifest.taxonomy, " but ",
                     tax->source, " is ", tax->Tag()));
  }
  return tax;
}

std::string AnnotatorText(absl::string_view body) {
  std::string out;
  bool last_verbatim = false;
  for (const Section& s : SplitSections(body)) {
    absl::string_view text = body.substr(s.begin, s.end - s.begin);
    const bool verbatim = s.kind != SectionKind::kProse && s.kind != SectionKind::kTemplate;
    std::string rendered;
    if (!verbatim) {
      rendered = PlainParagraphs(text);
    } else {
      rendered = std::string(absl::StripTrailingAsciiWhitespace(text));
      while (!rendered.empty() && rendered.front() == '\n') rendered.erase(0, 1);
    }
    if (absl::StripAsciiWhitespace(rendered).empty()) continue;
    // Neighbouring code, log and exception lines stay together as in the body.
    if (!out.empty()) out += verbatim && last_verbatim ? "\n" : "\n\n";
    out += rendered;
    last_verbatim = verbatim;
  }
  return out;
}

std::string AnnotatorFile(const std::vector<IssueRecord>& issues, const ExportOptions& options) {
  std::vector<std::string> columns = {"ref", "repo", "title", "labels", "body"};
  if (options.show_tags) {
    columns.insert(columns.end(), {"tag_kind", "tag_theme", "tag_subthemes", "tag_llm"});
  }
  columns.insert(columns.end(), {"kind", "theme", "subtheme", "llm", "notes"});
  std::string out;
  if (options.csv) {
    std::vector<std::string> quoted;
    for (const std::string& c : columns) quoted.push_back(CsvQuote(c));
    absl::StrAppend(&out, absl::StrJoin(quoted, ","), "\r\n");
  }
  for (const IssueRecord& issue : issues) {
    std::string body = AnnotatorText(issue.body);
    if (options.comments) {
      for (const IssueComment& c : issue.comments) {
        absl::StrAppend(&body, "\n\n--- comment by ", c.author.empty() ? "(unknown)" : c.author,
                        c.created_at.empty() ? "" : absl::StrCat(" on ", c.created_at), " ---\n",
                        AnnotatorText(c.body));
      }
    }
    if (options.csv) {
      std::vector<std::string> cells = {issue.ref, issue.repo, issue.title,
                                        absl::StrJoin(issue.labels, ";"),
                                        CutUtf8(body, kMaxCsvCell)};
      if (options.show_tags) {
        cells.insert(cells.end(),
                     {issue.kind, issue.theme, absl::StrJoin(issue.subthemes, ";"), issue.llm});
      }
      cells.insert(cells.end(), {"", "", "", "", ""});
      for (std::string& c : cells) c = CsvQuote(c);
      absl::StrAppend(&out, absl::StrJoin(cells, ","), "\r\n");
      continue;
    }
    Json j;
    j["ref"] = issue.ref;
    j["repo"] = issue.repo;
    j["title"] = issue.title;
    j["labels"] = issue.labels;
    j["body"] = body;
    if (options.show_tags) {
      j["tag_kind"] = issue.kind;
      j["tag_theme"] = issue.theme;
      j["tag_subthemes"] = issue.subthemes;
      j["tag_llm"] = issue.llm.empty() ? Json(nullptr) : Json(issue.llm == "true");
    }
    j["kind"] = "";
    j["theme"] = "";
    j["subtheme"] = "";
    j["llm"] = nullptr;
    j["notes"] = "";
    absl::StrAppend(&out, Dump(j), "\n");
  }
  return out;
}

std::string TaxonomyDefinitions(const taxonomy::Taxonomy& tax) {
  std::string out = absl::StrCat("# Taxonomy ", tax.Tag(), "\n\n", tax.description, "\n\n");
  std::vector<std::string> kinds;
  for (const taxonomy::Kind& k : tax.kinds) kinds.push_back(absl::StrCat("`", k.id, "`"));
  absl::StrAppend(
      &out, "## How to fill in the columns\n\n",
      "- `kind`: one of ", absl::StrJoin(kinds, ", "), ".\n",
      "- `theme`: the primary theme's id, e.g. `", tax.kinds.empty() || tax.kinds[0].themes.empty()
          ? std::string("bug.memory") : tax.kinds[0].themes[0].id,
      "` (the short name after the kind is accepted too).\n",
      "- `subtheme`: a sub-theme of that theme, only when one clearly fits; else leave it empty.\n",
      "- `llm`: `true` or `false`.\n",
      "- `notes`: anything worth telling the adjudicator (not read by `study import`).\n",
      "- A row left entirely empty counts as not labelled.\n\n");
  for (const taxonomy::Kind& k : tax.kinds) {
    absl::StrAppend(&out, "## `", k.id, "`: ", k.title, "\n\n", k.definition, "\n\n");
    for (const taxonomy::Theme& t : k.themes) {
      absl::StrAppend(&out, "### `", t.id, "`: ", t.title, "\n\n", t.definition, "\n\n");
      for (const taxonomy::SubTheme& s : t.subthemes) {
        absl::StrAppend(&out, "- `", s.id, "`: ", s.title, ". ", s.definition, "\n");
      }
      if (!t.subthemes.empty()) out += "\n";
    }
  }
  return out;
}

std::string TextsJsonl(const std::vector<IssueRecord>& issues) {
  std::string out;
  for (const IssueRecord& issue : issues) {
    Json j;
    j["ref"] = issue.ref;
    j["repo"] = issue.repo;
    j["title"] = issue.title;
    j["body"] = issue.body;
    j["labels"] = issue.labels;
    absl::StrAppend(&out, Dump(j), "\n");
  }
  return out;
}

absl::StatusOr<std::vector<IssueRecord>> ReadTexts(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::vector<IssueRecord> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    ASSIGN_OR_RETURN(Json j, ParseJsonLine(line, path, line_no));
    IssueRecord r;
    ASSIGN_OR_RETURN(r.ref, Field<std::string>(j, "ref", path, line_no));
    ASSIGN_OR_RETURN(r.repo, Field<std::string>(j, "repo", path, line_no));
    ASSIGN_OR_RETURN(r.title, Field<std::string>(j, "title", path, line_no));
    ASSIGN_OR_RETURN(r.body, Field<std::string>(j, "body", path, line_no));
    ASSIGN_OR_RETURN(r.labels, Field<std::vector<std::string>>(j, "labels", path, line_no));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace issuescope::study
