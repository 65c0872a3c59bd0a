// Fuzz target: classifier model files (indexer/classifier_model.h), JSON and compact: a model
// file is user input (`--model FILE`). Parse must return a status for any bytes, never crash or
// allocate without bound (kMaxWeights); an accepted model must predict on a fixed feature vector
// with probabilities that sum to 1 per head, and survive a compact save and parse.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "indexer/classifier_features.h"
#include "indexer/classifier_model.h"

namespace cl = issuescope::classifier;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto model = cl::LinearModel::Parse(bytes, "fuzz.model");
  if (!model.ok()) return 0;
  const cl::FeatureVector x =
      cl::Featurize(cl::IssueText{"CUDA out of memory", "RuntimeError: CUDA out of memory", "",
                                  {}},
                    model->features());
  for (const cl::Head& head : model->heads()) {
    const std::vector<double> p = model->Predict(head, x);
    if (p.size() != head.classes.size()) __builtin_trap();
    double sum = 0;
    for (double v : p) sum += v;
    // Non-finite weights may make NaN scores; a finite model must give a distribution.
    if (std::isfinite(sum) && std::fabs(sum - 1.0) > 1e-6) __builtin_trap();
  }
  // What is accepted can be written compactly and read back.
  static const std::string path = "/tmp/model_file_fuzz." + std::to_string(getpid()) + ".iscm";
  if (model->SaveCompact(path).ok()) {
    auto again = cl::LinearModel::Load(path);
    if (!again.ok() || again->heads().size() != model->heads().size()) __builtin_trap();
  }
  return 0;
}
