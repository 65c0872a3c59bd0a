#include "indexer/term_automaton.h"

#include <deque>

#include "absl/strings/ascii.h"

namespace issuescope::taxonomy {
namespace {

bool IsWordByte(unsigned char c) { return absl::ascii_isalnum(c) || c == '_'; }

}  // namespace

bool TermAutomaton::Accepted(absl::string_view text, size_t end, const std::string& term) {
  const size_t pos = end - term.size();
  const bool check_start = IsWordByte(static_cast<unsigned char>(term.front()));
  const bool check_end = IsWordByte(static_cast<unsigned char>(term.back()));
  if (check_start && pos > 0 && IsWordByte(static_cast<unsigned char>(text[pos - 1]))) {
    return false;
  }
  if (!check_end || end >= text.size()) return true;
  size_t after = end;
  if (text[after] == 's' || text[after] == 'S') {
    ++after;
  } else if (text.substr(after, 2) == "es" || text.substr(after, 2) == "ES") {
    after += 2;
  }
  return after >= text.size() || !IsWordByte(static_cast<unsigned char>(text[after]));
}

bool TermAutomaton::FindTermNaive(absl::string_view text, absl::string_view term) {
  if (term.empty()) return false;
  const std::string t(term);
  size_t pos = 0;
  while ((pos = text.find(term, pos)) != absl::string_view::npos) {
    if (Accepted(text, pos + term.size(), t)) return true;
    ++pos;
  }
  return false;
}

TermAutomaton::TermAutomaton(const std::vector<std::string>& terms) : terms_(terms) {
  // Columns: one per byte value that occurs in some term.
  for (const std::string& t : terms_) {
    for (unsigned char c : t) {
      if (byte_class_[c] == 0) byte_class_[c] = static_cast<uint16_t>(classes_++);
    }
  }
  // The trie (-1: no edge yet).
  goto_.assign(classes_, -1);
  out_.emplace_back();
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (terms_[i].empty()) continue;
    int32_t state = 0;
    for (unsigned char c : terms_[i]) {
      int32_t& next = goto_[static_cast<size_t>(state) * classes_ + byte_class_[c]];
      if (next < 0) {
        next = static_cast<int32_t>(out_.size());
        out_.emplace_back();
        goto_.resize(goto_.size() + classes_, -1);
      }
      // goto_ may have been reallocated: read the edge again.
      state = goto_[static_cast<size_t>(state) * classes_ + byte_class_[c]];
    }
    out_[state].push_back(static_cast<int32_t>(i));
  }
  // Breadth first: failure links, completed transitions and output links.
  const size_t states = out_.size();
  std::vector<int32_t> fail(states, 0);
  out_link_.assign(states, -1);
  std::deque<int32_t> queue;
  for (int c = 0; c < classes_; ++c) {
    int32_t& next = goto_[c];
    if (next < 0) {
      next = 0;
    } else {
      fail[next] = 0;
      queue.push_back(next);
    }
  }
  while (!queue.empty()) {
    const int32_t state = queue.front();
    queue.pop_front();
    const int32_t f = fail[state];
    out_link_[state] = !out_[f].empty() ? f : out_link_[f];
    for (int c = 0; c < classes_; ++c) {
      int32_t& next = goto_[static_cast<size_t>(state) * classes_ + c];
      const int32_t via_fail = goto_[static_cast<size_t>(f) * classes_ + c];
      if (next < 0) {
        next = via_fail;
      } else {
        fail[next] = via_fail;
        queue.push_back(next);
      }
    }
  }
}

std::vector<char> TermAutomaton::Find(absl::string_view text) const {
  std::vector<char> found(terms_.size(), 0);
  int32_t state = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const uint16_t cls = byte_class_[static_cast<unsigned char>(text[i])];
    state = goto_[static_cast<size_t>(state) * classes_ + cls];
    for (int32_t s = out_[state].empty() ? out_link_[state] : state; s > 0; s = out_link_[s]) {
      for (int32_t term : out_[s]) {
        if (!found[term] && Accepted(text, i + 1, terms_[term])) found[term] = 1;
      }
    }
  }
  return found;
}

}  // namespace issuescope::taxonomy
