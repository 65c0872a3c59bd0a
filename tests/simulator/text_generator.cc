#include "tests/simulator/text_generator.h"

#include <cmath>
#include <cstring>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tests/simulator/text_vocabulary.h"

namespace issuescope::sim {

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int Rng::Poisson(double mean) {
  int total = 0;
  while (mean > 0) {
    const double chunk = mean > 30 ? 30 : mean;
    mean -= chunk;
    const double limit = std::exp(-chunk);
    double p = 1.0;
    int k = -1;
    do {
      ++k;
      p *= Real();
    } while (p > limit);
    total += k;
  }
  return total;
}

namespace {

using vocab::Table;

// Fill replaces {component}, {symptom}, ... placeholders with picks from the vocabulary.
std::string Fill(Rng& rng, std::string text, const ProjectStyle& style) {
  struct Slot {
    const char* key;
    const Table* table;
  };
  const Slot slots[] = {
      {"{component}", &vocab::kComponents}, {"{symptom}", &vocab::kSymptoms},
      {"{context}", &vocab::kContexts},     {"{hardware}", &vocab::kHardware},
      {"{feature}", &vocab::kFeatures},     {"{model}", &vocab::kModels},
      {"{component_cn}", &vocab::kComponentsCn}, {"{symptom_cn}", &vocab::kSymptomsCn},
      {"{context_cn}", &vocab::kContextsCn}, {"{hardware_cn}", &vocab::kHardwareCn},
  };
  for (const Slot& s : slots) {
    for (size_t at = text.find(s.key); at != std::string::npos; at = text.find(s.key, at)) {
      const std::string& pick = rng.Pick(*s.table);
      text.replace(at, strlen(s.key), pick);
      at += pick.size();
    }
  }
  const std::string version =
      absl::StrCat(style.version_prefix, rng.Range(0, 9), ".", rng.Range(0, 3));
  return absl::StrReplaceAll(text, {{"{version}", version}, {"{project}", style.name}});
}

std::string Paragraph(Rng& rng, const ProjectStyle& style, bool cjk) {
  const Table& sentences = cjk ? vocab::kSentencesCn : vocab::kSentences;
  std::string out;
  const int n = static_cast<int>(rng.Range(3, 6));
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += cjk ? "" : " ";
    out += Fill(rng, rng.Pick(sentences), style);
  }
  return out;
}

std::string StackTrace(Rng& rng) {
  std::string out = "```\nTraceback (most recent call last):\n";
  const int frames = static_cast<int>(rng.Range(3, 9));
  for (int i = 0; i < frames; ++i) {
    const std::string& frame = rng.Pick(vocab::kFrames);
    absl::StrAppend(&out, "  File \"", frame, "\", line ", rng.Range(12, 2400), ", in ",
                    rng.Pick(vocab::kFunctions), "\n    ", rng.Pick(vocab::kCodeLines), "\n");
  }
  absl::StrAppend(&out, rng.Pick(vocab::kErrors), "\n```\n");
  return out;
}

std::string Environment(Rng& rng, const ProjectStyle& style) {
  return absl::StrCat(
      "### Versions\n\n```\n", style.version_prefix, rng.Range(0, 9), ".", rng.Range(0, 3),
      "\nPython version: 3.", rng.Range(8, 12), ".", rng.Range(0, 15),
      "\nCUDA runtime version: 12.", rng.Range(0, 4), "\nGPU models and configuration: ",
      rng.Range(1, 8), "x ", rng.Pick(vocab::kHardware),
      "\nNvidia driver version: 5", rng.Range(25, 55), ".", rng.Range(10, 99),
      "\ncuDNN version: 8.9.", rng.Range(0, 7), "\nOS: ", rng.Pick(vocab::kOperatingSystems),
      "\n```\n");
}

std::string CodeBlock(Rng& rng) {
  std::string out = "```python\n";
  const int lines = static_cast<int>(rng.Range(3, 10));
  for (int i = 0; i < lines; ++i) absl::StrAppend(&out, rng.Pick(vocab::kCodeLines), "\n");
  return out + "```\n";
}

}  // namespace

IssueText MakeIssueText(Rng& rng, const ProjectStyle& style, bool pr, bool cjk) {
  IssueText t;
  if (pr) {
    t.title = Fill(rng, rng.Pick(cjk ? vocab::kPrTitlesCn : vocab::kPrTitles), style);
    t.body = absl::StrCat(cjk ? "## 动机\n\n" : "## Motivation\n\n", Paragraph(rng, style, cjk),
                          cjk ? "\n\n## 修改内容\n\n" : "\n\n## Changes\n\n");
    const int bullets = static_cast<int>(rng.Range(2, 6));
    for (int i = 0; i < bullets; ++i) {
      absl::StrAppend(&t.body, "- ", Fill(rng, rng.Pick(vocab::kPrBullets), style), "\n");
    }
    absl::StrAppend(&t.body, "\n", cjk ? "## 测试\n\n" : "## Test plan\n\n", CodeBlock(rng),
                    "\nFixes #", rng.Range(1, 500), "\n");
    return t;
  }
  t.title = Fill(rng, rng.Pick(cjk ? vocab::kTitlesCn : vocab::kTitles), style);
  t.body = absl::StrCat(cjk ? "### 问题描述\n\n" : "### 🐛 Describe the bug\n\n",
                        Paragraph(rng, style, cjk), "\n\n");
  if (rng.Chance(0.8)) absl::StrAppend(&t.body, CodeBlock(rng), "\n");
  if (rng.Chance(0.7)) absl::StrAppend(&t.body, StackTrace(rng), "\n");
  if (rng.Chance(0.8)) absl::StrAppend(&t.body, Paragraph(rng, style, cjk), "\n\n");
  absl::StrAppend(&t.body, Environment(rng, style));
  return t;
}

std::string MakeCommentBody(Rng& rng, bool cjk) {
  static const ProjectStyle kNeutral{"", "", {}, {}, {}, {}, {}, "torch==2."};
  std::string body = Fill(rng, rng.Pick(cjk ? vocab::kCommentsCn : vocab::kComments), kNeutral);
  if (rng.Chance(0.4)) absl::StrAppend(&body, " ", Paragraph(rng, kNeutral, cjk));
  if (rng.Chance(0.15)) absl::StrAppend(&body, "\n\n", CodeBlock(rng));
  return body;
}

std::string MakeEditNote(Rng& rng) {
  static const ProjectStyle kNeutral{"", "", {}, {}, {}, {}, {}, "torch==2."};
  return absl::StrCat("\n\n**Update:** ", Fill(rng, rng.Pick(vocab::kSentences), kNeutral), "\n");
}

std::string MakeEditedTitle(Rng& rng, absl::string_view old_title) {
  static const char* const kPrefixes[] = {"[Updated] ", "[Repro] ", "[Regression] ", "[Triage] "};
  std::string title(old_title);
  for (const char* p : kPrefixes) {
    if (absl::StartsWith(title, p)) title.erase(0, strlen(p));
  }
  return absl::StrCat(kPrefixes[rng.Uniform(4)], title);
}

std::string FillerSentence(Rng& rng) { return rng.Pick(vocab::kFillers); }

std::vector<std::string> WordsInVocabulary(absl::string_view phrase) {
  static const std::set<std::string>* const kWords = [] {
    auto* words = new std::set<std::string>();
    auto add = [words](absl::string_view text) {
      std::string word;
      for (char c : text) {
        if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
          word += absl::ascii_tolower(static_cast<unsigned char>(c));
        } else if (!word.empty()) {
          words->insert(word);
          word.clear();
        }
      }
      if (!word.empty()) words->insert(word);
    };
    for (const Table* table : vocab::AllTables()) {
      for (const std::string& s : *table) add(s);
    }
    for (const ProjectStyle& style : ProjectStyles()) {
      add(style.owner);
      add(style.name);
      add(style.version_prefix);
      for (const Label& l : style.labels) add(l.name + " " + l.description);
    }
    for (const std::string& login : Logins()) add(login);
    for (const char* fixed : {"Describe the bug Versions Python version CUDA runtime GPU models "
                              "and configuration Nvidia driver cuDNN OS Motivation Changes Test "
                              "plan Fixes Traceback most recent call last File line in Update "
                              "Updated Repro Regression Triage"}) {
      add(fixed);
    }
    return words;
  }();
  std::vector<std::string> hits;
  for (absl::string_view w : absl::StrSplit(phrase, ' ', absl::SkipEmpty())) {
    std::string lower = absl::AsciiStrToLower(w);
    if (kWords->count(lower) > 0) hits.push_back(lower);
  }
  return hits;
}

}  // namespace issuescope::sim
