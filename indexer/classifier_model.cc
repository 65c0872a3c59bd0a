#include "indexer/classifier_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace issuescope::classifier {
namespace {

// kMaxWeights bounds a model's weights (all heads): 2^28 floats, 1 GB. A model of all four
// heads (about 80 classes) at the default 2^20 buckets has 2^26.3; a file asking for more than
// the bound is refused before anything is allocated.
constexpr uint64_t kMaxWeights = uint64_t{1} << 28;

// kCompactMagic starts a compact model file (SaveCompact).
constexpr char kCompactMagic[] = "ISCM1\n";

constexpr char kFormat[] = "issuescope-classifier";
constexpr int kFormatVersion = 1;

// Round6 rounds to 6 significant digits so the file is compact and stable.
double Round6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return std::strtod(buf, nullptr);
}

// ModelJson is what both file formats start with: format, taxonomy, name, features, and an empty
// "heads" array.
nlohmann::json ModelJson(const std::string& taxonomy_tag, const std::string& name,
                         const FeatureOptions& features) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["format_version"] = kFormatVersion;
  j["taxonomy"] = taxonomy_tag;
  if (!name.empty()) j["name"] = name;
  j["features"] = {{"hash_bits", features.hash_bits},
                   {"bigrams", features.bigrams},
                   {"max_body_tokens", features.max_body_tokens},
                   {"strip_noise", features.strip_noise},
                   {"title_char_ngrams", features.title_char_ngrams},
                   {"title_weight", features.title_weight},
                   {"signal_text", features.signal_text}};
  j["heads"] = nlohmann::json::array();
  return j;
}

// HeadJson is a head's entry without its weights: name, type, classes, bias, length_weight.
nlohmann::json HeadJson(const Head& head) {
  nlohmann::json h;
  h["name"] = head.name;
  h["type"] = head.type;
  h["classes"] = head.classes;
  nlohmann::json bias = nlohmann::json::array();
  for (float b : head.bias) bias.push_back(Round6(b));
  h["bias"] = bias;
  if (!head.length_weight.empty()) {
    nlohmann::json lw = nlohmann::json::array();
    for (float v : head.length_weight) lw.push_back(Round6(v));
    h["length_weight"] = lw;
  }
  return h;
}

// BadNumber reports a number of a model file that is of the wrong type or out of range (thrown
// by the readers below, caught by Parse with nlohmann's errors).
struct BadNumber : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// IntOf reads an integer in [lo, hi]; a float, a string or a value out of range is a BadNumber
// naming `what` (a float such as 1e100 would otherwise be cast to int: undefined behaviour).
int64_t IntOf(const nlohmann::json& v, absl::string_view what, int64_t lo, int64_t hi) {
  bool ok = false;
  int64_t out = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    ok = u <= static_cast<uint64_t>(hi);
    out = ok ? static_cast<int64_t>(u) : 0;
  } else if (v.is_number_integer()) {
    out = v.get<int64_t>();
    ok = out >= lo && out <= hi;
  }
  if (!ok || out < lo) {
    throw BadNumber(absl::StrCat(what, " must be an integer in [", lo, ", ", hi, "]"));
  }
  return out;
}

// FloatOf reads a number that fits a float (finite, |v| <= FLT_MAX).
float FloatOf(const nlohmann::json& v, absl::string_view what) {
  const double d = v.is_number() ? v.get<double>() : std::nan("");
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
    throw BadNumber(absl::StrCat(what, " must be a finite number within a float's range"));
  }
  return static_cast<float>(d);
}

// FloatsOf reads an array of FloatOf numbers.
std::vector<float> FloatsOf(const nlohmann::json& v, absl::string_view what) {
  if (!v.is_array()) throw BadNumber(absl::StrCat(what, " must be an array of numbers"));
  std::vector<float> out;
  for (const nlohmann::json& x : v) out.push_back(FloatOf(x, what));
  return out;
}

void Softmax(std::vector<double>* scores) {
  double max = *std::max_element(scores->begin(), scores->end());
  double sum = 0;
  for (double& s : *scores) {
    s = std::exp(s - max);
    sum += s;
  }
  for (double& s : *scores) s /= sum;
}

// TrainingClasses checks a head's training set and returns its sorted distinct gold classes.
absl::StatusOr<std::vector<std::string>> TrainingClasses(absl::string_view name,
                                                         const std::vector<FeatureVector>& x,
                                                         const std::vector<std::string>& y) {
  if (x.size() != y.size() || x.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("head '", name, "': no training examples"));
  }
  std::set<std::string> distinct(y.begin(), y.end());
  if (distinct.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("head '", name, "' needs at least two distinct gold classes, got ",
                     distinct.size()));
  }
  return std::vector<std::string>(distinct.begin(), distinct.end());
}

}  // namespace

const Head* LinearModel::FindHead(absl::string_view name) const {
  for (const Head& h : heads_) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

void LinearModel::AddHead(Head head) { heads_.push_back(std::move(head)); }

std::vector<double> LinearModel::Predict(const Head& head, const FeatureVector& x) const {
  const size_t k = head.classes.size();
  std::vector<double> scores(head.bias.begin(), head.bias.end());
  double mass = 0;
  for (const auto& [bucket, value] : x) {
    const float* row = &head.weights[static_cast<size_t>(bucket) * k];
    for (size_t c = 0; c < k; ++c) scores[c] += row[c] * value;
    mass += value;
  }
  for (size_t c = 0; c < head.length_weight.size() && c < k; ++c) {
    scores[c] += head.length_weight[c] * mass;
  }
  Softmax(&scores);
  return scores;
}

std::vector<std::pair<std::string, double>> LinearModel::Probabilities(
    absl::string_view name, const FeatureVector& x) const {
  std::vector<std::pair<std::string, double>> out;
  int members = 0;
  for (const Head& head : heads_) {
    if (head.name != name) continue;
    std::vector<double> p = Predict(head, x);
    if (members == 0) {
      for (size_t c = 0; c < p.size(); ++c) out.emplace_back(head.classes[c], p[c]);
    } else if (head.classes.size() == out.size()) {
      for (size_t c = 0; c < p.size(); ++c) out[c].second += p[c];
    } else {
      continue;
    }
    ++members;
  }
  for (auto& entry : out) entry.second /= std::max(members, 1);
  return out;
}

absl::StatusOr<Head> TrainNaiveBayesHead(absl::string_view name,
                                         const std::vector<FeatureVector>& x,
                                         const std::vector<std::string>& y,
                                         const FeatureOptions& features, double alpha) {
  ASSIGN_OR_RETURN(std::vector<std::string> classes, TrainingClasses(name, x, y));
  Head head;
  head.name = std::string(name);
  head.type = "naive-bayes";
  head.classes = std::move(classes);
  const size_t k = head.classes.size();
  const size_t dim = size_t{1} << features.hash_bits;
  std::vector<double> counts(dim * k, 0.0), total(k, 0.0), docs(k, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    size_t c = static_cast<size_t>(
        std::lower_bound(head.classes.begin(), head.classes.end(), y[i]) - head.classes.begin());
    docs[c] += 1;
    for (const auto& [bucket, value] : x[i]) {
      counts[static_cast<size_t>(bucket) * k + c] += value;
      total[c] += value;
    }
  }
  head.bias.resize(k);
  head.length_weight.resize(k);
  head.weights.assign(dim * k, 0.0f);
  for (size_t c = 0; c < k; ++c) {
    head.bias[c] = static_cast<float>(std::log(docs[c] / static_cast<double>(x.size())));
    // log P(f|c) = log((n+a)/(T+aV)) = log((n+a)/a) + log(a/(T+aV)); the second term is the
    // same for every feature, so it multiplies the feature mass.
    head.length_weight[c] =
        static_cast<float>(std::log(alpha / (total[c] + alpha * static_cast<double>(dim))));
  }
  for (size_t w = 0; w < dim * k; ++w) {
    if (counts[w] > 0) head.weights[w] = static_cast<float>(std::log((counts[w] + alpha) / alpha));
  }
  return head;
}

absl::StatusOr<Head> TrainHead(absl::string_view name, const std::vector<FeatureVector>& x,
                               const std::vector<std::string>& y, const FeatureOptions& features,
                               const TrainOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> classes, TrainingClasses(name, x, y));
  Head head;
  head.name = std::string(name);
  head.classes = std::move(classes);
  const size_t k = head.classes.size();
  const size_t dim = size_t{1} << features.hash_bits;
  head.bias.assign(k, 0.0f);
  head.weights.assign(dim * k, 0.0f);
  std::vector<float> accum(dim * k, 0.0f);
  std::vector<double> bias_accum(k, 0.0);
  std::vector<int> gold(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    gold[i] = static_cast<int>(std::lower_bound(head.classes.begin(), head.classes.end(), y[i]) -
                               head.classes.begin());
  }
  std::vector<size_t> order(x.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(options.seed);
  const double eps = 1e-8;
  std::vector<double> scores(k);
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    // Fisher-Yates with mt19937 draws: identical on every standard library.
    for (size_t i = order.size(); i > 1; --i) {
      size_t j = static_cast<size_t>(rng() % i);
      std::swap(order[i - 1], order[j]);
    }
    for (size_t idx : order) {
      const FeatureVector& xi = x[idx];
      for (size_t c = 0; c < k; ++c) scores[c] = head.bias[c];
      for (const auto& [bucket, value] : xi) {
        const float* row = &head.weights[static_cast<size_t>(bucket) * k];
        for (size_t c = 0; c < k; ++c) scores[c] += row[c] * value;
      }
      Softmax(&scores);
      for (size_t c = 0; c < k; ++c) {
        double g = scores[c] - (static_cast<int>(c) == gold[idx] ? 1.0 : 0.0);
        bias_accum[c] += g * g;
        head.bias[c] -= static_cast<float>(options.learning_rate * g /
                                           (std::sqrt(bias_accum[c]) + eps));
        if (g == 0) continue;
        for (const auto& [bucket, value] : xi) {
          size_t w = static_cast<size_t>(bucket) * k + c;
          double grad = g * value + options.l2 * head.weights[w];
          accum[w] += static_cast<float>(grad * grad);
          head.weights[w] -= static_cast<float>(options.learning_rate * grad /
                                                (std::sqrt(accum[w]) + eps));
        }
      }
    }
  }
  return head;
}

absl::Status LinearModel::Save(const std::string& path) const {
  nlohmann::json j = ModelJson(taxonomy_tag_, name_, features_);
  for (const Head& head : heads_) {
    nlohmann::json h = HeadJson(head);
    nlohmann::json rows = nlohmann::json::array();
    const size_t k = head.classes.size();
    const size_t dim = head.weights.size() / std::max<size_t>(k, 1);
    for (size_t bucket = 0; bucket < dim; ++bucket) {
      const float* row = &head.weights[bucket * k];
      bool any = false;
      for (size_t c = 0; c < k; ++c) any |= Round6(row[c]) != 0.0;
      if (!any) continue;
      nlohmann::json r = nlohmann::json::array({bucket});
      for (size_t c = 0; c < k; ++c) r.push_back(Round6(row[c]));
      rows.push_back(std::move(r));
    }
    h["weights"] = std::move(rows);
    j["heads"].push_back(std::move(h));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << j.dump() << "\n";
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write model file ", path));
  return absl::OkStatus();
}

absl::StatusOr<LinearModel> LinearModel::Load(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path, "model"));
  return Parse(text, path);
}

absl::StatusOr<LinearModel> LinearModel::Parse(absl::string_view text, absl::string_view source) {
  if (absl::StartsWith(text, kCompactMagic)) return ParseCompact(text, source);
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("model file ", source, ": ", what));
  };
  try {
    nlohmann::json j = nlohmann::json::parse(text.begin(), text.end());
    if (!j.is_object() || j.value("format", "") != kFormat) {
      return bad(absl::StrCat("not an issuescope classifier model (\"format\" must be \"",
                              kFormat, "\")"));
    }
    if (!j.contains("format_version") ||
        IntOf(j["format_version"], "format_version", 0, 1000000) != kFormatVersion) {
      return bad(absl::StrCat("unsupported format_version (this build reads ", kFormatVersion,
                              ")"));
    }
    FeatureOptions features;
    const nlohmann::json& f = j.at("features");
    features.hash_bits = static_cast<int>(IntOf(f.at("hash_bits"), "features.hash_bits", 8, 24));
    features.bigrams = f.at("bigrams").get<bool>();
    features.max_body_tokens = static_cast<int>(
        IntOf(f.at("max_body_tokens"), "features.max_body_tokens", -1, 1 << 24));
    features.strip_noise = f.value("strip_noise", false);
    features.title_char_ngrams =
        f.contains("title_char_ngrams")
            ? static_cast<int>(IntOf(f["title_char_ngrams"], "features.title_char_ngrams", 0, 64))
            : 0;
    features.title_weight = f.value("title_weight", 1.0);
    if (!(features.title_weight >= 0 && features.title_weight <= 1e6)) {
      return bad("features.title_weight must be in [0, 1e6]");
    }
    features.signal_text = f.value("signal_text", false);
    if (features.hash_bits < 8 || features.hash_bits > 24) {
      return bad("features.hash_bits must be in [8, 24]");
    }
    LinearModel model(features);
    model.taxonomy_tag_ = j.value("taxonomy", "");
    model.name_ = j.value("name", "");
    const size_t dim = size_t{1} << features.hash_bits;
    uint64_t total_weights = 0;
    for (const nlohmann::json& h : j.at("heads")) {
      Head head;
      head.name = h.at("name").get<std::string>();
      head.type = h.value("type", "logreg");
      if (head.type != "logreg" && head.type != "naive-bayes") {
        return bad(absl::StrCat("head '", head.name, "' has unknown type '", head.type, "'"));
      }
      head.classes = h.at("classes").get<std::vector<std::string>>();
      const size_t k = head.classes.size();
      if (k < 2) return bad(absl::StrCat("head '", head.name, "' has fewer than two classes"));
      head.bias = FloatsOf(h.at("bias"), "bias");
      if (head.bias.size() != k) return bad(absl::StrCat("head '", head.name, "': bias size"));
      if (h.contains("length_weight")) {
        head.length_weight = FloatsOf(h.at("length_weight"), "length_weight");
        if (head.length_weight.size() != k) {
          return bad(absl::StrCat("head '", head.name, "': length_weight size"));
        }
      }
      total_weights += static_cast<uint64_t>(dim) * k;
      if (total_weights > kMaxWeights) {
        return bad(absl::StrCat("head '", head.name, "': more than 2^28 weights in the model (",
                                "2^", features.hash_bits, " buckets × ", k, " classes)"));
      }
      head.weights.assign(dim * k, 0.0f);
      for (const nlohmann::json& row : h.at("weights")) {
        if (!row.is_array() || row.size() != k + 1) {
          return bad(absl::StrCat("head '", head.name, "': a weight row is not [bucket, w...]"));
        }
        // Non-negative JSON integers parse as unsigned; anything else is out of range.
        if (!row[0].is_number_unsigned() || row[0].get<uint64_t>() >= dim) {
          return bad(absl::StrCat("head '", head.name, "': bucket out of range"));
        }
        const uint64_t bucket = row[0].get<uint64_t>();
        for (size_t c = 0; c < k; ++c) {
          head.weights[bucket * k + c] = FloatOf(row[c + 1], "a weight");
        }
      }
      model.heads_.push_back(std::move(head));
    }
    return model;
  } catch (const nlohmann::json::exception& e) {
    return bad(e.what());
  } catch (const BadNumber& e) {
    return bad(e.what());
  }
}

absl::Status LinearModel::SaveCompact(const std::string& path) const {
  nlohmann::json j = ModelJson(taxonomy_tag_, name_, features_);
  std::string body;
  for (const Head& head : heads_) {
    const size_t k = head.classes.size();
    const size_t dim = head.weights.size() / std::max<size_t>(k, 1);
    float scale = 0;
    for (float w : head.weights) scale = std::max(scale, std::fabs(w));
    size_t rows = 0;
    std::vector<int8_t> q(k);
    for (size_t bucket = 0; bucket < dim; ++bucket) {
      const float* row = &head.weights[bucket * k];
      bool any = false;
      for (size_t c = 0; c < k; ++c) {
        const float v = scale > 0 ? std::round(row[c] / scale * 127.0f) : 0.0f;
        q[c] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
        any = any || q[c] != 0;
      }
      if (!any) continue;
      ++rows;
      const uint32_t b = static_cast<uint32_t>(bucket);
      for (int i = 0; i < 4; ++i) body.push_back(static_cast<char>((b >> (8 * i)) & 0xff));
      body.append(reinterpret_cast<const char*>(q.data()), k);
    }
    nlohmann::json h = HeadJson(head);
    h["scale"] = scale;
    h["rows"] = rows;
    j["heads"].push_back(std::move(h));
  }
  const std::string header = j.dump();
  std::string out(kCompactMagic);
  const uint32_t n = static_cast<uint32_t>(header.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += header;
  out += body;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << out;
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write model file ", path));
  return absl::OkStatus();
}

absl::StatusOr<LinearModel> LinearModel::ParseCompact(absl::string_view bytes,
                                                      absl::string_view source) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("model file ", source, ": ", what));
  };
  absl::string_view rest = bytes.substr(std::string_view(kCompactMagic).size());
  if (rest.size() < 4) return bad("truncated header length");
  const auto u32 = [](absl::string_view s) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[i]);
    return v;
  };
  const uint32_t header_size = u32(rest);
  rest.remove_prefix(4);
  if (rest.size() < header_size) return bad("truncated header");
  // The header is the JSON format without weights: parse it as such, then read the rows.
  absl::StatusOr<LinearModel> model;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(rest.begin(), rest.begin() + header_size);
    nlohmann::json as_json = header;
    for (nlohmann::json& h : as_json.at("heads")) h["weights"] = nlohmann::json::array();
    model = Parse(as_json.dump(), source);
  } catch (const nlohmann::json::exception& e) {
    return bad(e.what());
  }
  if (!model.ok()) return model.status();
  rest.remove_prefix(header_size);
  const size_t dim = size_t{1} << model->features_.hash_bits;
  try {
    for (size_t i = 0; i < model->heads_.size(); ++i) {
      Head& head = model->heads_[i];
      const nlohmann::json& h = header.at("heads")[i];
      const double scale = h.at("scale").get<double>();
      const uint64_t rows = static_cast<uint64_t>(IntOf(h.at("rows"), "rows", 0, int64_t{1} << 24));
      const size_t k = head.classes.size();
      if (!(scale >= 0) || scale > 1e6) return bad(absl::StrCat("head '", head.name, "': scale"));
      if (rows > dim || rest.size() < rows * (4 + k)) {
        return bad(absl::StrCat("head '", head.name, "': truncated weights"));
      }
      for (uint64_t r = 0; r < rows; ++r) {
        const uint32_t bucket = u32(rest);
        if (bucket >= dim) return bad(absl::StrCat("head '", head.name, "': bucket out of range"));
        for (size_t c = 0; c < k; ++c) {
          const int8_t q = static_cast<int8_t>(rest[4 + c]);
          head.weights[bucket * k + c] = static_cast<float>(q * scale / 127.0);
        }
        rest.remove_prefix(4 + k);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return bad(e.what());
  } catch (const BadNumber& e) {
    return bad(e.what());
  }
  if (!rest.empty()) return bad("bytes after the last head");
  return model;
}

}  // namespace issuescope::classifier
