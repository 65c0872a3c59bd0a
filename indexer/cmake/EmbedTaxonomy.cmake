# Generates a .cc holding a taxonomy file as a C++ string (run with cmake -P):
#   cmake -DINPUT=llm-dl-1.toml -DOUTPUT=embedded_taxonomy.cc -P EmbedTaxonomy.cmake
# The bytes are written as hex escapes in chunks, so any file content is safe.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
set(body "")
set(offset 0)
while(offset LESS hex_length)
  string(SUBSTRING "${hex}" ${offset} 160 chunk)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${chunk}")
  string(APPEND body "    \"${escaped}\"\n")
  math(EXPR offset "${offset} + 160")
endwhile()
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${name} by indexer/cmake/EmbedTaxonomy.cmake; do not edit.
#include \"embedded_taxonomy.h\"

namespace issuescope::indexer {
namespace {
constexpr char kText[] =
${body}    \"\";
}  // namespace

absl::string_view EmbeddedTaxonomyText() { return absl::string_view(kText, sizeof(kText) - 1); }
absl::string_view EmbeddedTaxonomyName() { return \"<embedded>/${name}\"; }

}  // namespace issuescope::indexer
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
