#include "study_command.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "common/time_util.h"
#include "indexer/study.h"
#include "indexer/study_labels.h"
#include "indexer/study_stats.h"
#include "indexer/taxonomy.h"
#include "nlohmann/json.hpp"
#include "search/searcher.h"

namespace issuescope::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr auto kStreamDeadline = std::chrono::hours(2);
constexpr auto kCallDeadline = std::chrono::seconds(30);

// IndexSource reads the index of a QueryTarget: a local data directory's (one Searcher for the
// whole command) or a search service's.
class IndexSource {
 public:
  explicit IndexSource(const QueryTarget& target) : target_(target) {
    if (!target.data_dir.empty()) searcher_ = search::Searcher::ForPath(LocalIndexPath(target));
  }

  // ForEachHit passes every hit of `query` to `sink`.
  absl::Status ForEachHit(const std::string& query, const search::ExportSink& sink) {
    v1::ExportRequest request;
    request.set_query(query);
    if (searcher_ != nullptr) return searcher_->Export(request, sink);
    ASSIGN_OR_RETURN(std::unique_ptr<v1::Search::Stub> stub, ConnectSearch(target_));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamDeadline);
    auto reader = stub->Export(&context, request);
    v1::SearchHit hit;
    while (reader->Read(&hit)) {
      if (absl::Status s = sink(hit); !s.ok()) {
        context.TryCancel();
        reader->Finish();
        return s;
      }
    }
    return FromGrpcStatus(reader->Finish());
  }

  absl::StatusOr<v1::IssueWithComments> GetIssue(const std::string& slug, int64_t number) {
    if (searcher_ != nullptr) return searcher_->GetIssue(slug, number);
    v1::SearchGetIssueRequest request;
    request.set_repo_slug(slug);
    request.set_number(number);
    v1::IssueWithComments out;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    ASSIGN_OR_RETURN(std::unique_ptr<v1::Search::Stub> stub, ConnectSearch(target_));
    RETURN_IF_ERROR(FromGrpcStatus(stub->GetIssue(&context, request, &out)));
    return out;
  }

  absl::StatusOr<v1::IndexStatus> Status() {
    if (searcher_ != nullptr) return searcher_->GetIndexStatus();
    v1::IndexStatus out;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    ASSIGN_OR_RETURN(std::unique_ptr<v1::Search::Stub> stub, ConnectSearch(target_));
    RETURN_IF_ERROR(
        FromGrpcStatus(stub->GetIndexStatus(&context, v1::GetIndexStatusRequest(), &out)));
    return out;
  }

 private:
  QueryTarget target_;
  std::unique_ptr<search::Searcher> searcher_;
};

// Ref is how a study names an issue: "owner/name#N" on GitHub, "tracker:owner/name#N" elsewhere.
std::string Ref(const std::string& repo_slug, const std::string& repo, int64_t number) {
  const std::string tracker = repo_slug.substr(0, repo_slug.find(':'));
  return tracker == "github" ? absl::StrCat(repo, "#", number)
                             : absl::StrCat(tracker, ":", repo, "#", number);
}

absl::StatusOr<taxonomy::Taxonomy> LoadTaxonomyOrDefault(const std::string& path) {
  study::Manifest m;
  m.taxonomy_file = path;
  return study::LoadStudyTaxonomy(m);
}

// SplitAnnotatorFile splits "ANNOTATOR=FILE".
absl::Status SplitAnnotatorFile(const std::string& arg, std::string* name, std::string* file) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", arg, "' is not ANNOTATOR=FILE (e.g. alice=labels-alice.csv)"));
  }
  *name = arg.substr(0, eq);
  *file = arg.substr(eq + 1);
  if (!study::ValidAnnotatorName(*name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "annotator name '", *name, "' must be letters, digits, '.', '_' or '-'"));
  }
  return absl::OkStatus();
}

std::string Fixed(const std::optional<double>& v, int digits) {
  return v.has_value() ? absl::StrFormat("%.*f", digits, *v) : "n/a";
}

std::string Percent(const std::optional<double>& v) {
  return v.has_value() ? absl::StrFormat("%.1f %%", 100 * *v) : "n/a";
}

// Pad aligns `text` in a column of `width` characters (UTF-8 aware: κ, α and × are one).
std::string Pad(const std::string& text, size_t width, bool left = false) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  const std::string fill(width > chars ? width - chars : 0, ' ');
  return left ? text + fill : fill + text;
}

Json Number(const std::optional<double>& v) { return v.has_value() ? Json(*v) : Json(nullptr); }

std::string WithCommas(double value) {
  std::string digits = absl::StrCat(static_cast<int64_t>(std::llround(value)));
  std::string out;
  const size_t start = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void PrintConfusion(const study::FieldAgreement& field, const study::PairAgreement& pair,
                    std::FILE* out) {
  size_t width = 8;
  for (const std::string& c : field.categories) width = std::max(width, c.size());
  absl::FPrintF(out, "\n%s: %s (rows) × %s (columns)\n%-*s", field.field, pair.a, pair.b,
                static_cast<int>(width), "");
  for (size_t j = 0; j < field.categories.size(); ++j) absl::FPrintF(out, " %5d", j + 1);
  absl::FPrintF(out, "\n");
  for (size_t i = 0; i < field.categories.size(); ++i) {
    absl::FPrintF(out, "%-*s", static_cast<int>(width), field.categories[i]);
    for (int64_t c : pair.confusion[i]) absl::FPrintF(out, " %5d", c);
    absl::FPrintF(out, "   (%d)\n", i + 1);
  }
}

void PrintAgreement(const study::AgreementReport& report, std::FILE* out) {
  absl::FPrintF(out, "agreement of %d annotators (%s) on %d issues\n\n",
                report.annotators.size(), absl::StrJoin(report.annotators, ", "), report.units);
  absl::FPrintF(out, "%-9s %6s %10s %s %s\n", "field", "units", "unanimous", Pad("Fleiss κ", 9),
                Pad("Krippendorff α", 15));
  for (const study::FieldAgreement& f : report.fields) {
    absl::FPrintF(out, "%-9s %6d %10s %9s %15s\n", f.field, f.units, Percent(f.unanimous),
                  Fixed(f.fleiss, 3), Fixed(f.alpha, 3));
  }
  absl::FPrintF(out, "\nCohen's κ per pair of annotators\n%-9s %-24s %6s %10s %8s\n", "field",
                "pair", "units", "agreement", Pad("Cohen κ", 8));
  for (const study::FieldAgreement& f : report.fields) {
    for (const study::PairAgreement& p : f.pairs) {
      absl::FPrintF(out, "%-9s %s %6d %10s %8s\n", f.field,
                    Pad(absl::StrCat(p.a, " × ", p.b), 24, true), p.units, Percent(p.agreement),
                    Fixed(p.kappa, 3));
    }
  }
  for (const study::FieldAgreement& f : report.fields) {
    if (f.field != "kind" && f.field != "theme") continue;
    for (const study::PairAgreement& p : f.pairs) PrintConfusion(f, p, out);
  }
  bool undefined = false;
  for (const study::FieldAgreement& f : report.fields) {
    undefined |= !f.fleiss || !f.alpha || !f.unanimous;
    for (const study::PairAgreement& p : f.pairs) undefined |= !p.kappa || !p.agreement;
  }
  if (undefined) {
    absl::FPrintF(out,
                  "\nn/a: undefined (no issue labelled twice, or every label in one category)\n");
  }
}

Json AgreementJson(const study::AgreementReport& report) {
  Json j;
  j["annotators"] = report.annotators;
  j["units"] = report.units;
  Json fields = Json::object();
  for (const study::FieldAgreement& f : report.fields) {
    Json fj;
    fj["units"] = f.units;
    fj["unanimous"] = Number(f.unanimous);
    fj["fleiss_kappa"] = Number(f.fleiss);
    fj["krippendorff_alpha"] = Number(f.alpha);
    fj["categories"] = f.categories;
    Json pairs = Json::array();
    for (const study::PairAgreement& p : f.pairs) {
      Json pj = {{"a", p.a}, {"b", p.b}, {"units", p.units}, {"agreement", Number(p.agreement)},
                 {"cohen_kappa", Number(p.kappa)}};
      if (f.field == "kind" || f.field == "theme") pj["confusion"] = p.confusion;
      pairs.push_back(pj);
    }
    fj["pairs"] = pairs;
    fields[f.field] = fj;
  }
  j["fields"] = fields;
  return j;
}

}  // namespace

absl::Status RunStudySample(const StudySampleOptions& options, std::FILE* out) {
  if (options.out.empty()) return absl::InvalidArgumentError("--out DIR is required");
  RETURN_IF_ERROR(CheckQueryTarget(options.target));
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomyOrDefault(options.taxonomy));
  IndexSource index(options.target);
  std::vector<study::PopulationUnit> population;
  RETURN_IF_ERROR(index.ForEachHit(options.query, [&](const v1::SearchHit& hit) {
    study::PopulationUnit u;
    u.repo_slug = hit.repo_slug();
    u.repo = hit.repo();
    u.number = hit.number();
    u.ref = Ref(hit.repo_slug(), hit.repo(), hit.number());
    u.tracker = hit.repo_slug().substr(0, hit.repo_slug().find(':'));
    u.kind = hit.tags().kind();
    u.theme = hit.tags().theme();
    u.llm = hit.tags().taxonomy().empty() ? "" : (hit.tags().llm() ? "true" : "false");
    if (hit.has_created_at() && hit.created_at().seconds() != 0) {
      u.year = absl::ToCivilYear(FromProto(hit.created_at()), absl::UTCTimeZone()).year();
    }
    u.state = IssueStateName(hit.state());
    population.push_back(std::move(u));
    return absl::OkStatus();
  }));

  study::Study s;
  s.dir = options.out;
  study::Manifest& m = s.manifest;
  m.query = options.query;
  if (!options.target.data_dir.empty()) {
    m.data_dir = std::filesystem::absolute(options.target.data_dir).lexically_normal().string();
  }
  m.server = options.target.server;
  m.taxonomy = tax.Tag();
  m.taxonomy_file = options.taxonomy.empty()
                        ? ""
                        : std::filesystem::absolute(options.taxonomy).lexically_normal().string();
  if (absl::StatusOr<v1::IndexStatus> status = index.Status(); status.ok()) {
    m.index.documents = status->documents();
    m.index.tagger = status->tagger();
    for (const v1::FeedPosition& f : status->feeds()) m.index.feeds.emplace_back(f.store_id(), f.seq());
  }
  study::SampleSpec spec;
  spec.size = options.size;
  spec.confidence = options.confidence;
  spec.margin = options.margin;
  spec.by = options.by;
  spec.seed = options.seed;
  ASSIGN_OR_RETURN(s.units, study::DrawSample(population, spec, &m));
  RETURN_IF_ERROR(study::WriteStudy(s, options.force));

  absl::FPrintF(out, "sampled %d of %d issues%s (seed %d) into %s\n", m.sample_size,
                m.population,
                options.query.empty() ? "" : absl::StrCat(" matching `", options.query, "`"),
                m.seed, options.out);
  if (m.requested_size == 0) {
    absl::FPrintF(out, "size: Cochran, %.0f %% confidence, margin ±%.1f %%, p = 0.5, N = %d\n",
                  100 * m.confidence, 100 * m.margin, m.population);
  }
  if (!m.by.empty()) {
    absl::FPrintF(out, "%d strata by %s (proportional, at least one issue each):\n",
                  m.strata.size(), absl::StrJoin(m.by, ","));
    for (const study::Stratum& st : m.strata) {
      absl::FPrintF(out, "  %-50s N = %6d  n = %5d\n", st.name, st.population, st.sample);
    }
  }
  return absl::OkStatus();
}

absl::Status RunStudyExport(const StudyExportOptions& options, std::FILE* out) {
  if (options.format != "csv" && options.format != "jsonl") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format '", options.format, "' is not csv or jsonl"));
  }
  if (options.out.empty()) return absl::InvalidArgumentError("--out FILE is required");
  ASSIGN_OR_RETURN(study::Study s, study::ReadStudy(options.sample));
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, study::LoadStudyTaxonomy(s.manifest));
  QueryTarget target = options.target;
  if (target.data_dir.empty() && target.server.empty()) {
    target.data_dir = s.manifest.data_dir;
    target.server = s.manifest.server;
  }
  RETURN_IF_ERROR(CheckQueryTarget(target));
  IndexSource index(target);
  std::vector<study::IssueRecord> issues;
  for (const study::SampledUnit& u : s.units) {
    absl::StatusOr<v1::IssueWithComments> iwc = index.GetIssue(u.repo_slug, u.number);
    if (!iwc.ok()) {
      return absl::Status(iwc.status().code(),
                          absl::StrCat("sample issue ", u.ref, ": ", iwc.status().message()));
    }
    const v1::Issue& issue = iwc->issue();
    study::IssueRecord r;
    r.ref = u.ref;
    r.repo = RepoFullName(issue.repo());
    r.title = issue.title();
    r.body = issue.body();
    r.labels.assign(issue.labels().begin(), issue.labels().end());
    for (const v1::Comment& c : iwc->comments()) {
      r.comments.push_back({c.author(), FormatDate(c.created_at()), c.body()});
    }
    r.kind = issue.tags().kind();
    r.theme = issue.tags().theme();
    r.subthemes.assign(issue.tags().subthemes().begin(), issue.tags().subthemes().end());
    r.llm = issue.tags().taxonomy().empty() ? "" : (issue.tags().llm() ? "true" : "false");
    issues.push_back(std::move(r));
  }
  study::ExportOptions export_options;
  export_options.csv = options.format == "csv";
  export_options.show_tags = options.show_tags;
  export_options.comments = options.comments;
  const std::string definitions =
      std::filesystem::path(options.out).replace_extension(".definitions.md").string();
  RETURN_IF_ERROR(WriteFile(options.out, study::AnnotatorFile(issues, export_options)));
  RETURN_IF_ERROR(WriteFile(definitions, study::TaxonomyDefinitions(tax)));
  RETURN_IF_ERROR(WriteFile(options.sample + "/texts.jsonl", study::TextsJsonl(issues)));
  absl::FPrintF(out, "wrote %d issues to %s (%s%s), the definitions of %s to %s\n", issues.size(),
                options.out, options.show_tags ? "with the index's tags" : "blind: no tags",
                options.comments ? ", with comments" : "", tax.Tag(), definitions);
  return absl::OkStatus();
}

absl::Status RunStudyImport(const StudyImportOptions& options, std::FILE* out) {
  if (options.files.empty()) {
    return absl::InvalidArgumentError("give at least one ANNOTATOR=FILE to import");
  }
  ASSIGN_OR_RETURN(study::Study s, study::ReadStudy(options.sample));
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, study::LoadStudyTaxonomy(s.manifest));
  std::vector<study::Annotation> annotations;
  std::vector<std::string> files;
  std::set<std::string> names;
  for (const std::string& arg : options.files) {
    study::Annotation a;
    std::string file;
    RETURN_IF_ERROR(SplitAnnotatorFile(arg, &a.annotator, &file));
    if (!names.insert(a.annotator).second) {
      return absl::InvalidArgumentError(absl::StrCat("annotator '", a.annotator, "' given twice"));
    }
    ASSIGN_OR_RETURN(a.labels, study::ReadLabelFile(file, tax));
    RETURN_IF_ERROR(study::CheckInSample(a.labels, s, file));
    annotations.push_back(std::move(a));
    files.push_back(file);
  }
  for (size_t i = 0; i < annotations.size(); ++i) {
    RETURN_IF_ERROR(study::WriteAnnotation(s.dir, annotations[i]));
    absl::FPrintF(out, "%s: %d labels from %s (%d of the %d sampled issues not labelled)\n",
                  annotations[i].annotator, annotations[i].labels.size(), files[i],
                  s.units.size() - annotations[i].labels.size(), s.units.size());
  }
  return absl::OkStatus();
}

absl::Status RunStudyAgreement(const StudyAgreementOptions& options, std::FILE* out) {
  if (options.sample.empty() && options.labels.empty()) {
    return absl::InvalidArgumentError("give --sample DIR or --labels ANNOTATOR=FILE (twice or more)");
  }
  std::optional<study::Study> s;
  taxonomy::Taxonomy tax;
  std::vector<study::Annotation> annotations;
  if (!options.sample.empty()) {
    ASSIGN_OR_RETURN(s, study::ReadStudy(options.sample));
    ASSIGN_OR_RETURN(tax, study::LoadStudyTaxonomy(s->manifest));
    ASSIGN_OR_RETURN(annotations, study::ReadAnnotations(s->dir, tax));
  } else {
    ASSIGN_OR_RETURN(tax, LoadTaxonomyOrDefault(options.taxonomy));
  }
  for (const std::string& arg : options.labels) {
    study::Annotation a;
    std::string file;
    RETURN_IF_ERROR(SplitAnnotatorFile(arg, &a.annotator, &file));
    for (const study::Annotation& b : annotations) {
      if (b.annotator == a.annotator) {
        return absl::InvalidArgumentError(absl::StrCat("annotator '", a.annotator, "' given twice"));
      }
    }
    ASSIGN_OR_RETURN(a.labels, study::ReadLabelFile(file, tax));
    if (s.has_value()) RETURN_IF_ERROR(study::CheckInSample(a.labels, *s, file));
    annotations.push_back(std::move(a));
  }
  if (annotations.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "agreement needs at least two annotators, have ", annotations.size(),
        s.has_value() ? " (import their labels with `issuescope study import`)" : ""));
  }
  const study::AgreementReport report = study::ComputeAgreement(annotations);
  if (options.json) {
    absl::FPrintF(out, "%s\n", AgreementJson(report).dump(-1, ' ', false,
                                                           nlohmann::json::error_handler_t::replace));
  } else {
    PrintAgreement(report, out);
  }
  return absl::OkStatus();
}

absl::Status RunStudyAdjudicate(const StudyAdjudicateOptions& options, std::FILE* out) {
  if (options.out.empty()) return absl::InvalidArgumentError("--out FILE is required");
  ASSIGN_OR_RETURN(study::Study s, study::ReadStudy(options.sample));
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, study::LoadStudyTaxonomy(s.manifest));
  ASSIGN_OR_RETURN(std::vector<study::Annotation> annotations, study::ReadAnnotations(s.dir, tax));
  if (annotations.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        s.dir, " has no labels yet (import them with `issuescope study import`)"));
  }
  const std::vector<study::AdjudicationItem> items = study::Adjudicate(annotations, &s);
  std::vector<study::IssueRecord> texts;
  const std::string texts_path = s.dir + "/texts.jsonl";
  if (std::filesystem::exists(texts_path)) {
    ASSIGN_OR_RETURN(texts, study::ReadTexts(texts_path));
  }
  if (options.resolved.empty()) {
    std::vector<std::string> names;
    for (const study::Annotation& a : annotations) names.push_back(a.annotator);
    RETURN_IF_ERROR(WriteFile(options.out, study::AdjudicationSheet(
                                               items, names, texts,
                                               absl::EndsWithIgnoreCase(options.out, ".csv"))));
    std::map<std::string, int> by_status;
    for (const study::AdjudicationItem& item : items) ++by_status[item.status];
    absl::FPrintF(out,
                  "wrote %d issues to %s: %d disagreed, %d labelled once, %d agreed; fill in the "
                  "empty final columns (kind, theme, subtheme, llm, reason), then run `issuescope "
                  "study adjudicate --sample %s --resolved %s --out labels.jsonl`\n",
                  items.size(), options.out, by_status["disagreed"], by_status["single"],
                  by_status["agreed"], s.dir, options.out);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::vector<study::Label> final_labels,
                   study::ReadLabelFile(options.resolved, tax));
  RETURN_IF_ERROR(study::CheckInSample(final_labels, s, options.resolved));
  std::set<std::string> resolved_keys;
  for (const study::Label& l : final_labels) resolved_keys.insert(l.key);
  for (const study::AdjudicationItem& item : items) {
    if (resolved_keys.count(item.key) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.resolved, ": ref '", item.ref, "' (", item.status,
                       ") has no final label; fill in its kind and theme"));
    }
  }
  RETURN_IF_ERROR(study::CheckFinal(final_labels, options.resolved));
  ASSIGN_OR_RETURN(std::string training, study::TrainingJsonl(final_labels, texts));
  RETURN_IF_ERROR(WriteFile(options.out, training));
  RETURN_IF_ERROR(WriteFile(s.dir + "/final.jsonl", study::LabelsJsonl(final_labels)));
  absl::FPrintF(out,
                "wrote %d labelled issues to %s (for `issuescope taxonomy train --data %s`) and "
                "the final labels to %s/final.jsonl\n",
                final_labels.size(), options.out, options.out, s.dir);
  return absl::OkStatus();
}

absl::Status RunStudyReport(const StudyReportOptions& options, std::FILE* out) {
  if (options.confidence <= 0 || options.confidence >= 1) {
    return absl::InvalidArgumentError("--confidence must lie strictly between 0 and 1");
  }
  ASSIGN_OR_RETURN(study::Study s, study::ReadStudy(options.sample));
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, study::LoadStudyTaxonomy(s.manifest));
  const std::string path = options.labels.empty() ? s.dir + "/final.jsonl" : options.labels;
  if (options.labels.empty() && !std::filesystem::exists(path)) {
    return absl::NotFoundError(absl::StrCat(
        path, " does not exist: adjudicate first (`issuescope study adjudicate --resolved`) or "
              "give --labels FILE"));
  }
  ASSIGN_OR_RETURN(std::vector<study::Label> labels, study::ReadLabelFile(path, tax));
  ASSIGN_OR_RETURN(study::StudyReport report,
                   study::ComputeReport(s, labels, tax, options.confidence, path));
  const study::Manifest& m = s.manifest;
  if (options.json) {
    Json j;
    j["query"] = m.query;
    j["taxonomy"] = m.taxonomy;
    j["confidence"] = report.confidence;
    j["population"] = report.population;
    j["sample_size"] = report.sample_size;
    j["labelled"] = report.labelled;
    j["strata"] = m.strata.size();
    j["uncovered_strata"] = report.uncovered_strata;
    Json rows = Json::array();
    for (const study::ReportRow& r : report.rows) {
      rows.push_back({{"field", r.field}, {"value", r.value}, {"title", r.title},
                      {"in_sample", r.in_sample}, {"labelled", r.labelled},
                      {"share", r.share.proportion}, {"share_low", r.share.low},
                      {"share_high", r.share.high}, {"count", r.count},
                      {"count_low", r.count_low}, {"count_high", r.count_high},
                      {"population", r.share.population}, {"method", r.share.method}});
    }
    j["rows"] = rows;
    absl::FPrintF(out, "%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return absl::OkStatus();
  }
  const int ci = static_cast<int>(std::lround(100 * report.confidence));
  absl::FPrintF(out, "Population: %s issues%s (taxonomy %s). Sample: %s issues (seed %d%s), %s "
                     "labelled.\n",
                WithCommas(report.population),
                m.query.empty() ? "" : absl::StrCat(" matching `", m.query, "`"), m.taxonomy,
                WithCommas(report.sample_size), m.seed,
                m.by.empty() ? "" : absl::StrCat(", ", m.strata.size(), " strata by ",
                                                 absl::StrJoin(m.by, " × ")),
                WithCommas(report.labelled));
  absl::FPrintF(out, "Estimates: %s, %d %% confidence intervals%s.\n",
                m.strata.size() > 1 ? "stratified estimator (normal approximation)"
                                    : "Wilson intervals with the finite-population correction",
                ci, m.strata.size() > 1 ? " (Wilson's where the sample shows no variance)" : "");
  if (!report.uncovered_strata.empty()) {
    absl::FPrintF(out, "Left out (no labelled issue): %s.\n",
                  absl::StrJoin(report.uncovered_strata, ", "));
  }
  std::string last_field;
  for (const study::ReportRow& r : report.rows) {
    if (r.field != last_field) {
      last_field = r.field;
      absl::FPrintF(out, "\n| %s | title | in sample | estimated share (%d %% CI) | "
                         "estimated issues (%d %% CI) |\n|---|---|---:|---:|---:|\n",
                    r.field, ci, ci);
    }
    absl::FPrintF(out, "| %s | %s | %d / %d | %.1f %% (%.1f–%.1f %%) | %s (%s–%s) |\n", r.value,
                  r.title, r.in_sample, r.labelled, 100 * r.share.proportion, 100 * r.share.low,
                  100 * r.share.high, WithCommas(r.count), WithCommas(r.count_low),
                  WithCommas(r.count_high));
  }
  return absl::OkStatus();
}

}  // namespace issuescope::cli
