#include "deploy/cli/taxonomy_command.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "indexer/classifier.h"
#include "indexer/classifier_data.h"
#include "indexer/classifier_eval.h"
#include "indexer/classifier_model.h"
#include "indexer/taxonomy.h"
#include "nlohmann/json.hpp"

namespace issuescope::cli {
namespace {

using classifier::LabeledIssue;

absl::StatusOr<taxonomy::Taxonomy> LoadTaxonomy(const std::string& path) {
  return taxonomy::LoadTaxonomyFile(path.empty() ? taxonomy::DefaultTaxonomyPath() : path);
}

absl::StatusOr<std::optional<classifier::LinearModel>> LoadModel(const std::string& path) {
  if (path.empty()) return std::optional<classifier::LinearModel>();
  ASSIGN_OR_RETURN(classifier::LinearModel model, classifier::LinearModel::Load(path));
  return std::optional<classifier::LinearModel>(std::move(model));
}

// Binary collapses `value` to positive / non-positive when the field is scored as a detector.
std::string Binary(const std::string& value, const std::string& positive) {
  if (positive.empty()) return value;
  return value == positive ? positive : absl::StrCat("non-", positive);
}

// AddHeads trains the head(s) of one field with the chosen algorithm(s) and adds them.
absl::Status AddHeads(const char* name, const std::vector<classifier::FeatureVector>& xs,
                      const std::vector<std::string>& ys,
                      const classifier::FeatureOptions& features,
                      const classifier::TrainOptions& train, const TaxonomyTrainOptions& options,
                      classifier::LinearModel* model) {
  for (int member = 0; member < options.ensemble &&
                      (options.algorithm == "logreg" || options.algorithm == "both");
       ++member) {
    classifier::TrainOptions seeded = train;
    seeded.seed = train.seed + static_cast<uint32_t>(member);
    ASSIGN_OR_RETURN(classifier::Head head,
                     classifier::TrainHead(name, xs, ys, features, seeded));
    std::printf("trained %-11s head %-8s on %zu examples, %zu classes (seed %u)\n",
                head.type.c_str(), name, ys.size(), head.classes.size(), seeded.seed);
    model->AddHead(std::move(head));
  }
  if (options.algorithm == "naive-bayes" || options.algorithm == "both") {
    ASSIGN_OR_RETURN(classifier::Head head,
                     classifier::TrainNaiveBayesHead(name, xs, ys, features, options.nb_alpha));
    std::printf("trained %-11s head %-8s on %zu examples, %zu classes\n", head.type.c_str(), name,
                ys.size(), head.classes.size());
    model->AddHead(std::move(head));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunTaxonomyTrain(const TaxonomyTrainOptions& options) {
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomy(options.taxonomy));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> data, classifier::ReadIssuesFile(options.data));
  if (options.algorithm != "logreg" && options.algorithm != "naive-bayes" &&
      options.algorithm != "both") {
    return absl::InvalidArgumentError("--algorithm must be logreg, naive-bayes or both");
  }
  if (options.hash_bits < 8 || options.hash_bits > 24) {
    return absl::InvalidArgumentError("--hash-bits must be in [8, 24]");
  }
  classifier::FeatureOptions features;
  features.hash_bits = options.hash_bits;
  features.max_body_tokens = options.max_body_tokens;
  features.title_char_ngrams = options.title_char_ngrams;
  features.title_weight = options.title_weight;
  classifier::TrainOptions train;
  train.epochs = options.epochs;
  train.learning_rate = options.learning_rate;
  train.l2 = options.l2;
  train.seed = options.seed;
  std::vector<classifier::FeatureVector> x;
  x.reserve(data.size());
  for (const LabeledIssue& rec : data) x.push_back(classifier::Featurize(rec.issue, features));

  classifier::LinearModel model(features);
  model.set_taxonomy_tag(tax.Tag());
  const std::vector<std::pair<const char*, std::string LabeledIssue::*>> fields = {
      {"kind", &LabeledIssue::kind},
      {"theme", &LabeledIssue::theme},
      {"subtheme", &LabeledIssue::subtheme}};
  for (const auto& [name, member] : fields) {
    std::vector<classifier::FeatureVector> xs;
    std::vector<std::string> ys;
    for (size_t i = 0; i < data.size(); ++i) {
      const std::string& gold = data[i].*member;
      if (gold.empty()) continue;
      xs.push_back(x[i]);
      ys.push_back(gold);
    }
    if (ys.empty()) continue;
    RETURN_IF_ERROR(AddHeads(name, xs, ys, features, train, options, &model));
  }
  {
    std::vector<classifier::FeatureVector> xs;
    std::vector<std::string> ys;
    for (size_t i = 0; i < data.size(); ++i) {
      if (!data[i].llm.has_value()) continue;
      xs.push_back(x[i]);
      ys.push_back(*data[i].llm ? "true" : "false");
    }
    if (!ys.empty()) RETURN_IF_ERROR(AddHeads("llm", xs, ys, features, train, options, &model));
  }
  if (model.heads().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.data, ": no record carries a gold kind, theme, subtheme or llm field"));
  }
  RETURN_IF_ERROR(model.Save(options.out));
  std::printf("wrote %s (taxonomy %s)\n", options.out.c_str(), tax.Tag().c_str());
  return absl::OkStatus();
}

absl::Status RunTaxonomyEval(const TaxonomyEvalOptions& options) {
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomy(options.taxonomy));
  ASSIGN_OR_RETURN(auto model, LoadModel(options.model));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> data, classifier::ReadIssuesFile(options.data));
  classifier::ClassifierOptions weights;
  weights.kind_cue_weight = options.kind_cue_weight;
  weights.theme_model_weight = options.theme_model_weight;
  classifier::Classifier clf(&tax, model ? &*model : nullptr, weights);
  // gold/predicted per field, only over records carrying that gold field.
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> pairs;
  const int positive_depth =
      options.positive.empty()
          ? 0
          : 1 + static_cast<int>(std::count(options.positive.begin(), options.positive.end(), '.'));
  for (const LabeledIssue& rec : data) {
    classifier::Classification c = clf.Classify(rec.issue);
    auto add = [&](const char* field, int depth, const std::string& gold,
                   const std::string& predicted) {
      if (gold.empty()) return;
      const std::string& pos = depth == positive_depth ? options.positive : std::string();
      pairs[field].first.push_back(Binary(gold, pos));
      pairs[field].second.push_back(Binary(predicted, pos));
    };
    add("kind", 1, rec.kind, c.kind);
    // A detector counts an issue as tagged X when X is its primary or a secondary theme (or
    // any of its sub-themes).
    std::string theme = c.theme.empty() ? "(none)" : c.theme;
    if (positive_depth == 2 && std::count(c.secondary_themes.begin(), c.secondary_themes.end(),
                                          options.positive) > 0) {
      theme = options.positive;
    }
    std::string subtheme = c.subtheme.empty() ? "(none)" : c.subtheme;
    if (positive_depth == 3 &&
        std::count(c.subthemes.begin(), c.subthemes.end(), options.positive) > 0) {
      subtheme = options.positive;
    }
    add("theme", 2, rec.theme, theme);
    add("subtheme", 3, rec.subtheme, subtheme);
    if (rec.llm.has_value()) add("llm", 0, *rec.llm ? "true" : "false", c.llm ? "true" : "false");
  }
  if (pairs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.data, ": no record carries a gold kind, theme, subtheme or llm field"));
  }
  for (const char* field : {"kind", "theme", "subtheme", "llm"}) {
    auto it = pairs.find(field);
    if (it == pairs.end()) continue;
    classifier::EvalReport report =
        classifier::Evaluate(field, it->second.first, it->second.second);
    if (options.json) {
      std::printf("%s\n", classifier::ReportJson(report).c_str());
    } else {
      std::printf("%s\n", classifier::FormatReport(report).c_str());
    }
  }
  return absl::OkStatus();
}

absl::Status RunTaxonomyClassify(const TaxonomyClassifyOptions& options) {
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomy(options.taxonomy));
  ASSIGN_OR_RETURN(auto model, LoadModel(options.model));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> data, classifier::ReadIssuesFile(options.input));
  classifier::Classifier clf(&tax, model ? &*model : nullptr);
  for (const LabeledIssue& rec : data) {
    classifier::Classification c = clf.Classify(rec.issue);
    nlohmann::json j;
    if (!rec.id.empty()) j["id"] = rec.id;
    j["line"] = rec.line;
    j["kind"] = c.kind;
    j["theme"] = c.theme;
    j["secondary_themes"] = c.secondary_themes;
    j["subtheme"] = c.subtheme;
    j["subthemes"] = c.subthemes;
    j["llm"] = c.llm;
    j["taxonomy"] = c.taxonomy;
    j["evidence"] = nlohmann::json::array();
    for (const auto& e : c.evidence) {
      j["evidence"].push_back(
          {{"source", e.source}, {"target", e.target}, {"detail", e.detail}, {"score", e.score}});
    }
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return absl::OkStatus();
}

}  // namespace issuescope::cli
