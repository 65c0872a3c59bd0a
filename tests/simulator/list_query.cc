#include "tests/simulator/list_query.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/time_util.h"

namespace issuescope::sim {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() &&
               HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::vector<QueryParam> ParseQueryString(absl::string_view target) {
  std::vector<QueryParam> out;
  const size_t q = target.find('?');
  absl::string_view query = q == absl::string_view::npos
                                ? (target.find('/') == 0 ? absl::string_view() : target)
                                : target.substr(q + 1);
  const size_t hash = query.find('#');
  if (hash != absl::string_view::npos) query = query.substr(0, hash);
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = part.find('=');
    QueryParam p;
    p.raw = std::string(part);
    p.key = Decode(part.substr(0, eq));
    p.value = eq == absl::string_view::npos ? "" : Decode(part.substr(eq + 1));
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<ValidationError> ParseListQuery(const std::vector<QueryParam>& params,
                                              ListKind kind, ListQuery* out) {
  *out = ListQuery();
  out->ascending = kind != ListKind::kIssues;
  for (const QueryParam& p : params) {
    const std::string& v = p.value;
    if (p.key == "per_page") {
      int64_t n = 0;
      if (!absl::SimpleAtoi(v, &n) || n < 1) return ValidationError{p.key, v};
      out->per_page = n > 100 ? 100 : static_cast<int>(n);
    } else if (p.key == "page") {
      if (!absl::SimpleAtoi(v, &out->page) || out->page < 1) return ValidationError{p.key, v};
    } else if (p.key == "since") {
      auto t = ParseRfc3339(v);
      if (!t.ok()) return ValidationError{p.key, v};
      out->since = absl::ToUnixSeconds(*t);
    } else if (kind == ListKind::kIssueComments) {
      continue;  // GitHub ignores other parameters here
    } else if (p.key == "sort") {
      if (v == "created") {
        out->sort = ListQuery::Sort::kCreated;
      } else if (v == "updated") {
        out->sort = ListQuery::Sort::kUpdated;
      } else if (v == "comments" && kind == ListKind::kIssues) {
        out->sort = ListQuery::Sort::kComments;
      } else {
        return ValidationError{p.key, v};
      }
    } else if (p.key == "direction") {
      if (v != "asc" && v != "desc") return ValidationError{p.key, v};
      out->ascending = v == "asc";
    } else if (kind == ListKind::kIssues && p.key == "state") {
      if (v == "open") {
        out->state = ListQuery::State::kOpen;
      } else if (v == "closed") {
        out->state = ListQuery::State::kClosed;
      } else if (v == "all") {
        out->state = ListQuery::State::kAll;
      } else {
        return ValidationError{p.key, v};
      }
    } else if (kind == ListKind::kIssues && p.key == "labels") {
      out->labels = absl::StrSplit(v, ',', absl::SkipWhitespace());
      for (std::string& l : out->labels) l = std::string(absl::StripAsciiWhitespace(l));
    }
  }
  return std::nullopt;
}

std::string BuildLinkHeader(const std::string& url, const std::vector<QueryParam>& params,
                            int64_t page, int per_page, int64_t total) {
  const int64_t last = total == 0 ? 1 : (total + per_page - 1) / per_page;
  bool has_since = false;
  for (const QueryParam& p : params) has_since = has_since || p.key == "since";
  auto link = [&](int64_t target_page, absl::string_view rel) {
    std::vector<std::string> parts;
    bool replaced = false;
    for (const QueryParam& p : params) {
      if (p.key == "page") {
        if (!replaced) parts.push_back(absl::StrCat("page=", target_page));
        replaced = true;
      } else {
        parts.push_back(p.raw);
      }
    }
    if (!replaced) parts.push_back(absl::StrCat("page=", target_page));
    return absl::StrCat("<", url, "?", absl::StrJoin(parts, "&"), ">; rel=\"", rel, "\"");
  };
  std::vector<std::string> links;
  if (page > 1) links.push_back(link(page - 1, "prev"));
  if (page < last) {
    links.push_back(link(page + 1, "next"));
    if (!has_since) links.push_back(link(last, "last"));
  }
  if (page > 1) links.push_back(link(1, "first"));
  return absl::StrJoin(links, ", ");
}

}  // namespace issuescope::sim
