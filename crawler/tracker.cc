#include "tracker.h"

#include <curl/curl.h>

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/repo_slug.h"
#include "common/time_util.h"
#include "gitee_tracker.h"
#include "github_tracker.h"
#include "gitlab_tracker.h"

namespace issuescope::crawler {
namespace {

// FindParam locates `name=` as a whole query parameter; npos when absent. `*value_end` is set
// to the end of its value.
size_t FindParam(absl::string_view url, absl::string_view name, size_t* value_end) {
  const size_t query = url.find('?');
  if (query == absl::string_view::npos) return absl::string_view::npos;
  size_t pos = query + 1;
  while (pos < url.size()) {
    size_t end = url.find_first_of("&#", pos);
    if (end == absl::string_view::npos) end = url.size();
    absl::string_view param = url.substr(pos, end - pos);
    if (param.size() > name.size() && param.substr(0, name.size()) == name &&
        param[name.size()] == '=') {
      *value_end = end;
      return pos + name.size() + 1;
    }
    if (end >= url.size() || url[end] == '#') break;
    pos = end + 1;
  }
  return absl::string_view::npos;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tracker>> MakeTracker(v1::Tracker kind) {
  switch (kind) {
    case v1::TRACKER_GITHUB: return std::unique_ptr<Tracker>(new GithubTracker());
    case v1::TRACKER_GITLAB: return std::unique_ptr<Tracker>(new GitlabTracker());
    case v1::TRACKER_GITEE: return std::unique_ptr<Tracker>(new GiteeTracker());
    default: break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no crawler for tracker ", static_cast<int>(kind), " (", TrackerName(kind),
                   ")"));
}

std::string SetQueryParam(absl::string_view url, absl::string_view name, absl::string_view value) {
  size_t value_end = 0;
  const size_t start = FindParam(url, name, &value_end);
  if (start != absl::string_view::npos) {
    return absl::StrCat(url.substr(0, start), value, url.substr(value_end));
  }
  const size_t hash = url.find('#');
  absl::string_view head = url.substr(0, hash);
  absl::string_view tail = hash == absl::string_view::npos ? "" : url.substr(hash);
  const char* sep = head.find('?') == absl::string_view::npos ? "?" : "&";
  return absl::StrCat(head, sep, name, "=", value, tail);
}

std::string QueryParam(absl::string_view url, absl::string_view name) {
  size_t value_end = 0;
  const size_t start = FindParam(url, name, &value_end);
  if (start == absl::string_view::npos) return "";
  return std::string(url.substr(start, value_end - start));
}

std::string UrlEncodeTime(absl::Time t) {
  // RFC 3339 in UTC needs escaping only for ':'.
  std::string out;
  for (char c : FormatRfc3339(t)) {
    if (c == ':') {
      out += "%3A";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PercentEncode(absl::string_view text) {
  // libcurl keeps exactly RFC 3986's unreserved characters; its handle argument is unused. A
  // length of 0 would mean "up to a NUL" to it, so an empty text is answered here.
  if (text.empty()) return "";
  char* escaped = curl_easy_escape(nullptr, text.data(), static_cast<int>(text.size()));
  if (escaped == nullptr) return "";  // out of memory (texts here are names and tokens)
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

int64_t HeaderInt(const HttpHeaders& headers, absl::string_view name) {
  int64_t v = 0;
  if (absl::SimpleAtoi(absl::StripAsciiWhitespace(headers.Get(name)), &v)) return v;
  return -1;
}

std::optional<std::string> NextFromLink(const HttpResponse& response) {
  const auto links = ParseLinkHeader(response.headers.Get("Link"));
  auto next = links.find("next");
  if (next == links.end()) return std::nullopt;
  return next->second;
}

int64_t ItemsInPages(int64_t pages, int per_page) {
  if (pages <= 0 || per_page <= 0) return 0;
  if (pages > std::numeric_limits<int64_t>::max() / per_page) {
    return std::numeric_limits<int64_t>::max();
  }
  return pages * per_page;
}

}  // namespace issuescope::crawler
