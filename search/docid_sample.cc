#include "docid_sample.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "serial_codec.h"

namespace issuescope::search {

DocidSample::DocidSample(double fraction, int windows)
    : fraction_(std::clamp(fraction, 1e-9, 1.0)), windows_(std::max(windows, 1)) {}

void DocidSample::init(const Xapian::Database& db) {
  ranges_.clear();
  covered_ = 0;
  window_ = 0;
  current_ = 0;
  const Xapian::docid last = db.get_lastdocid();
  at_end_ = last == 0;
  if (at_end_) return;
  // About fraction·last ids in all, in at most windows_ windows of at least one id each
  // (windows that would overlap or touch are merged).
  const double target = std::max(1.0, std::ceil(fraction_ * last));
  const int windows = static_cast<int>(std::min<double>(windows_, target));
  const double stretch = static_cast<double>(last) / windows;
  const Xapian::docid width = static_cast<Xapian::docid>(std::ceil(target / windows));
  for (int k = 0; k < windows; ++k) {
    const Xapian::docid first = 1 + static_cast<Xapian::docid>(std::floor(k * stretch));
    if (first > last) break;
    const Xapian::docid end = std::min<Xapian::docid>(last, first + width - 1);
    if (!ranges_.empty() && first <= ranges_.back().second + 1) {
      ranges_.back().second = std::max(ranges_.back().second, end);
    } else {
      ranges_.emplace_back(first, end);
    }
  }
  for (const auto& [first, end] : ranges_) covered_ += end - first + 1;
}

Xapian::doccount DocidSample::get_termfreq_min() const { return 0; }
Xapian::doccount DocidSample::get_termfreq_est() const { return covered_; }
Xapian::doccount DocidSample::get_termfreq_max() const { return covered_; }

void DocidSample::Settle() {
  while (window_ < ranges_.size() && current_ > ranges_[window_].second) ++window_;
  if (window_ == ranges_.size()) {
    at_end_ = true;
    return;
  }
  current_ = std::max(current_, ranges_[window_].first);
}

void DocidSample::next(double /*min_wt*/) {
  if (at_end_) return;
  ++current_;
  Settle();
}

void DocidSample::skip_to(Xapian::docid did, double /*min_wt*/) {
  if (at_end_ || did <= current_) return;
  current_ = did;
  Settle();
}

bool DocidSample::at_end() const { return at_end_; }

Xapian::docid DocidSample::get_docid() const { return current_; }

DocidSample* DocidSample::clone() const { return new DocidSample(fraction_, windows_); }

std::string DocidSample::get_description() const {
  return absl::StrCat("DocidSample(fraction=", fraction_, ", windows=", windows_, ")");
}

std::string DocidSample::serialise() const {
  SerialWriter w;
  w.Str(Xapian::sortable_serialise(fraction_));  // exact
  w.Uint(static_cast<uint64_t>(windows_));
  return w.Take();
}

DocidSample* DocidSample::unserialise_with_registry(const std::string& serialised,
                                                    const Xapian::Registry& /*registry*/) const {
  SerialReader r(serialised, "docid sample");
  const double fraction = Xapian::sortable_unserialise(r.Str());
  const uint64_t windows = r.Uint();
  r.End();
  if (!(fraction > 0 && fraction <= 1) || windows < 1 || windows > (1u << 20)) {
    throw Xapian::SerialisationError("docid sample out of range");
  }
  return new DocidSample(fraction, static_cast<int>(windows));
}

}  // namespace issuescope::search
