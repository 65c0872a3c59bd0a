#include "embedded_model.h"

#include <cstddef>

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

}  // namespace issuescope::indexer
