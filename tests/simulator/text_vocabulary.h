// Vocabulary tables behind the text generator: components, symptoms, contexts, hardware, title,
// sentence, comment and code templates (English and Chinese), stack-trace frames and error
// lines. Internal to the simulator; placeholders like {component} are expanded by
// text_generator.cc. Immutable after static initialisation, so safe to read from any thread.
#pragma once

#include <string>
#include <vector>

namespace issuescope::sim::vocab {

// Table is one list of alternatives.
using Table = std::vector<std::string>;

// Slot tables (expanded into templates).
extern const Table kComponents, kSymptoms, kContexts, kHardware, kFeatures, kModels;
extern const Table kComponentsCn, kSymptomsCn, kContextsCn, kHardwareCn;
// Templates.
extern const Table kTitles, kTitlesCn, kPrTitles, kPrTitlesCn, kPrBullets;
extern const Table kSentences, kSentencesCn, kComments, kCommentsCn, kFillers;
// Code and traces.
extern const Table kCodeLines, kFrames, kFunctions, kErrors, kOperatingSystems;

// AllTables lists every table above (for vocabulary checks).
std::vector<const Table*> AllTables();

}  // namespace issuescope::sim::vocab
