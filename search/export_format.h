// The one record format of exported hits, used by `issuescope export` (CLI, local index or
// server), GET /v1/export of the HTTP gateway and `issuescope search --json`, so a script sees the
// same columns whichever way it asked.
//
// A hit becomes the columns of kExportColumns, in that order. CSV (RFC 4180): a header line, then
// one record per hit, every line ending in "\r\n", fields with commas, quotes or line breaks
// quoted, list columns (labels, secondary_themes, subthemes, keywords) joined with ";", `llm`
// empty for an untagged hit. JSON Lines: one object per hit with the same keys in the same
// order, lists as arrays, `llm` null for an untagged hit, numbers as numbers, timestamps as
// RFC 3339 strings ("" when unset).
//
// All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "issuescope/v1/search.pb.h"

namespace issuescope::search {

// kExportColumns are the export columns, in order.
extern const char* const kExportColumns[];
// kExportColumnCount is the number of entries of kExportColumns.
extern const size_t kExportColumnCount;

// ExportCsvHeader is the CSV header line (column names), ending in "\r\n".
std::string ExportCsvHeader();

// ExportCsvRow renders `hit` as one CSV record ending in "\r\n".
std::string ExportCsvRow(const v1::SearchHit& hit);

// ExportJson renders `hit` as one JSON object on one line (no line break).
std::string ExportJson(const v1::SearchHit& hit);

}  // namespace issuescope::search
