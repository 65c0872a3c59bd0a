#include "common/index_document.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/index_facets.h"
#include "common/index_schema.h"
#include "common/index_text.h"
#include "common/repo_slug.h"
#include "common/text_tokens.h"
#include "common/time_util.h"

namespace issuescope::index {
namespace {

// Hex digits of each of the three parts of an encoded IndexVersion.
constexpr size_t kVersionPartDigits = 16;

// Xapian terms are limited to 245 bytes; longer boolean values are truncated.
constexpr size_t kMaxTermBytes = 240;

void AddBoolean(Xapian::Document& doc, absl::string_view prefix, const std::string& value) {
  if (value.empty()) return;
  std::string term = absl::StrCat(prefix, NormalizeTermValue(value));
  if (term.size() > kMaxTermBytes) term.resize(Utf8Boundary(term, kMaxTermBytes));
  doc.add_boolean_term(term);
}

void AddTimeValue(Xapian::Document& doc, Xapian::valueno slot,
                  const google::protobuf::Timestamp& ts, bool present) {
  if (!present) return;
  doc.add_value(slot, Xapian::sortable_serialise(static_cast<double>(ts.seconds())));
}

// AddMonthTerm adds the "YYYY-MM" (UTC) term of a time under `prefix`: the buckets the search
// service walks newest (or oldest) first to sort broad queries by that time cheaply, and the
// posting lists date ranges are answered from.
void AddMonthTerm(Xapian::Document& doc, absl::string_view prefix,
                  const google::protobuf::Timestamp& ts, bool present) {
  if (!present) return;
  const absl::CivilSecond c =
      absl::ToCivilSecond(absl::FromUnixSeconds(ts.seconds()), absl::UTCTimeZone());
  doc.add_boolean_term(absl::StrFormat("%s%04d-%02d", prefix, c.year(), c.month()));
}

int64_t Nanos(const google::protobuf::Timestamp& ts) {
  return ts.seconds() * 1000000000LL + ts.nanos();
}

}  // namespace

std::string NormalizeTermValue(const std::string& value) { return absl::AsciiStrToLower(value); }

IndexVersion IssueVersion(const v1::IssueWithComments& issue) {
  IndexVersion version;
  version.issue_updated_ns = Nanos(issue.issue().updated_at());
  for (const v1::Comment& c : issue.comments()) {
    version.comments_updated_ns = std::max(version.comments_updated_ns, Nanos(c.updated_at()));
  }
  version.fetched_ns = Nanos(issue.issue().fetched_at());
  return version;
}

std::string IndexVersion::Encode() const {
  std::string out;
  out.reserve(3 * kVersionPartDigits);
  for (int64_t part : {issue_updated_ns, comments_updated_ns, fetched_ns}) {
    // Offset binary: flipping the sign bit makes unsigned order equal signed order.
    const uint64_t biased = static_cast<uint64_t>(part) ^ (uint64_t{1} << 63);
    absl::StrAppend(&out, absl::Hex(biased, absl::kZeroPad16));
  }
  return out;
}

std::optional<IndexVersion> IndexVersion::Decode(absl::string_view encoded) {
  if (encoded.size() != 3 * kVersionPartDigits) return std::nullopt;
  int64_t parts[3];
  for (int i = 0; i < 3; ++i) {
    absl::string_view hex = encoded.substr(i * kVersionPartDigits, kVersionPartDigits);
    // Encode writes lower-case digits only (SimpleHexAtoi alone would take "0x" and capitals).
    uint64_t biased = 0;
    if (!std::all_of(hex.begin(), hex.end(),
                     [](char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f'); }) ||
        !absl::SimpleHexAtoi(hex, &biased)) {
      return std::nullopt;
    }
    parts[i] = static_cast<int64_t>(biased ^ (uint64_t{1} << 63));
  }
  IndexVersion version;
  version.issue_updated_ns = parts[0];
  version.comments_updated_ns = parts[1];
  version.fetched_ns = parts[2];
  return version;
}

std::string IndexVersion::DebugString() const {
  return absl::StrCat("{issue_updated_ns=", issue_updated_ns,
                      " comments_updated_ns=", comments_updated_ns, " fetched_ns=", fetched_ns,
                      "}");
}

Xapian::Document BuildDocument(const v1::IssueWithComments& iwc) {
  const v1::Issue& issue = iwc.issue();
  const std::string slug = RepoSlug(issue.repo());
  Xapian::Document doc;

  IndexIssueText(iwc, &doc);

  doc.add_boolean_term(IdTerm(slug, issue.number()));
  AddBoolean(doc, kRepoPrefix, RepoFullName(issue.repo()));
  AddBoolean(doc, kRepoSlugPrefix, slug);
  AddBoolean(doc, kOrgPrefix, issue.repo().owner());
  AddBoolean(doc, kTrackerPrefix, TrackerName(issue.repo().tracker()));
  for (const std::string& label : issue.labels()) AddBoolean(doc, kLabelPrefix, label);
  if (issue.labels().empty()) doc.add_boolean_term(kNoLabelTerm);
  AddBoolean(doc, kStatePrefix, IssueStateName(issue.state()));
  AddBoolean(doc, kTypePrefix, issue.is_pull_request() ? "pr" : "issue");
  AddBoolean(doc, kAuthorPrefix, issue.author());
  for (const std::string& a : issue.assignees()) AddBoolean(doc, kAssigneePrefix, a);
  const v1::Tags& tags = issue.tags();
  AddBoolean(doc, kKindPrefix, tags.kind());
  AddBoolean(doc, kThemePrefix, tags.theme());
  for (const std::string& t : tags.secondary_themes()) AddBoolean(doc, kThemePrefix, t);
  for (const std::string& t : tags.subthemes()) AddBoolean(doc, kSubthemePrefix, t);
  for (const std::string& k : tags.keywords()) AddBoolean(doc, kKeywordPrefix, k);
  if (!tags.taxonomy().empty()) {
    AddBoolean(doc, kLlmPrefix, tags.llm() ? "true" : "false");
    AddBoolean(doc, kTaxonomyPrefix, tags.taxonomy());
  }

  AddTimeValue(doc, kCreatedSlot, issue.created_at(), issue.has_created_at());
  AddTimeValue(doc, kUpdatedSlot, issue.updated_at(), issue.has_updated_at());
  AddTimeValue(doc, kClosedSlot, issue.closed_at(), issue.has_closed_at());
  AddMonthTerm(doc, kCreatedMonthPrefix, issue.created_at(), issue.has_created_at());
  AddMonthTerm(doc, kUpdatedMonthPrefix, issue.updated_at(), issue.has_updated_at());
  AddMonthTerm(doc, kClosedMonthPrefix, issue.closed_at(), issue.has_closed_at());
  doc.add_value(kCommentsSlot, Xapian::sortable_serialise(issue.comment_count()));
  doc.add_value(kNumberSlot, Xapian::sortable_serialise(static_cast<double>(issue.number())));
  doc.add_value(kReactionsSlot, Xapian::sortable_serialise(issue.reactions()));
  doc.add_value(kVersionSlot, IssueVersion(iwc).Encode());
  const std::string number = doc.get_value(kNumberSlot);
  doc.add_value(kCreatedSortSlot, SortKey(doc.get_value(kCreatedSlot), number));
  doc.add_value(kUpdatedSortSlot, SortKey(doc.get_value(kUpdatedSlot), number));
  doc.add_value(kCommentsSortSlot, SortKey(doc.get_value(kCommentsSlot), number));

  AddFacetValues(iwc, &doc);
  doc.set_data(iwc.SerializeAsString());
  return doc;
}

Xapian::Document BuildGoneDocument(const v1::IssueWithComments& iwc) {
  Xapian::Document doc;
  if (iwc.issue().deleted()) {
    doc = BuildDocument(iwc);
  } else {
    v1::IssueWithComments gone = iwc;
    gone.mutable_issue()->set_deleted(true);
    doc = BuildDocument(gone);
  }
  doc.add_boolean_term(absl::StrCat(
      kGonePrefix, iwc.issue().transferred_to().empty() ? "deleted" : "transferred"));
  return doc;
}

absl::StatusOr<v1::IssueWithComments> ReadDocument(const Xapian::Document& doc) {
  v1::IssueWithComments iwc;
  if (!iwc.ParseFromString(doc.get_data())) {
    return absl::DataLossError("index document data is not a serialized issue");
  }
  return iwc;
}

IndexVersion DocumentVersion(const Xapian::Document& doc) {
  if (std::optional<IndexVersion> v = IndexVersion::Decode(doc.get_value(kVersionSlot))) {
    return *v;
  }
  // An older document (the slot held one decimal number) or an unreadable slot: the stored
  // issue itself tells its version.
  absl::StatusOr<v1::IssueWithComments> stored = ReadDocument(doc);
  return stored.ok() ? IssueVersion(*stored) : IndexVersion();
}

}  // namespace issuescope::index
