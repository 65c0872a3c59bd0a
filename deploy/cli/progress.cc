#include "progress.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace issuescope::cli {

std::string WithThousands(int64_t n) {
  std::string digits = absl::StrCat(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

std::string FormatProgressBar(int64_t done, int64_t total, int width) {
  if (total <= 0 || width <= 0) return "";
  const double fraction = std::min(1.0, std::max(0.0, static_cast<double>(done) / total));
  const int filled = static_cast<int>(fraction * width + 0.5);
  return absl::StrFormat("[%s%s] %3d%%", std::string(filled, '#'), std::string(width - filled, '.'),
                         static_cast<int>(fraction * 100));
}

std::string FormatDurationShort(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds >= 3600) {
    return absl::StrFormat("%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
  }
  return absl::StrFormat("%d:%02d", seconds / 60, seconds % 60);
}

std::string FormatRepoLine(const std::string& slug, const RepoLine& l, absl::Time now) {
  const v1::CrawlCounters& c = l.counters;
  std::string s = absl::StrFormat("%-40s %-8s", slug, l.state);
  if (l.issues_estimated > 0) {
    absl::StrAppend(&s, " ", FormatProgressBar(c.issues_stored(), l.issues_estimated));
  }
  // Counts are of what reached the store (new or newer versions). Items fetched again without a
  // change (the page at the cursor is listed once more to record its ETag; an incremental
  // crawl's `since` is inclusive) are counted apart.
  absl::StrAppend(&s, " issues ", WithThousands(c.issues_stored()));
  if (l.issues_estimated > 0) absl::StrAppend(&s, "/~", WithThousands(l.issues_estimated));
  absl::StrAppend(&s, "  comments ", WithThousands(c.comments_stored()));
  const int64_t unchanged = c.issues_fetched() + c.comments_fetched() - c.issues_stored() -
                            c.comments_stored();
  if (unchanged > 0) absl::StrAppend(&s, " (", WithThousands(unchanged), " unchanged)");
  absl::StrAppend(&s, "  requests ", WithThousands(c.requests()));
  if (c.items_quarantined() > 0) absl::StrAppend(&s, "  quarantined ", c.items_quarantined());
  if (c.not_modified() > 0) absl::StrAppend(&s, " (", c.not_modified(), " not modified)");
  if (c.retries() > 0) absl::StrAppend(&s, "  retries ", c.retries());
  if (l.request_rate >= 0) absl::StrAppend(&s, absl::StrFormat("  %.1f req/s", l.request_rate));
  if (l.rate_remaining >= 0) {
    absl::StrAppend(&s, "  budget ", WithThousands(l.rate_remaining));
    if (l.rate_reset != absl::InfinitePast()) {
      absl::StrAppend(&s, " (reset ",
                      absl::FormatTime("%H:%M:%S", l.rate_reset, absl::LocalTimeZone()), ")");
    }
  }
  if (l.eta_s >= 0) {
    absl::StrAppend(&s, "  ETA ", FormatDurationShort(l.eta_s));
  } else if (l.state == "crawling" && l.started != absl::InfinitePast() &&
             l.issues_estimated > 0 && c.issues_stored() > 0 &&
             c.issues_stored() < l.issues_estimated) {
    const double elapsed = absl::ToDoubleSeconds(now - l.started);
    const double rate = c.issues_stored() / std::max(elapsed, 0.001);
    const int64_t eta = static_cast<int64_t>((l.issues_estimated - c.issues_stored()) / rate);
    absl::StrAppend(&s, "  ETA ", FormatDurationShort(eta));
  }
  if (l.finished != absl::InfinitePast() && l.started != absl::InfinitePast()) {
    absl::StrAppend(&s, absl::StrFormat("  in %.1fs", absl::ToDoubleSeconds(l.finished - l.started)));
  }
  if (!l.error.empty()) absl::StrAppend(&s, "  error: ", l.error);
  return s;
}

void ProgressBoard::Update(const std::string& slug, const RepoLine& line) {
  std::lock_guard<std::mutex> lock(mu_);
  lines_[slug] = line;
}

std::map<std::string, RepoLine> ProgressBoard::Lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

void ProgressBoard::Render(absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_) {
    if (drawn_ > 0) absl::FPrintF(out_, "\x1b[%dA", drawn_);
    for (const auto& [slug, line] : lines_) {
      absl::FPrintF(out_, "\x1b[2K%s\n", FormatRepoLine(slug, line, now));
    }
    drawn_ = static_cast<int>(lines_.size());
  } else {
    for (const auto& [slug, line] : lines_) {
      auto printed = last_printed_state_.find(slug);
      const bool changed = printed == last_printed_state_.end() || printed->second != line.state;
      const bool stale = line.state == "crawling" &&
                         (last_printed_at_.count(slug) == 0 ||
                          now - last_printed_at_[slug] >= absl::Seconds(5));
      if (!changed && !stale) continue;
      absl::FPrintF(out_, "%s\n", FormatRepoLine(slug, line, now));
      last_printed_state_[slug] = line.state;
      last_printed_at_[slug] = now;
    }
  }
  fflush(out_);
}

void ProgressBoard::Finish(absl::Time now) { Render(now); }

}  // namespace issuescope::cli
