// The project's non-cryptographic hashes, one copy each: FNV-1a 64 (shards, rendezvous
// assignment, study draws, tagger fingerprints, page-token fingerprints, classifier features)
// and SplitMix64 (mixing). Stable across platforms and runs: stored shard layouts, model files
// and page tokens depend on them, so they must never change.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace issuescope {

// kFnv1aBasis is FNV-1a 64's offset basis; kFnv1aPrime its prime.
inline constexpr uint64_t kFnv1aBasis = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ULL;

// Fnv1a continues FNV-1a 64 from `hash` over `bytes`: hashing a string in pieces gives the hash
// of their concatenation. Fnv1a(kFnv1aBasis, s) is the FNV-1a 64 hash of s.
inline uint64_t Fnv1a(uint64_t hash, absl::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= kFnv1aPrime;
  }
  return hash;
}
inline uint64_t Fnv1a(absl::string_view bytes) { return Fnv1a(kFnv1aBasis, bytes); }

// Mix64 is SplitMix64's finaliser: a bijection of 64-bit values with full avalanche.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// SplitMix64 is one step of the SplitMix64 generator from state `x`: Mix64(x + golden gamma).
inline uint64_t SplitMix64(uint64_t x) { return Mix64(x + 0x9e3779b97f4a7c15ULL); }

}  // namespace issuescope
