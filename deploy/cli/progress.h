// ProgressBoard: the live progress lines `issuescope crawl` and `issuescope up` print, one per
// repository (issues and comments fetched, requests, rate budget, ETA, state). On a terminal the
// lines are redrawn in place; otherwise a line is printed when a repository's state changes and
// at most every few seconds while it crawls, so logs stay readable.
//
// Thread-safe: crawl threads call Update; one thread calls Render.
#pragma once

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "issuescope/v1/coordinator.pb.h"

namespace issuescope::cli {

// RepoLine is what one progress line shows.
struct RepoLine {
  std::string state = "pending";  // pending, crawling, done, failed
  v1::CrawlCounters counters;
  int64_t issues_estimated = 0;
  int64_t rate_remaining = -1;
  absl::Time rate_reset = absl::InfinitePast();
  absl::Time started = absl::InfinitePast();
  absl::Time finished = absl::InfinitePast();
  std::string error;
  // Requests per second over the last minute (< 0: not shown).
  double request_rate = -1;
  // Seconds left as reported by the coordinator (< 0: computed from `started` when crawling).
  int64_t eta_s = -1;
};

// FormatRepoLine renders one line (without newline), e.g.
// "github:o/r  crawling  [#####...............]  24%  issues 1,200/~5,000  comments 3,400
//  (2 unchanged)  requests 47 (2 not modified)  1.5 req/s  budget 4,953  ETA 0:41" (the bar
// only when the estimate is known). Issues and comments count what reached the store (new or
// newer versions), so a full crawl's final line equals what the store holds; "unchanged" counts
// items fetched again without a change (the page at the cursor is listed once more to record
// its ETag).
std::string FormatRepoLine(const std::string& slug, const RepoLine& line, absl::Time now);

// FormatProgressBar renders `done` of `total` as "[####......]" (`width` cells) and a percent;
// "" when total <= 0.
std::string FormatProgressBar(int64_t done, int64_t total, int width = 20);

// FormatDurationShort renders seconds as "M:SS" or "H:MM:SS".
std::string FormatDurationShort(int64_t seconds);


class ProgressBoard {
 public:
  // `out` is where lines go; `tty` selects in-place redrawing.
  ProgressBoard(FILE* out, bool tty) : out_(out), tty_(tty) {}
  // Update replaces the line of `slug`.
  void Update(const std::string& slug, const RepoLine& line);
  // Render prints the board (redraw on a TTY; changed or stale lines otherwise).
  void Render(absl::Time now);
  // Finish prints the final state of every line once more (non-TTY: only unprinted changes).
  void Finish(absl::Time now);
  // Lines returns a copy of all lines.
  std::map<std::string, RepoLine> Lines() const;

 private:
  mutable std::mutex mu_;
  FILE* out_;
  bool tty_;
  std::map<std::string, RepoLine> lines_;
  std::map<std::string, std::string> last_printed_state_;
  std::map<std::string, absl::Time> last_printed_at_;
  int drawn_ = 0;
};

// WithThousands formats 12345 as "12,345".
std::string WithThousands(int64_t n);

}  // namespace issuescope::cli
