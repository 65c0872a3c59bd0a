#include "common/issue_sections.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "re2/re2.h"

namespace issuescope {
namespace {

struct Line {
  absl::string_view text;  // without the line break
  size_t begin = 0;        // offset in the body
  size_t end = 0;          // offset after the line break
};

std::vector<Line> Lines(absl::string_view body) {
  std::vector<Line> out;
  size_t at = 0;
  while (at < body.size()) {
    size_t nl = body.find('\n', at);
    const size_t stop = nl == absl::string_view::npos ? body.size() : nl;
    absl::string_view text = body.substr(at, stop - at);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    out.push_back({text, at, nl == absl::string_view::npos ? body.size() : nl + 1});
    at = out.back().end;
  }
  return out;
}

re2::StringPiece Piece(absl::string_view s) { return re2::StringPiece(s.data(), s.size()); }

bool Blank(absl::string_view s) { return absl::StripAsciiWhitespace(s).empty(); }

std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(s); }

// HeadingText returns the text of a Markdown heading ("### Env" / "**Env**" alone on a line /
// "Env:" alone), lower-cased and without emoji-like leading symbols; "" when the line is none.
std::string HeadingText(absl::string_view line) {
  absl::string_view s = absl::StripAsciiWhitespace(line);
  bool heading = false;
  if (absl::ConsumePrefix(&s, "#")) {
    while (absl::ConsumePrefix(&s, "#")) {
    }
    heading = true;
  } else if (s.size() > 4 && absl::StartsWith(s, "**") && absl::EndsWith(s, "**") &&
             s.find("**", 2) == s.size() - 2) {
    s = s.substr(2, s.size() - 4);
    heading = true;
  }
  if (!heading) return "";
  std::string text = Lower(absl::StripAsciiWhitespace(s));
  // Drop leading non-ASCII symbols (🐛, 🚀, 📚) and punctuation.
  size_t i = 0;
  while (i < text.size() && (static_cast<unsigned char>(text[i]) >= 0xF0 ||
                             (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80 ||
                             text[i] == ' ' || text[i] == ':')) {
    ++i;
  }
  text = text.substr(i);
  while (!text.empty() && (text.back() == ':' || text.back() == ' ')) text.pop_back();
  return text.empty() ? std::string("-") : text;
}

bool IsEnvironmentHeading(const std::string& h) {
  static const char* const kNames[] = {
      "your current environment", "environment", "environment info", "environment information",
      "versions", "system information", "system info", "system information (please fill in)",
      "env", "environment details", "software versions", "hardware", "platform",
      "describe your environment", "collect_env", "your environment", "软件环境", "硬件环境",
      "环境", "环境信息", "运行环境", "environment / 环境信息", "环境 / environment"};
  for (const char* n : kNames) {
    if (h == n) return true;
  }
  return absl::StrContains(h, "environment") && h.size() < 48;
}

bool IsBoilerplateHeading(const std::string& h) {
  return absl::StartsWith(h, "before submitting") || h == "checklist" || h == "prerequisites" ||
         h == "checks" || absl::StartsWith(h, "please ") || h == "issue type" ||
         h == "have you reproduced the bug with tf nightly?" || h == "source" ||
         h == "custom code" || absl::StartsWith(h, "have you ");
}

bool IsTemplateLine(absl::string_view line) {
  absl::string_view s = absl::StripAsciiWhitespace(line);
  if (s == "_No response_" || s == "No response" || s == "N/A") return true;
  if (absl::StartsWith(s, "- [x]") || absl::StartsWith(s, "- [ ]") ||
      absl::StartsWith(s, "- [X]") || absl::StartsWith(s, "* [x]") ||
      absl::StartsWith(s, "* [ ]")) {
    return true;
  }
  return absl::StartsWith(s, "<details") || absl::StartsWith(s, "</details") ||
         absl::StartsWith(s, "<summary") || s == "</summary>";
}

// The final line of a traceback or error message: "RuntimeError: …",
// "torch.OutOfMemoryError: …", "ValueError", "E   AssertionError: …".
const RE2& ExceptionRe() {
  static const RE2* re = new RE2(
      R"(^\s*(?:E\s+|\[rank\d+\]:\s*|ERROR[^A-Za-z]*)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Fault)|Segmentation fault|Killed|CUDA error)\b(?::.*)?$)");
  return *re;
}

bool IsExceptionLine(absl::string_view line) {
  if (line.size() >= 600) return false;
  // Cheap test first: every match names one of these.
  if (!absl::StrContains(line, "Error") && !absl::StrContains(line, "Exception") &&
      !absl::StrContains(line, "Exit") && !absl::StrContains(line, "Interrupt") &&
      !absl::StrContains(line, "Fault") && !absl::StrContains(line, "fault") &&
      !absl::StrContains(line, "Killed") && !absl::StrContains(line, "CUDA error")) {
    return false;
  }
  return RE2::FullMatch(Piece(line), ExceptionRe());
}

const RE2& LogLineRe() {
  static const RE2* re = new RE2(
      R"(^\s*(?:Traceback \(most recent call last\)|File ".*", line \d+|\(\w+ pid=\d+\)|\[rank\d+\]|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\b|[IWEF]\d{4} \d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d:\d\d:\d\d|\[\d{4}-\d\d-\d\d|at [\w.$]+\(.*\)|\^+\s*$|~+\^+|>>>|In \[\d+\]|Out\[\d+\]))");
  return *re;
}

bool IsLogLine(absl::string_view line) {
  // Cheap test first: a log line starts (after blanks) with a digit, '[', '(', '^', '~', '>',
  // "File", "Traceback", "at ", "In"/"Out", or a level name in capitals.
  absl::string_view s = absl::StripLeadingAsciiWhitespace(line);
  if (s.empty()) return false;
  const char c = s[0];
  if (!(absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '[' || c == '(' || c == '^' ||
        c == '~' || c == '>' || c == 'F' || c == 'T' || c == 'a' || c == 'I' || c == 'O' ||
        c == 'W' || c == 'E' || c == 'D' || c == 'C')) {
    return false;
  }
  return RE2::PartialMatch(Piece(line), LogLineRe());
}

const RE2& EnvLineRe() {
  static const RE2* re = new RE2(
      R"(^\s*(?:[-*]\s*)?(?:PyTorch version|Is debug build|CUDA used to build|ROCM used to build|OS|GCC version|Clang version|CMake version|Libc version|Python version|Python platform|Is CUDA available|CUDA runtime version|CUDA_MODULE_LOADING|GPU models and configuration|Nvidia driver version|cuDNN version|HIP runtime version|MIOpen runtime version|Is XNNPACK available|Versions of relevant libraries|Collecting environment information|vLLM Version|vLLM Build Flags|GPU Topology|Neuron SDK Version|TensorFlow version|TensorFlow installed from|Bazel version|GPU model and memory|Mobile device|Keras version|MXNet version|CUDA/cuDNN version|Python version|Operating System|Platform|NCCL|nvcc|Driver Version|Architecture|CPU op-mode|Model name|Flags|Vulnerability [\w ]+|L\d[di]? cache|NUMA node\d* CPU)\b.*$)");
  return *re;
}

bool IsEnvLine(absl::string_view line) {
  // Every environment line has a ':' (key: value) or a digit (a version).
  if (line.find(':') == absl::string_view::npos &&
      std::none_of(line.begin(), line.end(),
                   [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); })) {
    return false;
  }
  if (RE2::PartialMatch(Piece(line), EnvLineRe())) return true;
  // "[pip3] numpy==1.26.4", "[conda] torch 2.5.1", "numpy==1.24.0", "torch 2.1.0+cu121"
  static const RE2* pkg = new RE2(
      R"(^\s*(?:\[(?:pip3?|conda)\]\s*)?[A-Za-z][\w.-]*(?:==|\s{2,}|\s)v?\d+(?:\.\d+)+\S*\s*(?:pypi_0|pypi)?\s*$)");
  return RE2::FullMatch(Piece(line), *pkg);
}

// ClassifyBlock decides what a fenced or <details> block is from its lines.
SectionKind ClassifyBlock(const std::vector<absl::string_view>& lines, bool in_env) {
  if (in_env) return SectionKind::kEnvironment;
  // The first lines decide (a long dump need not be read to the end).
  constexpr size_t kSampled = 40;
  size_t env = 0, log = 0, nonblank = 0;
  for (absl::string_view l : lines) {
    if (Blank(l)) continue;
    if (++nonblank > kSampled) {
      nonblank = kSampled;
      break;
    }
    if (IsEnvLine(l)) ++env;
    if (IsLogLine(l) || IsExceptionLine(l)) ++log;
  }
  if (nonblank == 0) return SectionKind::kCode;
  if (env * 4 >= nonblank && env >= 2) return SectionKind::kEnvironment;
  if (log * 5 >= nonblank && log >= 1) return SectionKind::kLog;
  return SectionKind::kCode;
}

}  // namespace

const char* SectionKindName(SectionKind kind) {
  switch (kind) {
    case SectionKind::kProse: return "prose";
    case SectionKind::kException: return "exception";
    case SectionKind::kCode: return "code";
    case SectionKind::kLog: return "log";
    case SectionKind::kEnvironment: return "environment";
    case SectionKind::kTemplate: return "template";
  }
  return "prose";
}

std::vector<Section> SplitSections(absl::string_view body) {
  const std::vector<Line> lines = Lines(body);
  std::vector<SectionKind> kinds(lines.size(), SectionKind::kProse);
  // Where the lines under the current heading go: prose, environment or template.
  SectionKind region = SectionKind::kProse;
  size_t i = 0;
  while (i < lines.size()) {
    absl::string_view text = lines[i].text;
    absl::string_view stripped = absl::StripLeadingAsciiWhitespace(text);
    // Fenced code: ``` or ~~~ up to the matching fence (or the end).
    if (absl::StartsWith(stripped, "```") || absl::StartsWith(stripped, "~~~")) {
      const absl::string_view fence = stripped.substr(0, 3);
      size_t j = i + 1;
      std::vector<absl::string_view> inner;
      while (j < lines.size() &&
             !absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[j].text), fence)) {
        inner.push_back(lines[j].text);
        ++j;
      }
      const SectionKind kind = ClassifyBlock(inner, region == SectionKind::kEnvironment);
      const size_t last = std::min(j, lines.size() - 1);
      for (size_t k = i; k <= last; ++k) kinds[k] = kind;
      // The last exception line of a log stands out.
      if (kind == SectionKind::kLog) {
        for (size_t k = j; k-- > i + 1;) {
          if (Blank(lines[k].text)) continue;
          if (IsExceptionLine(lines[k].text)) {
            kinds[k] = SectionKind::kException;
            break;
          }
          if (k + 6 < j) break;  // only near the end of the block
        }
      }
      i = last + 1;
      continue;
    }
    // HTML comments (template instructions), possibly over several lines.
    if (absl::StartsWith(stripped, "<!--")) {
      size_t j = i;
      while (j < lines.size() && !absl::StrContains(lines[j].text, "-->")) ++j;
      const size_t last = std::min(j, lines.size() - 1);
      for (size_t k = i; k <= last; ++k) kinds[k] = SectionKind::kTemplate;
      i = last + 1;
      continue;
    }
    const std::string heading = HeadingText(text);
    if (!heading.empty()) {
      kinds[i] = SectionKind::kTemplate;
      region = IsEnvironmentHeading(heading)  ? SectionKind::kEnvironment
               : IsBoilerplateHeading(heading) ? SectionKind::kTemplate
                                               : SectionKind::kProse;
      ++i;
      continue;
    }
    if (IsTemplateLine(text)) {
      kinds[i] = SectionKind::kTemplate;
    } else if (Blank(text)) {
      kinds[i] = i > 0 ? kinds[i - 1] : SectionKind::kProse;
    } else if (region != SectionKind::kProse) {
      kinds[i] = region;
    } else if (IsExceptionLine(text)) {
      kinds[i] = SectionKind::kException;
    } else if (IsLogLine(text)) {
      kinds[i] = SectionKind::kLog;
    } else if (IsEnvLine(text)) {
      kinds[i] = SectionKind::kEnvironment;
    } else if ((absl::StartsWith(text, "    ") || absl::StartsWith(text, "\t")) &&
               (i == 0 || Blank(lines[i - 1].text) || kinds[i - 1] == SectionKind::kCode ||
                kinds[i - 1] == SectionKind::kLog)) {
      // Indented code after a blank line (not a list item's continuation); indented lines
      // inside a traceback stay log.
      kinds[i] = i > 0 && kinds[i - 1] == SectionKind::kLog ? SectionKind::kLog
                                                              : SectionKind::kCode;
    }
    ++i;
  }
  std::vector<Section> out;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (!out.empty() && out.back().kind == kinds[k]) {
      out.back().end = lines[k].end;
    } else {
      out.push_back({kinds[k], lines[k].begin, lines[k].end});
    }
  }
  return out;
}

std::string PlainText(absl::string_view markdown) {
  std::string out;
  out.reserve(markdown.size());
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    absl::string_view s = absl::StripAsciiWhitespace(line);
    while (absl::ConsumePrefix(&s, "#") || absl::ConsumePrefix(&s, ">")) {
    }
    s = absl::StripLeadingAsciiWhitespace(s);
    if (absl::ConsumePrefix(&s, "- ") || absl::ConsumePrefix(&s, "* ") ||
        absl::ConsumePrefix(&s, "+ ")) {
    }
    if (s.empty()) continue;
    if (!out.empty() && out.back() != ' ') out.push_back(' ');
    size_t i = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '<' && i + 1 < s.size() &&
          (absl::ascii_isalpha(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '/' ||
           s[i + 1] == '!')) {  // an HTML tag or comment: dropped ("a < b" stays)
        const size_t close = s.find('>', i);
        if (close != absl::string_view::npos && close - i < 200) {
          i = close + 1;
          continue;
        }
      }
      if (c == '!' && i + 1 < s.size() && s[i + 1] == '[') {  // image: its alt text
        ++i;
        continue;
      }
      if (c == '[') {  // link: its text, not the URL
        const size_t close = s.find("](", i);
        const size_t paren = close == absl::string_view::npos ? close : s.find(')', close);
        if (close != absl::string_view::npos && paren != absl::string_view::npos &&
            s.substr(i, close - i).find('\n') == absl::string_view::npos) {
          {
            const absl::string_view text = s.substr(i + 1, close - i - 1);
            out.append(text.data(), text.size());
          }
          i = paren + 1;
          continue;
        }
      }
      if (c == '`' || ((c == '*' || c == '_') && i + 1 < s.size() && s[i + 1] == c)) {
        i += c == '`' ? 1 : 2;  // inline code marks, **bold**, __bold__
        continue;
      }
      if (c == ' ' || c == '\t') {
        if (!out.empty() && out.back() != ' ') out.push_back(' ');
        ++i;
        continue;
      }
      out.push_back(c);
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string SignalText(absl::string_view body) {
  const std::vector<Section> sections = SplitSections(body);
  if (sections.empty()) return std::string(body);
  std::string out;
  for (const Section& s : sections) {
    if (s.kind != SectionKind::kProse && s.kind != SectionKind::kException) continue;
    if (!out.empty()) out.push_back('\n');
    {
      const absl::string_view part = body.substr(s.begin, s.end - s.begin);
      out.append(part.data(), part.size());
    }
  }
  return out;
}

}  // namespace issuescope
