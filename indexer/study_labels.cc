#include "indexer/study_labels.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/csv.h"
#include "common/status_macros.h"
#include "indexer/classifier_data.h"
#include "nlohmann/json.hpp"

namespace issuescope::study {
namespace {

using Json = nlohmann::ordered_json;

// RawLabel is a record as read, before validation.
struct RawLabel {
  std::string ref, kind, theme, subtheme, llm, reason;
  bool has_ref = false;
  int line = 0;
};

std::string Trimmed(absl::string_view s) { return std::string(absl::StripAsciiWhitespace(s)); }

std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(absl::StripAsciiWhitespace(s)); }

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// ThemeIds lists the theme ids of a kind (or of every kind) for error messages.
std::string ThemeIds(const taxonomy::Taxonomy& tax, absl::string_view kind) {
  std::vector<std::string> ids;
  for (const taxonomy::Kind& k : tax.kinds) {
    if (!kind.empty() && k.id != kind) continue;
    for (const taxonomy::Theme& t : k.themes) ids.push_back(t.id);
  }
  return absl::StrJoin(ids, ", ");
}

// Validate checks one raw record against the taxonomy and fills in implied parents. nullopt for
// a record whose four fields are all empty.
absl::StatusOr<std::optional<Label>> Validate(const RawLabel& raw, absl::string_view source,
                                              const taxonomy::Taxonomy& tax) {
  auto bad = [&](absl::string_view field, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", raw.line, ": field '", field, "': ", what));
  };
  Label label;
  label.line = raw.line;
  label.reason = Trimmed(raw.reason);
  if (!raw.has_ref || Trimmed(raw.ref).empty()) return bad("ref", "missing or empty");
  label.ref = Trimmed(raw.ref);
  absl::StatusOr<std::string> key = CanonicalRef(label.ref);
  if (!key.ok()) return bad("ref", key.status().message());
  label.key = *key;

  label.kind = classifier::NormalizeKind(raw.kind);
  std::string theme = Lower(raw.theme), subtheme = Lower(raw.subtheme), llm = Lower(raw.llm);
  if (label.kind.empty() && theme.empty() && subtheme.empty() && llm.empty()) return std::nullopt;

  std::vector<std::string> kinds;
  for (const taxonomy::Kind& k : tax.kinds) kinds.push_back(k.id);
  if (!label.kind.empty() && tax.FindKind(label.kind) == nullptr) {
    return bad("kind", absl::StrCat("unknown kind '", Trimmed(raw.kind), "' (", tax.Tag(),
                                    " has ", absl::StrJoin(kinds, ", "), ")"));
  }
  if (!subtheme.empty()) {
    const taxonomy::SubTheme* s = tax.FindSubTheme(subtheme);
    if (s == nullptr && !theme.empty()) {
      s = tax.FindSubTheme(absl::StrCat(theme, ".", subtheme));
      if (s == nullptr) s = tax.FindSubTheme(absl::StrCat(label.kind, ".", theme, ".", subtheme));
    }
    if (s == nullptr) {
      return bad("subtheme", absl::StrCat("unknown sub-theme '", Trimmed(raw.subtheme),
                                          "' (give a full id such as bug.memory.oom)"));
    }
    label.subtheme = s->id;
    const std::string parent = s->id.substr(0, s->id.rfind('.'));
    if (theme.empty()) theme = parent;
  }
  if (!theme.empty()) {
    const taxonomy::Theme* t = tax.FindTheme(theme);
    if (t == nullptr && !label.kind.empty()) t = tax.FindTheme(absl::StrCat(label.kind, ".", theme));
    if (t == nullptr) {
      return bad("theme", absl::StrCat("unknown theme '", Trimmed(raw.theme), "' (themes",
                                       label.kind.empty() ? "" : " of " + label.kind, ": ",
                                       ThemeIds(tax, label.kind), ")"));
    }
    label.theme = t->id;
    const std::string theme_kind = t->id.substr(0, t->id.find('.'));
    if (label.kind.empty()) {
      label.kind = theme_kind;
    } else if (label.kind != theme_kind) {
      return bad("theme", absl::StrCat("'", t->id, "' is a theme of kind '", theme_kind,
                                       "', not of kind '", label.kind, "'"));
    }
    if (!label.subtheme.empty() && !absl::StartsWith(label.subtheme, label.theme + ".")) {
      return bad("subtheme", absl::StrCat("'", label.subtheme, "' is not a sub-theme of theme '",
                                          label.theme, "'"));
    }
  }
  if (!llm.empty()) {
    if (llm == "true" || llm == "1" || llm == "yes" || llm == "y") label.llm = true;
    else if (llm == "false" || llm == "0" || llm == "no" || llm == "n") label.llm = false;
    else return bad("llm", absl::StrCat("'", Trimmed(raw.llm), "' is not true or false"));
  }
  return std::optional<Label>(std::move(label));
}

// JsonText reads a JSON value as label text: strings as they are, null as "", booleans and
// numbers spelt out; arrays and objects are an error.
absl::StatusOr<std::string> JsonText(const Json& v, absl::string_view source, int line,
                                     absl::string_view key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return std::string();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number()) return v.dump();
  return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": field '", key,
                                                 "': expected a string, got ", v.type_name()));
}

absl::StatusOr<std::vector<RawLabel>> ReadJsonLines(absl::string_view text,
                                                    absl::string_view source) {
  std::vector<RawLabel> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    Json j;
    try {
      j = Json::parse(line.begin(), line.end());
    } catch (const nlohmann::json::exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": not valid JSON: ", e.what()));
    }
    if (!j.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": a label must be a JSON object"));
    }
    RawLabel raw;
    raw.line = line_no;
    const std::pair<const char*, std::string RawLabel::*> keys[] = {
        {"ref", &RawLabel::ref},       {"kind", &RawLabel::kind}, {"theme", &RawLabel::theme},
        {"subtheme", &RawLabel::subtheme}, {"llm", &RawLabel::llm}, {"reason", &RawLabel::reason}};
    for (const auto& [key, member] : keys) {
      if (!j.contains(key)) continue;
      ASSIGN_OR_RETURN(raw.*member, JsonText(j[key], source, line_no, key));
      if (std::string(key) == "ref") raw.has_ref = true;
    }
    out.push_back(std::move(raw));
  }
  return out;
}

absl::StatusOr<std::vector<RawLabel>> ReadCsv(absl::string_view text, absl::string_view source) {
  ASSIGN_OR_RETURN(std::vector<CsvRow> rows, ParseCsvRows(text, source));
  if (rows.empty()) return std::vector<RawLabel>();
  std::map<std::string, size_t> columns;
  for (size_t c = 0; c < rows[0].fields.size(); ++c) {
    std::string name = Lower(rows[0].fields[c]);
    if (name == "sub-theme") name = "subtheme";
    columns.emplace(name, c);
  }
  if (columns.count("ref") == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", rows[0].line, ": the CSV header has no 'ref' column"));
  }
  const std::pair<const char*, std::string RawLabel::*> keys[] = {
      {"ref", &RawLabel::ref},           {"kind", &RawLabel::kind}, {"theme", &RawLabel::theme},
      {"subtheme", &RawLabel::subtheme}, {"llm", &RawLabel::llm},   {"reason", &RawLabel::reason}};
  std::vector<RawLabel> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].fields.size() != rows[0].fields.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ":", rows[r].line, ": row has ", rows[r].fields.size(), " fields, the header ",
          rows[0].fields.size(), " (a quote or comma out of place?)"));
    }
    RawLabel raw;
    raw.line = rows[r].line;
    raw.has_ref = true;
    for (const auto& [key, member] : keys) {
      auto it = columns.find(key);
      if (it != columns.end()) raw.*member = rows[r].fields[it->second];
    }
    out.push_back(std::move(raw));
  }
  return out;
}

// Position maps a study's canonical refs to their place in the sample.
std::map<std::string, size_t> SamplePositions(const Study& study) {
  std::map<std::string, size_t> out;
  for (size_t i = 0; i < study.units.size(); ++i) {
    absl::StatusOr<std::string> key = CanonicalRef(study.units[i].ref);
    out.emplace(key.ok() ? *key : study.units[i].ref, i);
  }
  return out;
}

}  // namespace

std::optional<std::string> FieldValue(const Label& label, absl::string_view field) {
  if (field == "kind") {
    if (label.kind.empty()) return std::nullopt;
    return label.kind;
  }
  if (field == "theme") {
    if (label.theme.empty()) return std::nullopt;
    return label.theme;
  }
  if (field == "subtheme") {
    if (label.theme.empty()) return std::nullopt;
    return label.subtheme.empty() ? std::string(kNoSubtheme) : label.subtheme;
  }
  if (field == "llm") {
    if (!label.llm.has_value()) return std::nullopt;
    return std::string(*label.llm ? "true" : "false");
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<Label>> ParseLabels(absl::string_view text, absl::string_view source,
                                               bool csv, const taxonomy::Taxonomy& taxonomy) {
  std::vector<RawLabel> raw;
  if (csv) {
    ASSIGN_OR_RETURN(raw, ReadCsv(text, source));
  } else {
    ASSIGN_OR_RETURN(raw, ReadJsonLines(text, source));
  }
  std::vector<Label> out;
  std::map<std::string, int> seen;  // key → line
  for (const RawLabel& r : raw) {
    ASSIGN_OR_RETURN(std::optional<Label> label, Validate(r, source, taxonomy));
    if (!label.has_value()) continue;
    auto [it, fresh] = seen.emplace(label->key, label->line);
    if (!fresh) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", label->line, ": ref '",
                                                     label->ref, "' is labelled again (first on line ",
                                                     it->second, ")"));
    }
    out.push_back(std::move(*label));
  }
  return out;
}

absl::StatusOr<std::vector<Label>> ReadLabelFile(const std::string& path,
                                                 const taxonomy::Taxonomy& taxonomy) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseLabels(text, path, absl::EndsWithIgnoreCase(path, ".csv"), taxonomy);
}

absl::Status CheckInSample(const std::vector<Label>& labels, const Study& study,
                           absl::string_view source) {
  const std::map<std::string, size_t> positions = SamplePositions(study);
  for (const Label& label : labels) {
    if (positions.count(label.key) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", label.line, ": ref '",
                                                     label.ref, "' is not in the sample (",
                                                     study.dir, "/sample.jsonl)"));
    }
  }
  return absl::OkStatus();
}

std::string LabelsJsonl(const std::vector<Label>& labels) {
  std::string out;
  for (const Label& l : labels) {
    Json j;
    j["ref"] = l.ref;
    j["kind"] = l.kind;
    j["theme"] = l.theme;
    j["subtheme"] = l.subtheme;
    j["llm"] = l.llm.has_value() ? Json(*l.llm) : Json(nullptr);
    if (!l.reason.empty()) j["reason"] = l.reason;
    absl::StrAppend(&out, Dump(j), "\n");
  }
  return out;
}

bool ValidAnnotatorName(absl::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

absl::Status WriteAnnotation(const std::string& dir, const Annotation& annotation) {
  if (!ValidAnnotatorName(annotation.annotator)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "annotator name '", annotation.annotator,
        "' must be letters, digits, '.', '_' or '-' (e.g. alice=labels-alice.csv)"));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir + "/labels", ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, "/labels: ", ec.message()));
  return WriteFile(absl::StrCat(dir, "/labels/", annotation.annotator, ".jsonl"),
                       LabelsJsonl(annotation.labels));
}

absl::StatusOr<std::vector<Annotation>> ReadAnnotations(const std::string& dir,
                                                        const taxonomy::Taxonomy& taxonomy) {
  std::vector<Annotation> out;
  const std::filesystem::path labels_dir = std::filesystem::path(dir) / "labels";
  std::error_code ec;
  if (!std::filesystem::is_directory(labels_dir, ec)) return out;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(labels_dir, ec)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    Annotation a;
    a.annotator = path.stem().string();
    ASSIGN_OR_RETURN(a.labels, ReadLabelFile(path.string(), taxonomy));
    out.push_back(std::move(a));
  }
  return out;
}

AgreementReport ComputeAgreement(const std::vector<Annotation>& annotations) {
  AgreementReport report;
  std::set<std::string> keys;
  std::vector<std::map<std::string, const Label*>> by_key(annotations.size());
  for (size_t r = 0; r < annotations.size(); ++r) {
    report.annotators.push_back(annotations[r].annotator);
    for (const Label& l : annotations[r].labels) {
      keys.insert(l.key);
      by_key[r][l.key] = &l;
    }
  }
  report.units = static_cast<int64_t>(keys.size());
  for (const char* field : kLabelFields) {
    FieldAgreement fa;
    fa.field = field;
    std::set<std::string> values;
    for (const Annotation& a : annotations) {
      for (const Label& l : a.labels) {
        if (auto v = FieldValue(l, field)) values.insert(*v);
      }
    }
    fa.categories.assign(values.begin(), values.end());
    std::map<std::string, int> code;
    for (size_t i = 0; i < fa.categories.size(); ++i) code[fa.categories[i]] = static_cast<int>(i);
    std::vector<std::vector<int>> ratings;  // units × annotators
    for (const std::string& key : keys) {
      std::vector<int> unit(annotations.size(), kMissing);
      for (size_t r = 0; r < annotations.size(); ++r) {
        auto it = by_key[r].find(key);
        if (it == by_key[r].end()) continue;
        if (auto v = FieldValue(*it->second, field)) unit[r] = code[*v];
      }
      ratings.push_back(std::move(unit));
    }
    const int k = static_cast<int>(fa.categories.size());
    for (const auto& unit : ratings) {
      fa.units += std::count_if(unit.begin(), unit.end(), [](int c) { return c >= 0; }) >= 2;
    }
    fa.unanimous = UnanimousShare(ratings);
    fa.fleiss = FleissKappa(CategoryCounts(ratings, k));
    fa.alpha = KrippendorffAlphaNominal(ratings);
    for (size_t i = 0; i < annotations.size(); ++i) {
      for (size_t j = i + 1; j < annotations.size(); ++j) {
        std::vector<int> a, b;
        for (const auto& unit : ratings) {
          a.push_back(unit[i]);
          b.push_back(unit[j]);
        }
        PairAgreement pa;
        pa.a = annotations[i].annotator;
        pa.b = annotations[j].annotator;
        pa.confusion = ConfusionTable(a, b, k);
        for (const auto& row : pa.confusion) {
          for (int64_t c : row) pa.units += c;
        }
        pa.agreement = ObservedAgreement(pa.confusion);
        pa.kappa = CohenKappa(pa.confusion);
        fa.pairs.push_back(std::move(pa));
      }
    }
    report.fields.push_back(std::move(fa));
  }
  return report;
}

std::vector<AdjudicationItem> Adjudicate(const std::vector<Annotation>& annotations,
                                         const Study* study) {
  std::map<std::string, std::vector<std::optional<Label>>> by_key;
  for (size_t r = 0; r < annotations.size(); ++r) {
    for (const Label& l : annotations[r].labels) {
      auto& slot = by_key[l.key];
      slot.resize(annotations.size());
      slot[r] = l;
    }
  }
  std::vector<AdjudicationItem> items;
  for (auto& [key, labels] : by_key) {
    AdjudicationItem item;
    item.key = key;
    item.labels = std::move(labels);
    item.final_label.key = key;
    int labelled = 0;
    bool single = false;
    for (const auto& l : item.labels) {
      if (!l.has_value()) continue;
      if (item.ref.empty()) item.ref = l->ref;
      ++labelled;
    }
    item.final_label.ref = item.ref;
    for (const char* field : kLabelFields) {
      std::vector<std::string> values;
      for (const auto& l : item.labels) {
        if (!l.has_value()) continue;
        if (auto v = FieldValue(*l, field)) values.push_back(*v);
      }
      if (values.empty()) continue;
      if (values.size() == 1) {
        single = true;
        continue;
      }
      if (std::any_of(values.begin(), values.end(), [&](const std::string& v) { return v != values[0]; })) {
        item.disagree_on.push_back(field);
        continue;
      }
      const std::string& v = values[0];
      const std::string f = field;
      if (f == "kind") item.final_label.kind = v;
      else if (f == "theme") item.final_label.theme = v;
      else if (f == "subtheme") item.final_label.subtheme = v == kNoSubtheme ? "" : v;
      else if (f == "llm") item.final_label.llm = v == "true";
    }
    item.status = !item.disagree_on.empty() ? "disagreed"
                  : (single || labelled < 2) ? "single"
                                             : "agreed";
    items.push_back(std::move(item));
  }
  std::map<std::string, size_t> positions;
  if (study != nullptr) positions = SamplePositions(*study);
  auto rank = [](const std::string& status) {
    return status == "disagreed" ? 0 : status == "single" ? 1 : 2;
  };
  std::stable_sort(items.begin(), items.end(), [&](const AdjudicationItem& a,
                                                   const AdjudicationItem& b) {
    if (rank(a.status) != rank(b.status)) return rank(a.status) < rank(b.status);
    auto pa = positions.find(a.key), pb = positions.find(b.key);
    const size_t ia = pa == positions.end() ? SIZE_MAX : pa->second;
    const size_t ib = pb == positions.end() ? SIZE_MAX : pb->second;
    if (ia != ib) return ia < ib;
    return a.key < b.key;
  });
  return items;
}

std::string AdjudicationSheet(const std::vector<AdjudicationItem>& items,
                              const std::vector<std::string>& annotators,
                              const std::vector<IssueRecord>& texts, bool csv) {
  std::map<std::string, const IssueRecord*> titles;
  for (const IssueRecord& t : texts) {
    if (auto key = CanonicalRef(t.ref); key.ok()) titles[*key] = &t;
  }
  const bool with_title = !titles.empty();
  std::vector<std::string> columns = {"ref", "status", "disagree_on"};
  for (const char* field : kLabelFields) {
    for (const std::string& a : annotators) columns.push_back(absl::StrCat(field, ":", a));
  }
  if (with_title) columns.push_back("title");
  columns.insert(columns.end(), {"kind", "theme", "subtheme", "llm", "reason"});
  std::string out;
  if (csv) {
    std::vector<std::string> header;
    for (const std::string& c : columns) header.push_back(CsvQuote(c));
    absl::StrAppend(&out, absl::StrJoin(header, ","), "\r\n");
  }
  for (const AdjudicationItem& item : items) {
    Json j;
    j["ref"] = item.ref;
    j["status"] = item.status;
    j["disagree_on"] = absl::StrJoin(item.disagree_on, ";");
    for (const char* field : kLabelFields) {
      for (size_t r = 0; r < annotators.size(); ++r) {
        std::optional<std::string> v;
        if (r < item.labels.size() && item.labels[r].has_value()) v = FieldValue(*item.labels[r], field);
        j[absl::StrCat(field, ":", annotators[r])] = v.has_value() ? Json(*v) : Json(nullptr);
      }
    }
    if (with_title) {
      auto it = titles.find(item.key);
      j["title"] = it == titles.end() ? "" : it->second->title;
    }
    const Label& f = item.final_label;
    j["kind"] = f.kind;
    j["theme"] = f.theme;
    j["subtheme"] = f.subtheme;
    j["llm"] = f.llm.has_value() ? Json(*f.llm) : Json(nullptr);
    j["reason"] = "";
    if (!csv) {
      absl::StrAppend(&out, Dump(j), "\n");
      continue;
    }
    std::vector<std::string> cells;
    for (const std::string& c : columns) {
      const Json& v = j[c];
      cells.push_back(CsvQuote(v.is_string()    ? v.get<std::string>()
                               : v.is_boolean() ? (v.get<bool>() ? "true" : "false")
                                                : ""));
    }
    absl::StrAppend(&out, absl::StrJoin(cells, ","), "\r\n");
  }
  return out;
}

absl::Status CheckFinal(const std::vector<Label>& labels, absl::string_view source) {
  for (const Label& l : labels) {
    for (const char* field : {"kind", "theme"}) {
      if (!FieldValue(l, field).has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            source, ":", l.line, ": ref '", l.ref, "': no final ", field,
            " (fill it in, or every field of the row stays empty and the issue is left out)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TrainingJsonl(const std::vector<Label>& labels,
                                          const std::vector<IssueRecord>& texts) {
  std::map<std::string, const IssueRecord*> by_key;
  for (const IssueRecord& t : texts) {
    if (auto key = CanonicalRef(t.ref); key.ok()) by_key[*key] = &t;
  }
  std::string out;
  for (const Label& l : labels) {
    auto it = by_key.find(l.key);
    if (it == by_key.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no text for ref '", l.ref, "' (run `issuescope study export` on the study first: "
          "it keeps the texts in texts.jsonl)"));
    }
    const IssueRecord& t = *it->second;
    Json j;
    j["id"] = l.ref;
    j["ref"] = l.ref;
    j["repo"] = t.repo;
    j["title"] = t.title;
    j["body"] = t.body;
    j["labels"] = t.labels;
    j["kind"] = l.kind;
    j["theme"] = l.theme;
    j["subtheme"] = l.subtheme;
    j["llm"] = l.llm.has_value() ? Json(*l.llm) : Json(nullptr);
    absl::StrAppend(&out, Dump(j), "\n");
  }
  return out;
}

absl::StatusOr<StudyReport> ComputeReport(const Study& study, const std::vector<Label>& labels,
                                          const taxonomy::Taxonomy& taxonomy, double confidence,
                                          absl::string_view source) {
  RETURN_IF_ERROR(CheckInSample(labels, study, source));
  StudyReport report;
  report.confidence = confidence;
  report.population = study.manifest.population;
  report.sample_size = static_cast<int64_t>(study.units.size());
  report.labelled = static_cast<int64_t>(labels.size());
  std::map<std::string, size_t> stratum_index;
  for (size_t h = 0; h < study.manifest.strata.size(); ++h) {
    stratum_index[study.manifest.strata[h].name] = h;
  }
  std::map<std::string, size_t> unit_stratum;  // key → stratum index
  for (const SampledUnit& u : study.units) {
    auto key = CanonicalRef(u.ref);
    auto h = stratum_index.find(u.stratum);
    if (key.ok() && h != stratum_index.end()) unit_stratum[*key] = h->second;
  }
  std::vector<int64_t> labelled_in(study.manifest.strata.size(), 0);
  for (const Label& l : labels) {
    auto it = unit_stratum.find(l.key);
    if (it != unit_stratum.end()) ++labelled_in[it->second];
  }
  for (size_t h = 0; h < labelled_in.size(); ++h) {
    if (labelled_in[h] == 0) report.uncovered_strata.push_back(study.manifest.strata[h].name);
  }
  auto add_rows = [&](const char* field,
                      const std::vector<std::pair<std::string, std::string>>& values) {
    std::vector<StratumTally> base(study.manifest.strata.size());
    for (size_t h = 0; h < base.size(); ++h) base[h].population = study.manifest.strata[h].population;
    std::vector<std::optional<std::string>> value_of;
    std::vector<size_t> stratum_of;
    for (const Label& l : labels) {
      auto it = unit_stratum.find(l.key);
      std::optional<std::string> v = FieldValue(l, field);
      if (it == unit_stratum.end() || !v.has_value()) continue;
      ++base[it->second].sample;
      value_of.push_back(v);
      stratum_of.push_back(it->second);
    }
    for (const auto& [value, title] : values) {
      std::vector<StratumTally> tallies = base;
      ReportRow row;
      row.field = field;
      row.value = value;
      row.title = title;
      for (size_t i = 0; i < value_of.size(); ++i) {
        ++row.labelled;
        if (*value_of[i] == value) {
          ++tallies[stratum_of[i]].hits;
          ++row.in_sample;
        }
      }
      row.share = EstimateProportion(tallies, confidence);
      row.count = row.share.proportion * row.share.population;
      row.count_low = row.share.low * row.share.population;
      row.count_high = row.share.high * row.share.population;
      report.rows.push_back(std::move(row));
    }
  };
  std::vector<std::pair<std::string, std::string>> kinds, themes;
  for (const taxonomy::Kind& k : taxonomy.kinds) {
    kinds.emplace_back(k.id, k.title);
    for (const taxonomy::Theme& t : k.themes) themes.emplace_back(t.id, t.title);
  }
  add_rows("kind", kinds);
  add_rows("theme", themes);
  add_rows("llm", {{"true", ""}});
  return report;
}

}  // namespace issuescope::study
