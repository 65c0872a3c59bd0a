// The label catalogs of the simulated projects and the pool of author logins.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/simulator/text_generator.h"

namespace issuescope::sim {
namespace {

// Catalog builds a label catalog: every name in `kinds`, `modules` and `extra`, with a color
// derived from the name and GitHub's "default" flag on GitHub's own default label names.
std::vector<Label> Catalog(const std::vector<std::string>& kinds,
                           const std::vector<std::string>& modules,
                           const std::vector<std::string>& extra) {
  static const char* const kDefaults[] = {"bug",       "documentation", "duplicate",
                                          "enhancement", "good first issue", "help wanted",
                                          "invalid",   "question",      "wontfix"};
  std::vector<Label> out;
  for (const auto* group : {&kinds, &modules, &extra}) {
    for (const std::string& name : *group) {
      Label l;
      l.name = name;
      char color[8];
      snprintf(color, sizeof(color), "%06llx",
               static_cast<unsigned long long>(StableHash(name) & 0xFFFFFF));
      l.color = color;
      for (const char* d : kDefaults) l.is_default = l.is_default || name == d;
      if (group == &modules) l.description = absl::StrCat("Issues related to ", name);
      out.push_back(std::move(l));
    }
  }
  return out;
}

ProjectStyle Style(std::string owner, std::string name, std::vector<std::string> bug,
                   std::vector<std::string> feature, std::vector<std::string> modules,
                   std::vector<std::string> extra, std::string version_prefix) {
  std::vector<std::string> kinds = bug;
  kinds.insert(kinds.end(), feature.begin(), feature.end());
  ProjectStyle s{std::move(owner), std::move(name), Catalog(kinds, modules, extra),
                 std::move(bug),   std::move(feature), std::move(modules), std::move(extra),
                 std::move(version_prefix)};
  return s;
}

}  // namespace

const std::vector<ProjectStyle>& ProjectStyles() {
  static const std::vector<ProjectStyle>* const kStyles = new std::vector<ProjectStyle>{
      Style("pytorch", "pytorch", {"module: crash", "module: correctness (silent)"},
            {"feature", "enhancement"},
            {"module: cuda", "module: autograd", "module: dataloader", "oncall: pt2",
             "module: fsdp", "module: nccl", "module: memory usage", "module: performance"},
            {"triaged", "high priority", "needs reproduction", "actionable"}, "torch==2."),
      Style("vllm-project", "vllm", {"bug"}, {"feature request", "RFC"},
            {"kv-cache", "quantization", "speculative-decoding", "distributed", "performance"},
            {"usage", "stale", "good first issue"}, "vllm==0."),
      Style("microsoft", "DeepSpeed", {"bug", "training"}, {"enhancement"},
            {"zero3", "inference", "compression", "deepspeed-chat", "moe"},
            {"question", "documentation", "wontfix"}, "deepspeed==0.1"),
      Style("NVIDIA", "Megatron-LM", {"bug"}, {"enhancement"},
            {"tensor parallel", "pipeline parallel", "moe", "checkpointing"},
            {"stale", "question"}, "megatron-core==0."),
      Style("tensorflow", "tensorflow", {"type:bug", "type:performance"}, {"type:feature"},
            {"comp:dist-strat", "comp:gpu", "comp:xla", "comp:keras", "comp:tf.function"},
            {"stat:awaiting response", "stat:awaiting tensorflower", "TF 2.15"},
            "tensorflow==2."),
      Style("mindspore-ai", "mindspore", {"kind/bug"}, {"kind/feature"},
            {"sig/compiler", "sig/parallel", "sig/ascend", "sig/data"},
            {"stat/help-wanted", "priority/major"}, "mindspore==2."),
      Style("hpcaitech", "ColossalAI", {"bug"}, {"enhancement", "proposal"},
            {"zero", "shardformer", "gemini", "inference"}, {"documentation", "stale"},
            "colossalai==0."),
      Style("huggingface", "transformers", {"bug"}, {"Feature request", "New model"},
            {"Generation", "Quantization", "Tokenization", "trainer", "DeepSpeed", "PEFT"},
            {"Good First Issue", "WIP", "Core: Modeling"}, "transformers==4."),
  };
  return *kStyles;
}

const std::vector<std::string>& Logins() {
  static const std::vector<std::string>* const kLogins = [] {
    static const char* const kNames[] = {
        "alice",  "bowen",  "chen",   "dmitri", "emma",   "farid",  "grace",  "hiro",
        "ivan",   "jun",    "kavya",  "liam",   "mei",    "nikhil", "olga",   "pablo",
        "qiang",  "rosa",   "sanjay", "tomas",  "ursula", "vikram", "wei",    "xin",
        "yuki"};
    static const char* const kStyles[] = {"{}", "{}-ml", "{}dev", "{}_ai", "{}-gpu",
                                          "{}42", "{}-nlp", "{}lab"};
    auto* out = new std::vector<std::string>();
    for (const char* style : kStyles) {
      for (const char* name : kNames) {
        std::string login(style);
        login.replace(login.find("{}"), 2, name);
        out->push_back(login);
      }
    }
    return out;
  }();
  return *kLogins;
}

}  // namespace issuescope::sim
