#include "taxonomy_command.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "indexer/classifier.h"
#include "indexer/classifier_data.h"
#include "indexer/classifier_eval.h"
#include "indexer/classifier_model.h"
#include "indexer/taxonomy.h"
#include "indexer/taxonomy_tagger.h"
#include "nlohmann/json.hpp"

namespace issuescope::cli {
namespace {

using classifier::LabeledIssue;

absl::StatusOr<taxonomy::Taxonomy> LoadTaxonomy(const std::string& path) {
  return taxonomy::LoadTaxonomyFile(path.empty() ? taxonomy::DefaultTaxonomyPath() : path);
}

// LoadModel resolves a --model argument ("default", "none" or a file) for `tax`.
absl::StatusOr<indexer::ModelArgument> LoadModel(const std::string& arg,
                                                 const taxonomy::Taxonomy& tax) {
  return indexer::ResolveModelArgument(arg, tax.Tag());
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
                      bool verbose, classifier::LinearModel* model) {
  for (int member = 0; member < options.ensemble &&
                      (options.algorithm == "logreg" || options.algorithm == "both");
       ++member) {
    classifier::TrainOptions seeded = train;
    seeded.seed = train.seed + static_cast<uint32_t>(member);
    ASSIGN_OR_RETURN(classifier::Head head,
                     classifier::TrainHead(name, xs, ys, features, seeded));
    if (verbose) {
      std::printf("trained %-11s head %-8s on %zu examples, %zu classes (seed %u)\n",
                  head.type.c_str(), name, ys.size(), head.classes.size(), seeded.seed);
    }
    model->AddHead(std::move(head));
  }
  if (options.algorithm == "naive-bayes" || options.algorithm == "both") {
    ASSIGN_OR_RETURN(classifier::Head head,
                     classifier::TrainNaiveBayesHead(name, xs, ys, features, options.nb_alpha));
    if (verbose) {
      std::printf("trained %-11s head %-8s on %zu examples, %zu classes\n", head.type.c_str(),
                  name, ys.size(), head.classes.size());
    }
    model->AddHead(std::move(head));
  }
  return absl::OkStatus();
}

// ClassifierWeights are the classifier options the eval flags choose.
classifier::ClassifierOptions ClassifierWeights(const TaxonomyEvalOptions& options) {
  classifier::ClassifierOptions weights;
  weights.kind_cue_weight = options.kind_cue_weight;
  weights.theme_model_weight = options.theme_model_weight;
  weights.strong_theme_kind_weight = options.strong_symptom_weight;
  weights.signal_text = !options.raw_body;
  return weights;
}

// Stratum is the gold kind and theme of a record (splits keep their proportions).
std::string Stratum(const LabeledIssue& rec) { return absl::StrCat(rec.kind, "|", rec.theme); }

// TrainModel trains a head per gold field present in `data` (kind, theme, subtheme, llm).
absl::StatusOr<classifier::LinearModel> TrainModel(const std::vector<const LabeledIssue*>& data,
                                                   const TaxonomyTrainOptions& options,
                                                   const std::string& taxonomy_tag,
                                                   bool verbose) {
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
  features.signal_text = options.signal_text_features;
  classifier::TrainOptions train;
  train.epochs = options.epochs;
  train.learning_rate = options.learning_rate;
  train.l2 = options.l2;
  train.seed = options.seed;
  std::vector<classifier::FeatureVector> x;
  x.reserve(data.size());
  for (const LabeledIssue* rec : data) x.push_back(classifier::Featurize(rec->issue, features));

  classifier::LinearModel model(features);
  model.set_taxonomy_tag(taxonomy_tag);
  const std::vector<std::pair<const char*, std::string LabeledIssue::*>> fields = {
      {"kind", &LabeledIssue::kind},
      {"theme", &LabeledIssue::theme},
      {"subtheme", &LabeledIssue::subtheme}};
  for (const auto& [name, member] : fields) {
    std::vector<classifier::FeatureVector> xs;
    std::vector<std::string> ys;
    for (size_t i = 0; i < data.size(); ++i) {
      const std::string& gold = data[i]->*member;
      if (gold.empty()) continue;
      xs.push_back(x[i]);
      ys.push_back(gold);
    }
    if (ys.empty()) continue;
    RETURN_IF_ERROR(AddHeads(name, xs, ys, features, train, options, verbose, &model));
  }
  {
    std::vector<classifier::FeatureVector> xs;
    std::vector<std::string> ys;
    for (size_t i = 0; i < data.size(); ++i) {
      if (!data[i]->llm.has_value()) continue;
      xs.push_back(x[i]);
      ys.push_back(*data[i]->llm ? "true" : "false");
    }
    if (!ys.empty()) {
      RETURN_IF_ERROR(AddHeads("llm", xs, ys, features, train, options, verbose, &model));
    }
  }
  if (model.heads().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.data, ": no record carries a gold kind, theme, subtheme or llm field"));
  }
  return model;
}

// Pairs holds gold and predicted values per field, over the records carrying that gold field.
using Pairs = std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>>;

// AddPredictions classifies `rec` and appends its gold/predicted values to `pairs`. With a
// `positive` (e.g. "bug", "bug.performance"), the field it belongs to is scored as a binary
// detector; a theme (sub-theme) detector fires when the positive is the primary or a secondary
// theme (any sub-theme found).
void AddPredictions(const classifier::Classifier& clf, const LabeledIssue& rec,
                    const std::string& positive, Pairs* pairs) {
  const int positive_depth =
      positive.empty() ? 0 : 1 + static_cast<int>(std::count(positive.begin(), positive.end(), '.'));
  classifier::Classification c = clf.Classify(rec.issue);
  auto add = [&](const char* field, int depth, const std::string& gold,
                 const std::string& predicted) {
    if (gold.empty()) return;
    const std::string& pos = depth == positive_depth ? positive : std::string();
    (*pairs)[field].first.push_back(Binary(gold, pos));
    (*pairs)[field].second.push_back(Binary(predicted, pos));
  };
  add("kind", 1, rec.kind, c.kind);
  std::string theme = c.theme.empty() ? "(none)" : c.theme;
  if (positive_depth == 2 &&
      std::count(c.secondary_themes.begin(), c.secondary_themes.end(), positive) > 0) {
    theme = positive;
  }
  std::string subtheme = c.subtheme.empty() ? "(none)" : c.subtheme;
  if (positive_depth == 3 && std::count(c.subthemes.begin(), c.subthemes.end(), positive) > 0) {
    subtheme = positive;
  }
  add("theme", 2, rec.theme, theme);
  add("subtheme", 3, rec.subtheme, subtheme);
  if (rec.llm.has_value()) add("llm", 0, *rec.llm ? "true" : "false", c.llm ? "true" : "false");
}

constexpr const char* kFields[] = {"kind", "theme", "subtheme", "llm"};

// PrintReports prints the report of every field in `pairs`, as tables or JSON lines.
absl::Status PrintReports(const Pairs& pairs, bool json, const std::string& data,
                          int bootstrap = 1000) {
  if (pairs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(data, ": no record carries a gold kind, theme, subtheme or llm field"));
  }
  for (const char* field : kFields) {
    auto it = pairs.find(field);
    if (it == pairs.end()) continue;
    classifier::EvalReport report =
        classifier::Evaluate(field, it->second.first, it->second.second);
    if (bootstrap > 0) {
      classifier::AddBootstrap(it->second.first, it->second.second, bootstrap, 1, &report);
    }
    if (json) {
      std::printf("%s\n", classifier::ReportJson(report).c_str());
    } else {
      std::printf("%s\n", classifier::FormatReport(report).c_str());
    }
  }
  return absl::OkStatus();
}

// Summary is one line: accuracy and macro-F1 per field (and the positive class's P/R/F1).
std::string Summary(const Pairs& pairs, const std::string& positive) {
  std::string out;
  for (const char* field : kFields) {
    auto it = pairs.find(field);
    if (it == pairs.end()) continue;
    classifier::EvalReport r = classifier::Evaluate(field, it->second.first, it->second.second);
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%s%s accuracy %.4f macro-F1 %.4f", out.empty() ? "" : "; ",
                  field, r.accuracy, r.macro_f1);
    out += buf;
    for (const classifier::ClassMetrics& m : r.classes) {
      if (positive.empty() || m.name != positive) continue;
      std::snprintf(buf, sizeof(buf), ", %s P %.3f R %.3f F1 %.3f", m.name.c_str(), m.precision,
                    m.recall, m.f1);
      out += buf;
    }
  }
  return out;
}

// ReadAlsoTrain reads the --also-train files.
absl::StatusOr<std::vector<LabeledIssue>> ReadAlsoTrain(const TaxonomyTrainOptions& options) {
  std::vector<LabeledIssue> out;
  for (const std::string& path : options.also_train) {
    ASSIGN_OR_RETURN(std::vector<LabeledIssue> more, classifier::ReadIssuesFile(path));
    if (more.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no records"));
    for (LabeledIssue& rec : more) out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace

absl::Status RunTaxonomyTrain(const TaxonomyTrainOptions& options) {
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomy(options.taxonomy));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> data, classifier::ReadIssuesFile(options.data));
  if (options.validation_fraction < 0 || options.validation_fraction >= 1) {
    return absl::InvalidArgumentError("--validation-fraction must be in [0, 1)");
  }
  std::vector<bool> held(data.size(), false);
  if (options.validation_fraction > 0) {
    std::vector<std::string> strata;
    for (const LabeledIssue& rec : data) strata.push_back(Stratum(rec));
    held = classifier::HoldOut(strata, options.validation_fraction, options.seed);
  }
  std::vector<const LabeledIssue*> train, validation;
  for (size_t i = 0; i < data.size(); ++i) (held[i] ? validation : train).push_back(&data[i]);
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> also, ReadAlsoTrain(options));
  for (const LabeledIssue& rec : also) train.push_back(&rec);
  if (train.empty()) return absl::InvalidArgumentError(absl::StrCat(options.data, ": no records"));
  ASSIGN_OR_RETURN(classifier::LinearModel model, TrainModel(train, options, tax.Tag(), true));
  model.set_name(options.name);
  RETURN_IF_ERROR(options.compact ? model.SaveCompact(options.out) : model.Save(options.out));
  if (options.compact) {
    // What the file holds is the quantised model: use it for the validation report too.
    ASSIGN_OR_RETURN(model, classifier::LinearModel::Load(options.out));
  }
  std::printf("wrote %s (taxonomy %s)\n", options.out.c_str(), tax.Tag().c_str());
  if (!validation.empty()) {
    std::printf("\nvalidation: %zu of %zu records held out (seed %u), trained on the other %zu\n\n",
                validation.size(), data.size(), options.seed, train.size());
    classifier::Classifier clf(&tax, &model);
    Pairs pairs;
    for (const LabeledIssue* rec : validation) AddPredictions(clf, *rec, "", &pairs);
    RETURN_IF_ERROR(PrintReports(pairs, false, options.data));
    std::printf("validation %s\n", Summary(pairs, "").c_str());
  }
  return absl::OkStatus();
}

absl::Status RunTaxonomyEval(const TaxonomyEvalOptions& options) {
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomy(options.taxonomy));
  ASSIGN_OR_RETURN(indexer::ModelArgument model, LoadModel(options.model, tax));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> data, classifier::ReadIssuesFile(options.data));
  if (!options.json) {
    std::printf("model: %s\n\n", model.model ? indexer::ModelLabel(*model.model, model.bytes).c_str()
                                             : "none (rules and labels only)");
  }
  classifier::Classifier clf(&tax, model.model ? &*model.model : nullptr,
                             ClassifierWeights(options));
  Pairs pairs;
  for (const LabeledIssue& rec : data) AddPredictions(clf, rec, options.positive, &pairs);
  return PrintReports(pairs, options.json, options.data, options.bootstrap);
}

absl::Status RunTaxonomyCv(const TaxonomyCvOptions& options) {
  if (options.folds < 2) return absl::InvalidArgumentError("--folds must be at least 2");
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomy(options.train.taxonomy));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> data, classifier::ReadIssuesFile(options.data));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> also, ReadAlsoTrain(options.train));
  std::vector<std::string> strata, groups;
  for (const LabeledIssue& rec : data) {
    strata.push_back(Stratum(rec));
    groups.push_back(options.ignore_repo ? std::string() : rec.issue.repo);
  }
  classifier::FoldAssignment folds =
      classifier::AssignFolds(strata, groups, options.folds, options.train.seed);
  if (folds.folds < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.data, ": every record is of one repository; cross-validation by repository "
                      "needs at least two"));
  }
  std::printf("%d folds%s, seed %u, %zu records", folds.folds,
              folds.by_group ? " by repository" : " stratified by gold kind/theme",
              options.train.seed, data.size());
  if (!also.empty()) std::printf(" (+%zu training-only records in every fold)", also.size());
  std::printf("\n");
  const std::string& positive = options.eval.positive;
  Pairs pooled;
  for (int f = 0; f < folds.folds; ++f) {
    std::vector<const LabeledIssue*> train, test;
    std::set<std::string> repos;
    for (size_t i = 0; i < data.size(); ++i) {
      (folds.fold[i] == f ? test : train).push_back(&data[i]);
      if (folds.fold[i] == f && folds.by_group) repos.insert(data[i].issue.repo);
    }
    // Training-only records of the held-out repositories stay out of the fold's training, so
    // the fold still measures a repository the model has not seen.
    for (const LabeledIssue& rec : also) {
      if (!folds.by_group || repos.count(rec.issue.repo) == 0) train.push_back(&rec);
    }
    if (test.empty()) continue;
    TaxonomyTrainOptions train_options = options.train;
    train_options.data = options.data;
    absl::StatusOr<classifier::LinearModel> model = TrainModel(train, train_options, tax.Tag(), false);
    if (!model.ok()) {
      return absl::Status(model.status().code(),
                          absl::StrCat("fold ", f + 1, ": ", model.status().message()));
    }
    classifier::Classifier clf(&tax, &*model, ClassifierWeights(options.eval));
    Pairs pairs;
    for (const LabeledIssue* rec : test) {
      AddPredictions(clf, *rec, positive, &pairs);
      AddPredictions(clf, *rec, positive, &pooled);
    }
    std::printf("fold %d/%d (%zu records%s%s; trained on %zu): %s\n", f + 1, folds.folds,
                test.size(), repos.empty() ? "" : ", ", absl::StrJoin(repos, ", ").c_str(),
                train.size(), Summary(pairs, positive).c_str());
  }
  std::printf("pooled: %s\n\n", Summary(pooled, positive).c_str());
  return PrintReports(pooled, options.eval.json, options.data, options.eval.bootstrap);
}

absl::Status RunTaxonomyClassify(const TaxonomyClassifyOptions& options) {
  ASSIGN_OR_RETURN(taxonomy::Taxonomy tax, LoadTaxonomy(options.taxonomy));
  ASSIGN_OR_RETURN(indexer::ModelArgument model, LoadModel(options.model, tax));
  ASSIGN_OR_RETURN(std::vector<LabeledIssue> data, classifier::ReadIssuesFile(options.input));
  classifier::Classifier clf(&tax, model.model ? &*model.model : nullptr);
  const std::string model_label =
      model.model ? indexer::ModelLabel(*model.model, model.bytes) : std::string();
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
    if (!model_label.empty()) j["model"] = model_label;
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
