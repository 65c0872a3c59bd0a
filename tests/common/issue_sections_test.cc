// The section recogniser (common/issue_sections.h) on the templates of the DL trackers: written
// examples of each, and the real vLLM, PyTorch and TensorFlow issues of ../shared/data when it
// exists (skipped, saying so, when it does not).
#include "common/issue_sections.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace issuescope {
namespace {

// KindOf returns the kind of the section holding the first occurrence of `needle`.
std::string KindOf(const std::string& body, const std::string& needle) {
  const size_t at = body.find(needle);
  if (at == std::string::npos) return "missing";
  for (const Section& s : SplitSections(body)) {
    if (at >= s.begin && at < s.end) return SectionKindName(s.kind);
  }
  return "none";
}

constexpr char kVllmBug[] = R"(### Your current environment

<details>
<summary>The output of `python collect_env.py`</summary>

```text
Collecting environment information...
PyTorch version: 2.5.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
GPU models and configuration: GPU 0: NVIDIA H100 80GB HBM3
Nvidia driver version: 550.54.15
```

</details>

### 🐛 Describe the bug

Serving Llama-3 with `--enable-prefix-caching` crashes after a few requests.

```python
llm = LLM(model="meta-llama/Meta-Llama-3-8B", enable_prefix_caching=True)
```

```
Traceback (most recent call last):
  File "/usr/lib/python3/vllm/core/block_manager.py", line 120, in allocate
    block = self.free_blocks.pop()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB
```

### Before submitting a new issue...

- [x] Make sure you already searched for relevant issues.
)";

TEST(IssueSectionsTest, VllmBugTemplate) {
  const std::string body = kVllmBug;
  EXPECT_EQ(KindOf(body, "### Your current environment"), "template");
  EXPECT_EQ(KindOf(body, "PyTorch version: 2.5.1"), "environment");
  EXPECT_EQ(KindOf(body, "NVIDIA H100"), "environment");
  EXPECT_EQ(KindOf(body, "<summary>"), "template");
  EXPECT_EQ(KindOf(body, "Describe the bug"), "template");
  EXPECT_EQ(KindOf(body, "Serving Llama-3"), "prose");
  EXPECT_EQ(KindOf(body, "llm = LLM("), "code");
  EXPECT_EQ(KindOf(body, "Traceback (most"), "log");
  EXPECT_EQ(KindOf(body, "torch.OutOfMemoryError"), "exception");
  EXPECT_EQ(KindOf(body, "Make sure you already"), "template");
  const std::string signal = SignalText(body);
  EXPECT_TRUE(absl::StrContains(signal, "enable-prefix-caching"));
  EXPECT_TRUE(absl::StrContains(signal, "CUDA out of memory"));
  EXPECT_FALSE(absl::StrContains(signal, "NVIDIA H100"));
  EXPECT_FALSE(absl::StrContains(signal, "block_manager.py"));
}

TEST(IssueSectionsTest, PytorchAndTensorflowTemplates) {
  const std::string pytorch =
      "## 🐛 Bug\n\nDataLoader hangs with num_workers > 0.\n\n## To Reproduce\n\n"
      "1. run the script\n\n## Environment\n\n - PyTorch Version (e.g., 1.0): 1.4\n"
      " - OS (e.g., Linux): Ubuntu\n - CUDA/cuDNN version: 10.1\n\n## Additional context\n\n"
      "Only on Windows.\n<!-- Add any other context about the problem here. -->\n";
  EXPECT_EQ(KindOf(pytorch, "DataLoader hangs"), "prose");
  EXPECT_EQ(KindOf(pytorch, "run the script"), "prose");
  EXPECT_EQ(KindOf(pytorch, "PyTorch Version"), "environment");
  EXPECT_EQ(KindOf(pytorch, "CUDA/cuDNN"), "environment");
  EXPECT_EQ(KindOf(pytorch, "Only on Windows"), "prose");
  EXPECT_EQ(KindOf(pytorch, "<!-- Add any"), "template");

  const std::string tf =
      "**System information**\n- OS Platform and Distribution: Linux Ubuntu 18.04\n"
      "- TensorFlow version: 2.3.0\n\n**Describe the current behavior**\n"
      "model.fit gives NaN loss with mixed precision.\n";
  EXPECT_EQ(KindOf(tf, "OS Platform"), "environment");
  EXPECT_EQ(KindOf(tf, "TensorFlow version"), "environment");
  EXPECT_EQ(KindOf(tf, "NaN loss"), "prose");

  const std::string mindspore =
      "## 环境 / Environment\n- 硬件: Ascend 910\n- MindSpore 版本: 2.2.0\n\n"
      "## 问题描述\n训练时显存不足。\n";
  EXPECT_EQ(KindOf(mindspore, "Ascend 910"), "environment");
  EXPECT_EQ(KindOf(mindspore, "训练时显存不足"), "prose");
}

TEST(IssueSectionsTest, SectionsCoverTheBodyInOrder) {
  for (const std::string body : {std::string(kVllmBug), std::string("just text"), std::string(),
                                 std::string("```\nunterminated fence\nstill code"),
                                 std::string("<!-- open comment\nnever closed")}) {
    size_t at = 0;
    for (const Section& s : SplitSections(body)) {
      EXPECT_EQ(s.begin, at);
      EXPECT_GT(s.end, s.begin);
      at = s.end;
    }
    EXPECT_EQ(at, body.size());
  }
  EXPECT_EQ(KindOf("```\nunterminated fence\nstill code", "still code"), "code");
}

TEST(IssueSectionsTest, PlainTextDropsMarkdown) {
  EXPECT_EQ(PlainText("### Title\n\nSome **bold** and `code` with a [link](https://x.org/a).\n"
                      "- item <br> two"),
            "Title Some bold and code with a link. item two");
  EXPECT_EQ(PlainText("![screenshot](a.png) text"), "screenshot text");
}

// The real issues of ../shared/data: every vLLM bug whose body has the collect_env dump gets
// it recognised as environment, and no body loses its prose entirely.
TEST(IssueSectionsTest, RealVllmIssues) {
  const char* env = std::getenv("ISSUESCOPE_SHARED_DATA");
  std::filesystem::path data = env ? env : ISSUESCOPE_SOURCE_DIR "/../shared/data";
  const std::filesystem::path dir =
      data / "dl-issue-dumps/vllm-exp-bug-study/bug-study/analysis_llm/sample_results/vllm/label_based";
  if (!std::filesystem::exists(dir)) {
    GTEST_SKIP() << "no shared data at " << data << " (a fresh clone has none)";
  }
  int with_dump = 0, recognised = 0, bodies = 0, with_prose = 0;
  for (const auto& label : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(label.path() / "issues.json");
    if (!in) continue;
    nlohmann::json issues = nlohmann::json::parse(in, nullptr, false);
    if (!issues.is_array()) continue;
    for (const auto& issue : issues) {
      if (!issue.contains("body") || !issue["body"].is_string()) continue;
      const std::string body = issue["body"];
      ++bodies;
      const std::vector<Section> sections = SplitSections(body);
      bool prose = false;
      for (const Section& s : sections) prose = prose || s.kind == SectionKind::kProse;
      with_prose += prose ? 1 : 0;
      const size_t at = body.find("PyTorch version:");
      if (at == std::string::npos || body.find("Collecting environment") == std::string::npos) {
        continue;
      }
      ++with_dump;
      recognised += KindOf(body, "PyTorch version:") == "environment" ? 1 : 0;
    }
  }
  ASSERT_GT(with_dump, 50);
  EXPECT_GE(recognised, with_dump * 98 / 100) << recognised << " of " << with_dump;
  EXPECT_GE(with_prose, bodies * 95 / 100) << with_prose << " of " << bodies;
}

}  // namespace
}  // namespace issuescope
