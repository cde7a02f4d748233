#include "quant/quant_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "eulernpu/sdk/simd_clones.hpp"
#include "eulernpu/sdk/text_table.hpp"
#include "formats/npz.hpp"
#include "formats/output_file.hpp"

namespace eulernpu::host {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Exporters write names of 200+ characters (tf2onnx joins the scopes of
// every fused op); in the terminal table such a name is its head and tail,
// the JSON report keeps it whole.
constexpr size_t kShownNameBytes = 60;

std::string shown_name(const std::string& name) {
  if (name.size() <= kShownNameBytes) return name;
  // Cut at UTF-8 character starts, never inside a character.
  auto start = [&](size_t i) {
    while (i > 0 && i < name.size() && (static_cast<unsigned char>(name[i]) & 0xC0) == 0x80) --i;
    return i;
  };
  const size_t head = start(kShownNameBytes / 2 - 2);
  const size_t tail = start(name.size() - (kShownNameBytes / 2 - 1));
  return name.substr(0, head) + "..." + name.substr(tail);
}

std::string nonfinite_text(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// JSON has no infinities; a string Python's float() reads keeps the meaning
// where nlohmann would write null.
nlohmann::ordered_json json_number(double v) {
  if (std::isfinite(v)) return v;
  return nonfinite_text(v);
}

std::string fixed(double v, const char* format) {
  if (!std::isfinite(v)) return nonfinite_text(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

double LayerError::sqnr_db() const {
  if (sum_noise2 == 0) return kInf;
  if (sum_f2 == 0) return -kInf;
  return 10 * std::log10(sum_f2 / sum_noise2);
}

double LayerError::cosine() const {
  if (sum_f2 == 0 && sum_dq2 == 0) return 1;
  // The root of the product rounds once (an exact copy gets exactly 1);
  // the product of the roots serves where the product overflows.
  const double product = sum_f2 * sum_dq2;
  const double norm =
      std::isfinite(product) ? std::sqrt(product) : std::sqrt(sum_f2) * std::sqrt(sum_dq2);
  if (norm == 0) return 0;
  return std::clamp(sum_f_dq / norm, -1.0, 1.0);
}

double LayerError::mean_squared_error() const {
  return elements == 0 ? 0 : sum_noise2 / static_cast<double>(elements);
}

size_t QuantReport::add_value(QuantizedValue value) {
  LayerError layer;
  layer.value = std::move(value);
  layers_.push_back(std::move(layer));
  return layers_.size() - 1;
}

void QuantReport::add_float32_node(Float32Node node) { float32_nodes_.push_back(std::move(node)); }

namespace {

// Sums in kLanes interleaved partial sums, added up in a fixed order by the
// caller: one chain of float64 additions waited on itself at every element
// (a seventh of a calibrating compile's time). No multiply and add are
// contracted into one rounding (the file is built with -ffp-contract=off),
// so the sums have the same bits on every machine.
constexpr size_t kLanes = 8;
struct LaneSums {
  double f2[kLanes]{}, noise2[kLanes]{}, f_dq[kLanes]{}, dq2[kLanes]{}, max_abs[kLanes]{};
  uint64_t skipped[kLanes]{}, nan[kLanes]{};
};

// One element into lane k.
[[gnu::always_inline]] inline void add_element(LaneSums& s, size_t k, double f, int8_t code,
                                               double scale, double zero) {
  // A float32 model that produces NaN or inf has no meaningful error to
  // measure there: it is counted, and left out of the sums.
  const bool finite = std::fabs(f) <= std::numeric_limits<double>::max();
  const double dq = scale * (static_cast<double>(code) - zero);
  const double fz = finite ? f : 0.0;
  const double dqz = finite ? dq : 0.0;
  const double e = fz - dqz;
  const double abs_e = std::fabs(e);
  s.f2[k] += fz * fz;
  s.noise2[k] += e * e;
  s.f_dq[k] += fz * dqz;
  s.dq2[k] += dqz * dqz;
  s.max_abs[k] = abs_e > s.max_abs[k] ? abs_e : s.max_abs[k];
  s.skipped[k] += finite ? 0 : 1;
  s.nan[k] += abs_e == abs_e ? 0 : 1;  // a NaN scale: kept as the maximum
}

// Eight lanes as one vector (GCC's and clang's vector extensions, lowered
// to what each copy's instructions hold), in AVX-512, AVX2 and baseline
// copies: every lane's operations are add_element's, so the sums' bits do
// not depend on the copy the CPU runs.
using V8d = double __attribute__((vector_size(64)));
using V8l = int64_t __attribute__((vector_size(64)));
using V8f = float __attribute__((vector_size(32)));
using V8b = int8_t __attribute__((vector_size(8)));
static_assert(kLanes == 8);

EULERNPU_SIMD_CLONES
void accumulate(const float* reference, const int8_t* quantized, size_t n, double scale,
                double zero, LaneSums& out) {
  V8d f2{}, noise2{}, f_dq{}, dq2{}, max_abs{};
  V8l skipped{}, nan{};
  const V8d max_finite = V8d{} + std::numeric_limits<double>::max();
  const V8l abs_bits = V8l{} + std::numeric_limits<int64_t>::max();
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    V8f fv;
    V8b cv;
    std::memcpy(&fv, reference + i, sizeof fv);
    std::memcpy(&cv, quantized + i, sizeof cv);
    const V8d f = __builtin_convertvector(fv, V8d);
    const V8d code = __builtin_convertvector(cv, V8d);
    const V8d abs_f = reinterpret_cast<V8d>(reinterpret_cast<V8l>(f) & abs_bits);
    const V8l finite = abs_f <= max_finite;  // -1 where finite, else 0
    const V8d dq = scale * (code - zero);
    const V8d fz = reinterpret_cast<V8d>(reinterpret_cast<V8l>(f) & finite);
    const V8d dqz = reinterpret_cast<V8d>(reinterpret_cast<V8l>(dq) & finite);
    const V8d e = fz - dqz;
    const V8d abs_e = reinterpret_cast<V8d>(reinterpret_cast<V8l>(e) & abs_bits);
    f2 += fz * fz;
    noise2 += e * e;
    f_dq += fz * dqz;
    dq2 += dqz * dqz;
    max_abs = abs_e > max_abs ? abs_e : max_abs;
    skipped += finite + 1;    // 0 where finite, else 1
    nan -= (abs_e != abs_e);  // -1 where NaN
  }
  LaneSums s;
  for (size_t k = 0; k < kLanes; ++k) {
    s.f2[k] = f2[k];
    s.noise2[k] = noise2[k];
    s.f_dq[k] = f_dq[k];
    s.dq2[k] = dq2[k];
    s.max_abs[k] = max_abs[k];
    s.skipped[k] = static_cast<uint64_t>(skipped[k]);
    s.nan[k] = static_cast<uint64_t>(nan[k]);
  }
  for (size_t k = 0; i < n; ++i, ++k) add_element(s, k, reference[i], quantized[i], scale, zero);
  out = s;
}

}  // namespace

void QuantReport::observe(size_t index, std::span<const float> reference,
                          std::span<const int8_t> quantized) {
  if (index >= layers_.size()) {
    throw std::invalid_argument("quant report: no value with index " + std::to_string(index));
  }
  LayerError& l = layers_[index];
  if (reference.size() != quantized.size()) {
    throw std::invalid_argument("quant report: '" + l.value.name + "' has " +
                                std::to_string(reference.size()) + " float32 and " +
                                std::to_string(quantized.size()) + " int8 elements");
  }
  LaneSums sums;
  accumulate(reference.data(), quantized.data(), reference.size(), l.value.scale,
             l.value.zero_point, sums);
  const size_t n = reference.size();
  uint64_t skipped_total = 0;
  bool any_nan = std::isnan(l.max_abs_error);
  for (size_t k = 0; k < kLanes; ++k) {
    l.sum_f2 += sums.f2[k];
    l.sum_noise2 += sums.noise2[k];
    l.sum_f_dq += sums.f_dq[k];
    l.sum_dq2 += sums.dq2[k];
    l.max_abs_error = std::max(l.max_abs_error, sums.max_abs[k]);
    skipped_total += sums.skipped[k];
    any_nan = any_nan || sums.nan[k] != 0;
  }
  if (any_nan) l.max_abs_error = std::numeric_limits<double>::quiet_NaN();
  l.skipped += skipped_total;
  l.elements += n - skipped_total;
  ++l.observations;
}

void QuantReport::observe(size_t index, const Tensor& reference, const Tensor& quantized) {
  const enp_tensor_t view{reference.name.c_str(),
                          static_cast<int32_t>(reference.dtype),
                          static_cast<uint32_t>(reference.shape.size()),
                          reference.shape.data(),
                          reference.data.data(),
                          reference.data.size()};
  observe(index, view, quantized);
}

void QuantReport::observe(size_t index, const enp_tensor_t& reference, const Tensor& quantized) {
  const std::string name = index < layers_.size() ? layers_[index].value.name : "?";
  const auto dtype = static_cast<DType>(reference.dtype);
  if (dtype != DType::kFloat32 || quantized.dtype != DType::kInt8) {
    throw std::invalid_argument("quant report: '" + name + "' needs a float32 reference and int8 " +
                                "codes, got " + dtype_name(dtype) + " and " +
                                dtype_name(quantized.dtype));
  }
  const std::vector<int64_t> shape =
      reference.dims ? std::vector<int64_t>(reference.dims, reference.dims + reference.rank)
                     : std::vector<int64_t>{};
  if (shape != quantized.shape) {
    throw std::invalid_argument("quant report: '" + name + "' has float32 shape " +
                                shape_string(shape) + " but int8 shape " +
                                shape_string(quantized.shape));
  }
  const uint64_t n = quantized.element_count();
  if (reference.size_bytes != n * 4 || quantized.data.size() != n || (n > 0 && !reference.data)) {
    throw std::invalid_argument("quant report: '" + name + "' holds the wrong number of bytes");
  }
  // The bytes have no float alignment guarantee: read them in place where
  // they are aligned (allocators' and arenas' buffers are), else copy.
  const auto* q = reinterpret_cast<const int8_t*>(quantized.data.data());
  if (reinterpret_cast<uintptr_t>(reference.data) % alignof(float) == 0) {
    observe(index, std::span<const float>(static_cast<const float*>(reference.data), n),
            std::span<const int8_t>(q, n));
    return;
  }
  std::vector<float> f(n);
  if (n != 0) std::memcpy(f.data(), reference.data, n * 4);
  observe(index, f, std::span<const int8_t>(q, n));
}

void QuantReport::set_output_sqnr(size_t index, double db) {
  if (index >= layers_.size()) throw std::invalid_argument("unknown layer index");
  layers_[index].output_sqnr_db = db;
}

std::vector<LayerError> QuantReport::ranked() const {
  std::vector<LayerError> out = layers_;
  std::stable_sort(out.begin(), out.end(), [](const LayerError& a, const LayerError& b) {
    const bool oa = !std::isnan(a.output_sqnr_db), ob = !std::isnan(b.output_sqnr_db);
    if (oa != ob) return oa;
    if (oa && a.output_sqnr_db != b.output_sqnr_db) return a.output_sqnr_db < b.output_sqnr_db;
    // NaN (from a non-finite scale) ranks first: a broken layer must not
    // hide in the middle of the list.
    const double sa = a.sqnr_db(), sb = b.sqnr_db();
    const bool nan_a = std::isnan(sa), nan_b = std::isnan(sb);
    if (nan_a != nan_b) return nan_a;
    if (!nan_a && sa != sb) return sa < sb;
    if (a.value.name != b.value.name) return a.value.name < b.value.name;
    return a.value.node < b.value.node;
  });
  return out;
}

std::string QuantReport::summary(size_t worst) const {
  const std::vector<LayerError> layers = ranked();
  const size_t shown = std::min(worst, layers.size());
  std::string out = "Accuracy: " + std::to_string(layers.size()) + " int8 value" +
                    (layers.size() == 1 ? "" : "s") + " over " + std::to_string(samples_) +
                    " sample" + (samples_ == 1 ? "" : "s");
  if (shown == 0) {
    out += "\n";
  } else {
    out += shown == layers.size() ? ", worst first:\n"
                                  : "; the " + std::to_string(shown) + " worst:\n";
    std::vector<std::vector<std::string>> rows = {
        {"value", "node", "op", "alone dB", "SQNR dB", "cosine", "max abs err"}};
    for (size_t i = 0; i < shown; ++i) {
      const LayerError& l = layers[i];
      rows.push_back({shown_name(l.value.name), shown_name(l.value.node), l.value.op_type,
                      std::isnan(l.output_sqnr_db) ? "-" : fixed(l.output_sqnr_db, "%.2f"),
                      fixed(l.sqnr_db(), "%.2f"), fixed(l.cosine(), "%.6f"),
                      fixed(l.max_abs_error, "%.4g")});
    }
    out += sdk::text_table(rows, {false, false, false, true, true, true, true});
  }
  if (accuracy_) {
    const AccuracyOutcome& a = *accuracy_;
    char line[256];
    std::snprintf(line, sizeof line,
                  "Accuracy target %.2f dB: %s at %.2f dB on %zu calibration sample%s", a.target_db,
                  a.met ? "met" : "NOT met", a.sqnr_db, a.samples, a.samples == 1 ? "" : "s");
    out += line;
    out += a.kept.empty() ? std::string(", no node kept in float32")
                          : ", keeping " + std::to_string(a.kept.size()) + " node" +
                                (a.kept.size() == 1 ? "" : "s") + " in float32";
    if (!a.kept.empty()) {
      out += ": ";
      for (size_t i = 0; i < a.kept.size() && i < 5; ++i) {
        out += (i ? ", " : "") + shown_name(a.kept[i]);
      }
      if (a.kept.size() > 5) out += ", and " + std::to_string(a.kept.size() - 5) + " more";
    }
    if (a.rounds.size() > 1 && a.rounds.front().float_outputs != a.float_outputs) {
      out += "; float_outputs " + a.float_outputs;
    }
    const int64_t total = int8_macs_ + float_macs_;
    std::snprintf(
        line, sizeof line, "; %.1f %% of MACs in int8\n",
        total ? 100.0 * static_cast<double>(int8_macs_) / static_cast<double>(total) : 100.0);
    out += line;
  }
  if (!rounded_.empty()) {
    // The median layer: one outlier layer should not speak for the rest.
    std::vector<double> ratios;
    int64_t flipped = 0;
    for (const RoundedLayer& l : rounded_) {
      ratios.push_back(l.error_vs_nearest);
      flipped += l.flipped;
    }
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    const double median = n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
    char line[200];
    std::snprintf(line, sizeof line,
                  "Adaptive rounding: %zu layer%s, %lld weight%s rounded away from the nearest "
                  "code; layer output error %.2f of nearest's (median)\n",
                  n, n == 1 ? "" : "s", static_cast<long long>(flipped), flipped == 1 ? "" : "s",
                  median);
    out += line;
  }
  if (!rewrites_.empty()) {
    out += "Optimized before quantization: " + ir::rewrite_counts(rewrites_) + "\n";
  }
  if (!float32_nodes_.empty()) {
    out += "Kept in float32: " + std::to_string(float32_nodes_.size()) + " node" +
           (float32_nodes_.size() == 1 ? "" : "s") + "\n";
    std::vector<std::vector<std::string>> rows = {{"node", "op", "reason"}};
    const size_t listed = std::min(worst, float32_nodes_.size());
    for (size_t i = 0; i < listed; ++i) {
      const Float32Node& n = float32_nodes_[i];
      rows.push_back({shown_name(n.node), n.op_type, n.reason});
    }
    out += sdk::text_table(rows, {false, false, false});
    if (listed < float32_nodes_.size()) {
      out += "  ... and " + std::to_string(float32_nodes_.size() - listed) + " more\n";
    }
  }
  return out;
}

std::string QuantReport::json_text() const {
  // ordered_json: keys in the order written here, the same on every run.
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LayerError& l : ranked()) {
    layers.push_back({
        {"value", l.value.name},
        {"node", l.value.node},
        {"op_type", l.value.op_type},
        {"scale", json_number(l.value.scale)},
        {"zero_point", l.value.zero_point},
        {"output_sqnr_db", std::isnan(l.output_sqnr_db)
                               ? nlohmann::ordered_json(nullptr)
                               : nlohmann::ordered_json(json_number(l.output_sqnr_db))},
        {"sqnr_db", json_number(l.sqnr_db())},
        {"cosine", json_number(l.cosine())},
        {"max_abs_error", json_number(l.max_abs_error)},
        {"mean_squared_error", json_number(l.mean_squared_error())},
        {"observations", l.observations},
        {"elements", l.elements},
        {"skipped", l.skipped},
        {"sums",
         {{"f2", json_number(l.sum_f2)},
          {"noise2", json_number(l.sum_noise2)},
          {"f_dq", json_number(l.sum_f_dq)},
          {"dq2", json_number(l.sum_dq2)}}},
    });
  }
  nlohmann::ordered_json fp32 = nlohmann::ordered_json::array();
  for (const Float32Node& n : float32_nodes_) {
    fp32.push_back({{"node", n.node}, {"op_type", n.op_type}, {"reason", n.reason}});
  }
  nlohmann::ordered_json rewrites = nlohmann::ordered_json::array();
  for (const auto& r : rewrites_) {
    rewrites.push_back({{"pass", r.pass}, {"node", r.node}, {"detail", r.detail}});
  }
  const int64_t total = int8_macs_ + float_macs_;
  nlohmann::ordered_json macs = {
      {"int8", int8_macs_},
      {"float32", float_macs_},
      {"int8_share", total ? static_cast<double>(int8_macs_) / static_cast<double>(total) : 1.0}};
  nlohmann::ordered_json accuracy = nullptr;
  if (accuracy_) {
    nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
    for (const auto& r : accuracy_->rounds) {
      rounds.push_back({{"kept", r.kept},
                        {"float_outputs", r.float_outputs},
                        {"sqnr_db", json_number(r.sqnr_db)}});
    }
    accuracy = {{"target_db", accuracy_->target_db},
                {"met", accuracy_->met},
                {"sqnr_db", json_number(accuracy_->sqnr_db)},
                {"samples", accuracy_->samples},
                {"kept_fp32", accuracy_->kept},
                {"float_outputs", accuracy_->float_outputs},
                {"rounds", rounds}};
  }
  nlohmann::ordered_json rounded = nlohmann::ordered_json::array();
  for (const RoundedLayer& l : rounded_) {
    rounded.push_back({{"node", l.node},
                       {"flipped", l.flipped},
                       {"error_vs_nearest", json_number(l.error_vs_nearest)}});
  }
  const nlohmann::ordered_json doc = {
      {"format", 1},          {"samples", samples_},
      {"layers", layers},     {"float32_nodes", fp32},
      {"rewrites", rewrites}, {"macs", macs},
      {"accuracy", accuracy}, {"rounding", {{"method", rounding_}, {"layers", rounded}}}};
  // Node names come from the model and may not be valid UTF-8; a report with
  // a replaced character beats no report.
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void QuantReport::write_json(const std::filesystem::path& path) const {
  const std::string text = json_text();
  write_file_atomic(path, text.data(), text.size(), OutputKind::kJson);
}

}  // namespace eulernpu::host
