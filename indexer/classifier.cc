#include "indexer/classifier.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "common/issue_sections.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace issuescope::classifier {
namespace {

// Prefix returns the first `parts` dot-separated components of a node id.
std::string Prefix(const std::string& id, int parts) {
  size_t pos = 0;
  for (int i = 0; i < parts; ++i) {
    pos = id.find('.', pos == 0 && i == 0 ? 0 : pos + 1);
    if (pos == std::string::npos) return id;
  }
  return id.substr(0, pos);
}

int Depth(const std::string& id) { return 1 + static_cast<int>(std::count(id.begin(), id.end(), '.')); }

std::string Probability(double p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "p=%.3f", p);
  return buf;
}

}  // namespace

Classifier::Classifier(const taxonomy::Taxonomy* taxonomy, const LinearModel* model,
                       ClassifierOptions options)
    : taxonomy_(taxonomy), model_(model), options_(options), matcher_(taxonomy) {}

// Signals are what every step reads: the taxonomy's cues found in the title and the signal
// text, the issue's labels mapped to nodes, and the model's probabilities per head.
struct Classifier::Signals {
  std::vector<taxonomy::CueMatch> cues;
  std::vector<taxonomy::LabelMatch> labels;
  std::map<std::string, std::map<std::string, double>> heads;  // head -> class -> probability
  // VoteTarget is the kind class a cue or label vote for kind `k` counts for: `k`, or with a
  // kind head that has a class "non-X" (an is-bug data set) and none for k != X, "non-X", so
  // the rules do not only ever push towards X.
  std::string VoteTarget(const std::string& k) const {
    const std::map<std::string, double>& kind_probs = Head("kind");
    if (kind_probs.empty() || kind_probs.count(k) > 0) return k;
    for (const auto& [cls, p] : kind_probs) {
      if (cls.size() > 4 && cls.compare(0, 4, "non-") == 0 && cls.substr(4) != k) return cls;
    }
    return k;
  }
  const std::map<std::string, double>& Head(const std::string& name) const {
    static const std::map<std::string, double> kNone;
    auto it = heads.find(name);
    return it == heads.end() ? kNone : it->second;
  }
};

Classification Classifier::Classify(const IssueText& issue) const {
  Classification out;
  out.taxonomy = taxonomy_->Tag();
  Signals signals;
  signals.cues = matcher_.Match(
      absl::StrCat(issue.title, "\n", options_.signal_text ? SignalText(issue.body) : issue.body));
  signals.labels = matcher_.MapLabels(issue.labels, issue.repo);
  if (model_ != nullptr) {
    const FeatureVector features = Featurize(issue, model_->features());
    for (const char* head : {"kind", "theme", "subtheme", "llm"}) {
      for (const auto& [cls, p] : model_->Probabilities(head, features)) {
        signals.heads[head][cls] = p;
      }
    }
  }
  DecideKind(signals, &out);
  DecideThemes(signals, &out);
  DecideLlm(signals, issue, &out);
  return out;
}

void Classifier::DecideKind(const Signals& signals, Classification* out) const {
  std::vector<std::string> candidates;
  for (const auto& k : taxonomy_->kinds) candidates.push_back(k.id);
  const std::map<std::string, double>& kind_probs = signals.Head("kind");
  for (const auto& [cls, p] : kind_probs) {
    if (std::find(candidates.begin(), candidates.end(), cls) == candidates.end()) {
      candidates.push_back(cls);
    }
  }
  std::map<std::string, double> kind_score;
  std::map<std::string, int> kind_cue_count;
  for (const std::string& k : candidates) kind_score[k] = 0;
  for (const auto& [cls, p] : kind_probs) {
    kind_score[cls] += p;
    out->evidence.push_back({"model", cls, Probability(p), p});
  }
  for (const auto& m : signals.cues) {
    if (Depth(m.node) != 1 || m.node == "llm") continue;
    const std::string target = signals.VoteTarget(m.node);
    if (++kind_cue_count[m.node] <= 3) kind_score[target] += options_.kind_cue_weight;
    out->evidence.push_back({"cue", target, m.cue, options_.kind_cue_weight});
  }
  for (const auto& l : signals.labels) {
    if (l.target == "llm" || Depth(l.target) != 1) continue;
    const std::string target = signals.VoteTarget(l.target);
    kind_score[target] += options_.label_weight;
    out->evidence.push_back({"label", target, l.label, options_.label_weight});
  }
  StrongSymptomVote(signals, &kind_score, out);
  double best = 0;
  for (const std::string& k : candidates) {
    if (kind_score[k] > best + 1e-9) {  // sums of 0.1s: ties within rounding go to the earlier kind
      best = kind_score[k];
      out->kind = k;
    }
  }
  if (out->kind.empty()) {
    out->kind = candidates.front();
    out->evidence.push_back({"default", out->kind, "no label, cue or model signal", 0});
  }
  out->kind_scores = kind_score;
}

// Strong symptom (only when no model decides the kind: a trained kind head already weighs the
// symptom's words): rule scores (distinct cues, labels) of every theme, best per kind.
void Classifier::StrongSymptomVote(const Signals& signals,
                                   std::map<std::string, double>* kind_score,
                                   Classification* out) const {
  std::map<std::string, double> rule_score;  // theme id
  std::set<std::pair<std::string, std::string>> counted;
  for (const auto& m : signals.cues) {
    if (Depth(m.node) < 2) continue;
    if (counted.insert({Prefix(m.node, 2), m.cue}).second) rule_score[Prefix(m.node, 2)] += 1.0;
  }
  for (const auto& l : signals.labels) {
    if (Depth(l.target) >= 2) rule_score[Prefix(l.target, 2)] += options_.label_weight;
  }
  std::map<std::string, double> best_of_kind;
  for (const auto& [theme, score] : rule_score) {
    double& b = best_of_kind[Prefix(theme, 1)];
    b = std::max(b, score);
  }
  // Only the first kind (the defect kind, "bug" in llm-dl/1): a symptom is evidence of a
  // defect; a requirement's or a question's theme is not.
  const std::string& k = taxonomy_->kinds.empty() ? std::string() : taxonomy_->kinds[0].id;
  const double score = best_of_kind[k];
  if (k.empty() || !signals.Head("kind").empty() || score < options_.strong_theme_score ||
      options_.strong_theme_kind_weight <= 0) {
    return;
  }
  for (const auto& [other, other_score] : best_of_kind) {
    if (other != k && other_score > score) return;  // another kind's symptom is stronger
  }
  const std::string target = signals.VoteTarget(k);
  if (kind_score->count(target) == 0) return;
  (*kind_score)[target] += options_.strong_theme_kind_weight;
  char detail[64];
  std::snprintf(detail, sizeof(detail), "strong symptom: theme score %.1f", score);
  out->evidence.push_back({"cue", target, detail, options_.strong_theme_kind_weight});
}

void Classifier::DecideThemes(const Signals& signals, Classification* out) const {
  const taxonomy::Kind* kind = taxonomy_->FindKind(out->kind);
  std::map<std::string, double> node_score;  // theme and sub-theme ids
  std::set<std::pair<std::string, std::string>> seen_cue;
  std::map<std::string, std::set<std::string>> theme_evidence;  // theme -> cues and labels
  for (const auto& m : signals.cues) {
    if (Depth(m.node) < 2 || Prefix(m.node, 1) != out->kind) continue;
    // A cue counts once per theme even when a theme and its sub-themes list it.
    const bool first_in_theme = seen_cue.insert({Prefix(m.node, 2), m.cue}).second;
    theme_evidence[Prefix(m.node, 2)].insert(absl::AsciiStrToLower(m.cue));
    if (Depth(m.node) == 3) node_score[m.node] += 1.0;
    if (first_in_theme) node_score[Prefix(m.node, 2)] += 1.0;
    out->evidence.push_back({"cue", m.node, m.cue, 1.0});
  }
  for (const auto& l : signals.labels) {
    if (Depth(l.target) < 2 || Prefix(l.target, 1) != out->kind) continue;
    node_score[l.target] += options_.label_weight;
    if (Depth(l.target) == 3) node_score[Prefix(l.target, 2)] += options_.label_weight;
    theme_evidence[Prefix(l.target, 2)].insert(absl::StrCat("label:", l.label));
    out->evidence.push_back({"label", l.target, l.label, options_.label_weight});
  }
  for (const char* head : {"theme", "subtheme"}) {
    for (const auto& [cls, p] : signals.Head(head)) {
      if (Prefix(cls, 1) != out->kind || p < 0.05) continue;
      node_score[cls] += options_.theme_model_weight * p;
      if (Depth(cls) == 3) node_score[Prefix(cls, 2)] += options_.theme_model_weight * p;
      out->evidence.push_back({"model", cls, Probability(p), p});
    }
  }
  if (kind != nullptr) {
    std::vector<const taxonomy::Theme*> ranked;
    for (const auto& t : kind->themes) {
      if (node_score[t.id] > 0) ranked.push_back(&t);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](const taxonomy::Theme* a, const taxonomy::Theme* b) {
                       double sa = node_score[a->id], sb = node_score[b->id];
                       if (sa != sb) return sa > sb;
                       return a->priority > b->priority;
                     });
    if (!ranked.empty()) {
      out->theme = ranked[0]->id;
      double threshold = std::max(options_.secondary_min_score,
                                  options_.secondary_ratio * node_score[out->theme]);
      std::vector<const taxonomy::Theme*> chosen = {ranked[0]};
      // Independent: a cue or label of the secondary theme that is not, and does not
      // overlap, one of the primary theme's (so one phrase cannot make two themes).
      const std::set<std::string>& primary_evidence = theme_evidence[out->theme];
      auto independent = [&](const std::string& theme) {
        for (const std::string& e : theme_evidence[theme]) {
          bool overlaps = false;
          for (const std::string& p : primary_evidence) {
            if (e.find(p) != std::string::npos || p.find(e) != std::string::npos) overlaps = true;
          }
          if (!overlaps) return true;
        }
        return false;
      };
      for (size_t i = 1; i < ranked.size(); ++i) {
        if (static_cast<int>(out->secondary_themes.size()) >= options_.max_secondary) break;
        if (node_score[ranked[i]->id] >= threshold && independent(ranked[i]->id)) {
          out->secondary_themes.push_back(ranked[i]->id);
          chosen.push_back(ranked[i]);
        }
      }
      for (const taxonomy::Theme* t : chosen) {
        std::vector<const taxonomy::SubTheme*> subs;
        for (const auto& s : t->subthemes) {
          if (node_score[s.id] > 0) subs.push_back(&s);
        }
        std::stable_sort(subs.begin(), subs.end(),
                         [&](const taxonomy::SubTheme* a, const taxonomy::SubTheme* b) {
                           return node_score[a->id] > node_score[b->id];
                         });
        for (const auto* s : subs) out->subthemes.push_back(s->id);
        if (t == chosen.front() && !subs.empty()) out->subtheme = subs.front()->id;
      }
    }
  }
}

void Classifier::DecideLlm(const Signals& signals, const IssueText& issue,
                           Classification* out) const {
  std::set<std::string> llm_cues;
  for (const auto& m : signals.cues) {
    if (m.node != "llm" || !llm_cues.insert(m.cue).second) continue;
    out->llm = true;
    out->evidence.push_back({"cue", "llm", m.cue, 1.0});
  }
  const std::string repo = absl::AsciiStrToLower(issue.repo);
  for (const std::string& r : taxonomy_->llm_repos) {
    if (!repo.empty() && r == repo) {
      out->llm = true;
      out->evidence.push_back({"repo", "llm", issue.repo, 1.0});
    }
  }
  for (const auto& l : signals.labels) {
    if (l.target != "llm") continue;
    out->llm = true;
    out->evidence.push_back({"label", "llm", l.label, options_.label_weight});
  }
  const std::map<std::string, double>& llm_probs = signals.Head("llm");
  if (auto it = llm_probs.find("true"); it != llm_probs.end() && it->second > 0.5) {
    out->llm = true;
    out->evidence.push_back({"model", "llm", Probability(it->second), it->second});
  }
}

}  // namespace issuescope::classifier
