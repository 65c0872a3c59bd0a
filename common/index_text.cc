#include "common/index_text.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/index_schema.h"
#include "common/issue_sections.h"
#include "common/text_tokens.h"

namespace issuescope::index {
namespace {
void PutU32(uint32_t v, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint32_t GetU32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace

std::string EncodeTextBounds(const TextBounds& bounds) {
  std::string out;
  PutU32(bounds.body, &out);
  PutU32(bounds.comments, &out);
  return out;
}

std::string EncodeSectionRanges(const std::vector<SectionRange>& ranges) {
  std::string out;
  for (const SectionRange& r : ranges) {
    out.push_back(r.log ? 'l' : 'c');
    PutU32(r.begin, &out);
    PutU32(r.end, &out);
  }
  return out;
}

std::vector<SectionRange> DecodeSectionRanges(const std::string& value) {
  std::vector<SectionRange> out;
  for (size_t at = 0; at + 9 <= value.size(); at += 9) {
    out.push_back({value[at] == 'l', GetU32(value, at + 1), GetU32(value, at + 5)});
  }
  return out;
}

std::optional<TextBounds> DecodeTextBounds(const std::string& value) {
  if (value.size() != 8) return std::nullopt;
  return TextBounds{GetU32(value, 0), GetU32(value, 4)};
}

namespace {


// TextIndexer adds the terms of texts to one document, positions running on across calls.
// Positions are added as they come; weights are summed per term and written once by Finish
// (so that a document's weights can be normalised by its length).
class TextIndexer {
 public:
  TextIndexer(Xapian::Document* doc, std::string prefix) : doc_(doc), prefix_(std::move(prefix)) {}

  Xapian::termpos pos() const { return pos_; }
  void Gap(Xapian::termpos n) { pos_ += n; }
  // Weighed is the sum of the weights added (not counting `fixed` ones).
  double weighed() const { return weighed_; }

  // Add indexes `text` with `weight` per occurrence (0: positions only, no weight). `fixed`
  // weights are not normalised by the document's length (the title's).
  void Add(absl::string_view text, double weight, bool fixed = false) {
    ForEachToken(text, [&](const TextToken& t) {
      switch (t.kind) {
        case TextToken::Kind::kWord:
          Word(t.text, ++pos_, weight, fixed);
          break;
        case TextToken::Kind::kCompound: {
          const Xapian::termpos first = pos_ + 1;
          if (!t.text.empty()) {
            Posting(prefix_ + t.text, first, weight, fixed);
            if (IsStemmable(t.text)) Weigh("Z" + prefix_ + EnglishStem(t.text), weight, fixed);
          }
          for (const std::string& part : t.parts) Word(part, ++pos_, weight, fixed);
          for (const auto& [at, segment] : t.joined) {
            Posting(prefix_ + segment, first + static_cast<Xapian::termpos>(at), weight, fixed);
            if (IsStemmable(segment)) Weigh("Z" + prefix_ + EnglishStem(segment), weight, fixed);
          }
          break;
        }
        case TextToken::Kind::kCjk:
          for (size_t i = 0; i < t.parts.size(); ++i) {
            ++pos_;
            Posting(prefix_ + t.parts[i], pos_, weight, fixed);
            if (i + 1 < t.parts.size()) {
              Posting(prefix_ + t.parts[i] + t.parts[i + 1], pos_, weight, fixed);
            }
          }
          break;
      }
    });
  }

  // Finish writes each term's wdf: scale × (fixed weight + weight / norm), rounded, at least
  // 1 for a term with any weight.
  void Finish(double scale, double norm) {
    for (const auto& [term, w] : weights_) {
      const double v = scale * (w.fixed + w.normalised / norm);
      if (v <= 0) continue;
      doc_->add_term(term, std::max<Xapian::termcount>(1, static_cast<Xapian::termcount>(v + 0.5)));
    }
  }

 private:
  struct Weight {
    double fixed = 0, normalised = 0;
  };

  void Posting(const std::string& term, Xapian::termpos pos, double weight, bool fixed) {
    doc_->add_posting(term, pos, 0);
    Weigh(term, weight, fixed);
  }
  void Weigh(const std::string& term, double weight, bool fixed) {
    Weight& w = weights_[term];
    if (weight <= 0) {
      if (w.fixed == 0 && w.normalised == 0) doc_->add_term(term, 0);
      return;
    }
    (fixed ? w.fixed : w.normalised) += weight;
    if (!fixed) weighed_ += weight;
  }
  void Word(const std::string& word, Xapian::termpos pos, double weight, bool fixed) {
    Posting(prefix_ + word, pos, weight, fixed);
    if (IsStemmable(word)) Weigh("Z" + prefix_ + EnglishStem(word), weight, fixed);
  }

  Xapian::Document* doc_;
  const std::string prefix_;
  Xapian::termpos pos_ = 0;
  double weighed_ = 0;
  absl::flat_hash_map<std::string, Weight> weights_;
};

// SectionWdf is the weight per occurrence of a body or comment section of `kind`.
double SectionWdf(SectionKind kind, bool comment) {
  const TextWeights& w = kTextWeights;
  switch (kind) {
    case SectionKind::kProse: return comment ? w.comment_prose : w.body_prose;
    case SectionKind::kException: return comment ? w.comment_prose : w.body_prose;
    case SectionKind::kCode: return w.code;
    case SectionKind::kLog: return w.log;
    case SectionKind::kEnvironment: return w.environment;
    case SectionKind::kTemplate: return w.template_text;
  }
  return w.code;
}

void AddSections(absl::string_view text, bool comment, TextIndexer* indexer,
                 std::vector<SectionRange>* ranges) {
  bool first = true;
  for (const Section& s : SplitSections(text)) {
    if (!first) indexer->Gap(1);  // no phrase across two sections
    first = false;
    const uint32_t begin = indexer->pos() + 1;
    indexer->Add(text.substr(s.begin, s.end - s.begin), SectionWdf(s.kind, comment));
    const uint32_t end = indexer->pos();
    const bool code = s.kind == SectionKind::kCode;
    const bool log = s.kind == SectionKind::kLog || s.kind == SectionKind::kException;
    if ((code || log) && end >= begin) {
      // A log's exception line continues its log (one range).
      if (log && !ranges->empty() && ranges->back().log && ranges->back().end + 2 >= begin) {
        ranges->back().end = end;
      } else {
        ranges->push_back({log, begin, end});
      }
    }
  }
}
}  // namespace

void IndexIssueText(const v1::IssueWithComments& iwc, Xapian::Document* doc) {
  const v1::Issue& issue = iwc.issue();
  // The title under its own prefix, for `in:title` and the title bonus of ranked queries.
  TextIndexer title(doc, kTitlePrefix);
  title.Add(issue.title(), 1, true);
  title.Finish(1, 1);
  // All text once, unprefixed: title, body, comments, with a gap of positions between them so
  // that a phrase never spans two; each section weighted by what it is.
  TextIndexer all(doc, "");
  all.Add(issue.title(), kTextWeights.title, true);
  all.Gap(kFieldGap);
  TextBounds bounds;
  bounds.body = all.pos() + 1;
  std::vector<SectionRange> ranges;
  AddSections(issue.body(), false, &all, &ranges);
  all.Gap(kFieldGap);
  bounds.comments = all.pos() + 1;
  for (int i = 0; i < iwc.comments_size(); ++i) {
    if (i > 0) all.Gap(kFieldGap);
    AddSections(iwc.comments(i).body(), true, &all, &ranges);
  }
  // Length normalisation at index time (BM25's b, with a fixed pivot): a word of a long thread
  // weighs less than the same word in a short report, and the search reads no document length.
  const TextWeights& w = kTextWeights;
  const double norm =
      1 - w.length_b + w.length_b * std::max(all.weighed(), 1.0) / w.length_pivot;
  all.Finish(w.wdf_scale, std::max(norm, w.min_norm));
  doc->add_value(kTextBoundsSlot, EncodeTextBounds(bounds));
  doc->add_value(kSectionRangesSlot, EncodeSectionRanges(ranges));
}

}  // namespace issuescope::index
