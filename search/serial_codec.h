// SerialWriter / SerialReader: the byte format of issuescope's Xapian classes sent over Xapian's
// remote protocol (search/remote_registry.h): what a match spy or posting source is made of
// (serialise / unserialise) and a match spy's results (serialise_results / merge_results).
// Unsigned numbers as base-128 varints, strings as their length then their bytes. A reader
// throws Xapian::SerialisationError, naming `what`, on truncated or trailing bytes, so a
// malformed message from a peer is an error, never a crash or a misread.
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "xapian.h"

namespace issuescope::search {

class SerialWriter {
 public:
  void Uint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void Str(absl::string_view s) {
    Uint(s.size());
    out_.append(s.data(), s.size());
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class SerialReader {
 public:
  SerialReader(absl::string_view in, const char* what) : in_(in), what_(what) {}

  uint64_t Uint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) Fail("ends inside a number");
      const auto byte = static_cast<unsigned char>(in_[pos_++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    Fail("has a number longer than 64 bits");
  }
  std::string Str() {
    const uint64_t n = Uint();
    if (n > in_.size() - pos_) Fail("ends inside a string");
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // Count reads a count of items that each take at least one more byte (a bound on allocation).
  uint64_t Count() {
    const uint64_t n = Uint();
    if (n > in_.size() - pos_) Fail("announces more items than it holds");
    return n;
  }
  // End checks that everything was read.
  void End() {
    if (pos_ != in_.size()) Fail("has bytes after its end");
  }
  // Fail throws the SerialisationError "<what> <why>".
  [[noreturn]] void Fail(const char* why) {
    throw Xapian::SerialisationError(absl::StrCat(what_, " ", why));
  }

 private:
  absl::string_view in_;
  const char* what_;
  size_t pos_ = 0;
};

}  // namespace issuescope::search
