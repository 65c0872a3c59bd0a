// IssueSections: what each part of an issue's Markdown body is, so that search and tagging weigh
// the author's prose above what the issue templates of the DL trackers make people paste.
//
// The recogniser knows the templates of PyTorch, TensorFlow, vLLM, DeepSpeed, Megatron-LM and
// MindSpore (GitHub issue forms and Gitee templates): their headings ("### 🐛 Describe the bug",
// "## Environment", "### Your current environment", "**System information**", "Before
// submitting a new issue…"), `_No response_`, checklists and HTML comments are kTemplate; the
// environment dumps they ask for (`collect_env.py` output, "Versions", `pip list`, `nvidia-smi`,
// "key: value" runs under an environment heading, Chinese "环境" headings) are kEnvironment;
// fenced or indented code is kCode, or kLog when it reads like a log or a traceback; and the
// last exception line of a traceback ("torch.OutOfMemoryError: CUDA out of memory…") is
// kException, a strong signal of what went wrong. Everything else is kProse.
//
// Sections are byte ranges of the body, in order, covering it without overlap (blank lines
// belong to the section around them). Pure functions; thread-safe; linear in the body's size.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace issuescope {

// SectionKind says what a part of an issue body is.
enum class SectionKind {
  kProse,        // the author's own words
  kException,    // the final exception line of a traceback or error log
  kCode,         // source code, commands, configuration
  kLog,          // program output: logs, tracebacks
  kEnvironment,  // environment dumps (versions, hardware, packages)
  kTemplate,     // template headings, instructions, checklists, "_No response_"
};

// SectionKindName is "prose", "exception", "code", "log", "environment" or "template".
const char* SectionKindName(SectionKind kind);

// Section is one part of a body: bytes [begin, end) of it.
struct Section {
  SectionKind kind = SectionKind::kProse;
  size_t begin = 0;
  size_t end = 0;
};

// SplitSections classifies every line of `body` and merges neighbours of one kind.
std::vector<Section> SplitSections(absl::string_view body);

// PlainText renders a piece of Markdown prose as plain text for people: heading marks, list
// and quote markers, emphasis, inline code backticks, HTML tags and comments are dropped, links
// and images become their text; line breaks become spaces and runs of blanks one.
std::string PlainText(absl::string_view markdown);

// SignalText is the text that carries an issue's meaning for tagging: its prose and exception
// lines, in order, joined with newlines (environment dumps, logs, code and template text left
// out). Returns `body` unchanged when it has no sections (empty).
std::string SignalText(absl::string_view body);

}  // namespace issuescope
