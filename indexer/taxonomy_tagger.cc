#include "indexer/taxonomy_tagger.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "common/hash.h"
#include "common/repo_slug.h"
#include "common/status_macros.h"
#include "embedded_model.h"
#include "embedded_taxonomy.h"

namespace issuescope::indexer {

std::string FingerprintHash(absl::string_view bytes) {
  return absl::StrFormat("%016x", Fnv1a(bytes));
}

absl::StatusOr<ModelArgument> ResolveModelArgument(absl::string_view arg,
                                                   absl::string_view taxonomy_tag) {
  ModelArgument out;
  if (arg.empty() || arg == kModelNone) return out;
  if (arg == kModelDefault) {
    const absl::string_view bytes = EmbeddedModelBytes();
    if (bytes.empty()) return out;  // a build without a model (bootstrapping one)
    ASSIGN_OR_RETURN(classifier::LinearModel model,
                     classifier::LinearModel::Parse(bytes, EmbeddedModelName()));
    if (model.taxonomy_tag() != taxonomy_tag) return out;
    out.model = std::move(model);
    out.bytes = std::string(bytes);
    out.source = std::string(EmbeddedModelName());
    return out;
  }
  const std::string path(arg);
  ASSIGN_OR_RETURN(out.bytes, ReadFile(path, "model"));
  ASSIGN_OR_RETURN(classifier::LinearModel model, classifier::LinearModel::Parse(out.bytes, path));
  out.model = std::move(model);
  out.source = path;
  return out;
}

std::string ModelLabel(const classifier::LinearModel& model, absl::string_view bytes) {
  return absl::StrCat(model.name().empty() ? "unnamed" : model.name(), "@",
                      FingerprintHash(bytes).substr(0, 8));
}

absl::StatusOr<std::unique_ptr<TaxonomyTagger>> TaxonomyTagger::Create(
    const std::string& taxonomy_path, const std::string& model) {
  std::string text;
  std::string source;
  if (taxonomy_path.empty()) {
    text = std::string(EmbeddedTaxonomyText());
    source = std::string(EmbeddedTaxonomyName());
  } else {
    ASSIGN_OR_RETURN(text, ReadFile(taxonomy_path, "taxonomy"));
    source = taxonomy_path;
  }
  // The taxonomy's tag decides whether the default model applies.
  ASSIGN_OR_RETURN(taxonomy::Taxonomy parsed, taxonomy::ParseTaxonomy(text, source));
  ASSIGN_OR_RETURN(ModelArgument resolved, ResolveModelArgument(model, parsed.Tag()));
  return Build(std::move(parsed), text, source, std::move(resolved.model), resolved.bytes);
}

absl::StatusOr<std::unique_ptr<TaxonomyTagger>> TaxonomyTagger::FromText(
    absl::string_view text, absl::string_view source,
    std::optional<classifier::LinearModel> model, absl::string_view model_bytes) {
  ASSIGN_OR_RETURN(taxonomy::Taxonomy parsed, taxonomy::ParseTaxonomy(text, source));
  return Build(std::move(parsed), text, source, std::move(model), model_bytes);
}

absl::StatusOr<std::unique_ptr<TaxonomyTagger>> TaxonomyTagger::Build(
    taxonomy::Taxonomy parsed, absl::string_view text, absl::string_view source,
    std::optional<classifier::LinearModel> model, absl::string_view model_bytes) {
  auto tax = std::make_unique<taxonomy::Taxonomy>(std::move(parsed));
  std::unique_ptr<classifier::LinearModel> owned_model;
  std::string model_hash = "none";
  std::string model_label;
  if (model.has_value()) {
    if (!model->taxonomy_tag().empty() && model->taxonomy_tag() != tax->Tag()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model was trained for taxonomy ", model->taxonomy_tag(),
                       " but the taxonomy ", source, " is ", tax->Tag()));
    }
    model_label = ModelLabel(*model, model_bytes);
    owned_model = std::make_unique<classifier::LinearModel>(std::move(*model));
    model_hash = FingerprintHash(model_bytes);
  }
  std::string fingerprint = absl::StrCat(tax->Tag(), " taxonomy=", FingerprintHash(text),
                                         " model=", model_hash);
  return std::unique_ptr<TaxonomyTagger>(new TaxonomyTagger(
      std::move(tax), std::move(owned_model), std::move(fingerprint), std::move(model_label)));
}

TaxonomyTagger::TaxonomyTagger(std::unique_ptr<taxonomy::Taxonomy> taxonomy,
                               std::unique_ptr<classifier::LinearModel> model,
                               std::string fingerprint, std::string model_label)
    : taxonomy_(std::move(taxonomy)),
      model_(std::move(model)),
      classifier_(std::make_unique<classifier::Classifier>(taxonomy_.get(), model_.get())),
      fingerprint_(std::move(fingerprint)),
      model_label_(std::move(model_label)) {}

void TaxonomyTagger::Tag(v1::IssueWithComments* iwc) {
  v1::Issue* issue = iwc->mutable_issue();
  classifier::IssueText text;
  text.title = issue->title();
  text.body = issue->body();
  text.repo = RepoFullName(issue->repo());
  text.labels.assign(issue->labels().begin(), issue->labels().end());
  const classifier::Classification c = classifier_->Classify(text);

  v1::Tags* tags = issue->mutable_tags();
  tags->Clear();
  tags->set_taxonomy(c.taxonomy);
  tags->set_kind(c.kind);
  tags->set_theme(c.theme);
  for (const std::string& t : c.secondary_themes) tags->add_secondary_themes(t);
  for (const std::string& s : c.subthemes) tags->add_subthemes(s);
  tags->set_llm(c.llm);
  if (!model_label_.empty()) tags->set_model(model_label_);
  std::set<std::string> seen_evidence;
  std::set<std::string> seen_keywords;
  for (const classifier::Evidence& e : c.evidence) {
    std::string line = absl::StrCat(e.source, ":", e.detail, " -> ", e.target);
    if (seen_evidence.insert(line).second) tags->add_evidence(std::move(line));
    if (e.source == "cue" && e.target == "llm") {
      std::string keyword = absl::AsciiStrToLower(e.detail);
      if (seen_keywords.insert(keyword).second) tags->add_keywords(std::move(keyword));
    }
  }
}

}  // namespace issuescope::indexer
