#include "common/index_document.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/index_schema.h"
#include "common/repo_slug.h"
#include "common/time_util.h"

namespace issuescope::index {
namespace {

// Xapian terms are limited to 245 bytes; longer boolean values are truncated.
constexpr size_t kMaxTermBytes = 240;

void AddBoolean(Xapian::Document& doc, absl::string_view prefix, const std::string& value) {
  if (value.empty()) return;
  std::string term = absl::StrCat(prefix, NormalizeTermValue(value));
  if (term.size() > kMaxTermBytes) term.resize(kMaxTermBytes);
  doc.add_boolean_term(term);
}

std::string StateName(v1::IssueState state) {
  switch (state) {
    case v1::ISSUE_STATE_OPEN: return "open";
    case v1::ISSUE_STATE_CLOSED: return "closed";
    case v1::ISSUE_STATE_PROGRESSING: return "progressing";
    case v1::ISSUE_STATE_REJECTED: return "rejected";
    default: return "unknown";
  }
}

void AddTimeValue(Xapian::Document& doc, Xapian::valueno slot,
                  const google::protobuf::Timestamp& ts, bool present) {
  if (!present) return;
  doc.add_value(slot, Xapian::sortable_serialise(static_cast<double>(ts.seconds())));
}

int64_t Nanos(const google::protobuf::Timestamp& ts) {
  return ts.seconds() * 1000000000LL + ts.nanos();
}

}  // namespace

std::string NormalizeTermValue(const std::string& value) { return absl::AsciiStrToLower(value); }

int64_t IssueVersion(const v1::IssueWithComments& issue) {
  int64_t version = Nanos(issue.issue().updated_at());
  for (const v1::Comment& c : issue.comments()) version = std::max(version, Nanos(c.updated_at()));
  return version;
}

Xapian::Document BuildDocument(const v1::IssueWithComments& iwc) {
  const v1::Issue& issue = iwc.issue();
  const std::string slug = RepoSlug(issue.repo());
  Xapian::Document doc;

  Xapian::TermGenerator gen;
  gen.set_stemmer(Xapian::Stem("english"));
  gen.set_stemming_strategy(Xapian::TermGenerator::STEM_SOME);
  gen.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
  gen.set_document(doc);
  // Title: weighted twice, under its own prefix too.
  gen.index_text(issue.title(), 1, kTitlePrefix);
  gen.increase_termpos();
  gen.index_text(issue.title(), 2);
  gen.increase_termpos();
  gen.index_text(issue.body(), 1, kBodyPrefix);
  gen.increase_termpos();
  gen.index_text(issue.body());
  for (const v1::Comment& c : iwc.comments()) {
    gen.increase_termpos();
    gen.index_text(c.body(), 1, kCommentPrefix);
    gen.increase_termpos();
    gen.index_text(c.body());
  }

  doc.add_boolean_term(IdTerm(slug, issue.number()));
  AddBoolean(doc, kRepoPrefix, RepoFullName(issue.repo()));
  AddBoolean(doc, kRepoSlugPrefix, slug);
  AddBoolean(doc, kOrgPrefix, issue.repo().owner());
  AddBoolean(doc, kTrackerPrefix, TrackerName(issue.repo().tracker()));
  for (const std::string& label : issue.labels()) AddBoolean(doc, kLabelPrefix, label);
  if (issue.labels().empty()) doc.add_boolean_term(kNoLabelTerm);
  AddBoolean(doc, kStatePrefix, StateName(issue.state()));
  AddBoolean(doc, kTypePrefix, issue.is_pull_request() ? "pr" : "issue");
  AddBoolean(doc, kAuthorPrefix, issue.author());
  for (const std::string& a : issue.assignees()) AddBoolean(doc, kAssigneePrefix, a);
  const v1::Tags& tags = issue.tags();
  AddBoolean(doc, kKindPrefix, tags.kind());
  AddBoolean(doc, kThemePrefix, tags.theme());
  for (const std::string& t : tags.secondary_themes()) AddBoolean(doc, kThemePrefix, t);
  for (const std::string& t : tags.subthemes()) AddBoolean(doc, kSubthemePrefix, t);
  if (!tags.taxonomy().empty()) AddBoolean(doc, kLlmPrefix, tags.llm() ? "true" : "false");

  AddTimeValue(doc, kCreatedSlot, issue.created_at(), issue.has_created_at());
  AddTimeValue(doc, kUpdatedSlot, issue.updated_at(), issue.has_updated_at());
  AddTimeValue(doc, kClosedSlot, issue.closed_at(), issue.has_closed_at());
  doc.add_value(kCommentsSlot, Xapian::sortable_serialise(issue.comment_count()));
  doc.add_value(kNumberSlot, Xapian::sortable_serialise(static_cast<double>(issue.number())));
  doc.add_value(kReactionsSlot, Xapian::sortable_serialise(issue.reactions()));
  doc.add_value(kVersionSlot, std::to_string(IssueVersion(iwc)));

  doc.set_data(iwc.SerializeAsString());
  return doc;
}

absl::StatusOr<v1::IssueWithComments> ReadDocument(const Xapian::Document& doc) {
  v1::IssueWithComments iwc;
  if (!iwc.ParseFromString(doc.get_data())) {
    return absl::DataLossError("index document data is not a serialized issue");
  }
  return iwc;
}

int64_t DocumentVersion(const Xapian::Document& doc) {
  std::string v = doc.get_value(kVersionSlot);
  int64_t version = 0;
  if (v.empty() || !absl::SimpleAtoi(v, &version)) return 0;
  return version;
}

}  // namespace issuescope::index
