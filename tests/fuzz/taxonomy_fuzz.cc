// Fuzz target: the taxonomy TOML loader (indexer/taxonomy.h) and, for a file it accepts, the
// matcher compiled from it (indexer/taxonomy_matcher.h) over a fixed English and Chinese text
// and the input itself. The loader must refuse what it cannot use with a status (never throw),
// and what it accepts must compile: every RE2 pattern, every label target. Matched cues are cut
// on character boundaries (they become Tags.evidence, a protobuf string).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/text_tokens.h"
#include "indexer/taxonomy.h"
#include "indexer/taxonomy_matcher.h"

namespace tx = issuescope::taxonomy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto taxonomy = tx::ParseTaxonomy(text, "fuzz.toml");
  if (!taxonomy.ok()) return 0;
  (void)taxonomy->Tag();
  for (const tx::Kind& kind : taxonomy->kinds) {
    if (taxonomy->FindKind(kind.id) != &kind) __builtin_trap();
    for (const tx::Theme& theme : kind.themes) {
      if (!taxonomy->HasNode(theme.id)) __builtin_trap();
      for (const tx::SubTheme& sub : theme.subthemes) {
        if (taxonomy->FindSubTheme(sub.id) == nullptr) __builtin_trap();
      }
    }
  }
  const tx::TaxonomyMatcher matcher(&*taxonomy);
  const bool utf8_input = issuescope::IsValidUtf8(text);
  for (absl::string_view sample :
       {absl::string_view("CUDA out of memory (OOM) while training a LLM with ZeRO-3; "
                          "RuntimeError: NCCL timeout. How do I fix this? 显存不足，训练大模型时内存泄漏"),
        text}) {
    for (const tx::CueMatch& m : matcher.Match(sample)) {
      if (utf8_input && !issuescope::IsValidUtf8(m.cue)) __builtin_trap();
    }
  }
  (void)matcher.MapLabels({"bug", "Type: Bug", "module: cuda", std::string(text.substr(0, 64))},
                          "Owner/Repo");
  return 0;
}
