#include "indexer/embedded_model.h"

#include <cstddef>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "indexer/taxonomy_tagger.h"

// The model file's bytes, included by the assembler (.incbin): a 3 MB array as C++ source would
// cost the compiler far more. ISSUESCOPE_EMBEDDED_MODEL_PATH is the file's absolute path (set by
// indexer/CMakeLists.txt, which also makes this object depend on the file).
#ifndef ISSUESCOPE_EMBEDDED_MODEL_PATH
#error "ISSUESCOPE_EMBEDDED_MODEL_PATH must name the model file"
#endif

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".global issuescope_embedded_model_begin\n"
        "issuescope_embedded_model_begin:\n"
        ".incbin \"" ISSUESCOPE_EMBEDDED_MODEL_PATH "\"\n"
        ".global issuescope_embedded_model_end\n"
        "issuescope_embedded_model_end:\n"
        ".byte 0\n"
        ".previous\n");

extern "C" const char issuescope_embedded_model_begin[];
extern "C" const char issuescope_embedded_model_end[];

namespace issuescope::indexer {

absl::string_view EmbeddedModelBytes() {
  return absl::string_view(
      issuescope_embedded_model_begin,
      static_cast<size_t>(issuescope_embedded_model_end - issuescope_embedded_model_begin));
}

absl::string_view EmbeddedModelName() { return "<embedded>/llm-dl-1.model"; }

absl::StatusOr<ModelArgument> ResolveModelArgument(absl::string_view arg,
                                                   absl::string_view taxonomy_tag) {
  ModelArgument out;
  if (arg.empty() || arg == kModelNone) return out;
  if (arg == kModelDefault) {
    const absl::string_view bytes = EmbeddedModelBytes();
    if (bytes.empty()) return out;  // a build without a model (bootstrapping one)
    ASSIGN_OR_RETURN(classifier::LinearModel model,
                     classifier::LinearModel::Parse(bytes, EmbeddedModelName()));
    if (model.taxonomy_tag() != taxonomy_tag) return out;
    out.model = std::move(model);
    out.bytes = std::string(bytes);
    out.source = std::string(EmbeddedModelName());
    return out;
  }
  const std::string path(arg);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read model file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  out.bytes = buffer.str();
  ASSIGN_OR_RETURN(classifier::LinearModel model, classifier::LinearModel::Parse(out.bytes, path));
  out.model = std::move(model);
  out.source = path;
  return out;
}

std::string ModelLabel(const classifier::LinearModel& model, absl::string_view bytes) {
  return absl::StrCat(model.name().empty() ? "unnamed" : model.name(), "@",
                      FingerprintHash(bytes).substr(0, 8));
}

}  // namespace issuescope::indexer
