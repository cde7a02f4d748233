#include "session.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

namespace eulernpu::int8_quantizer {

namespace {

[[noreturn]] void bad_option(const std::string& key, const std::string& why,
                             const std::string& fix) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, "quantization config is invalid",
                   "option '" + key + "': " + why, fix);
}

bool node_exists(const OwnedGraph& g, const std::string& name) {
  for (const Node& n : g.nodes) {
    if (n.name == name) return true;
  }
  return false;
}

}  // namespace

SessionOptions SessionOptions::parse(const sdk::Options& options, const OwnedGraph& graph) {
  SessionOptions s;
  const std::string method = options.get("method", "percentile");
  try {
    s.method = parse_method(method);
  } catch (const std::invalid_argument& e) {
    bad_option("method", e.what(), "use minmax, percentile, entropy or mse");
  }
  s.rewrite.method = method_name(s.method);
  if (auto p = options.find("percentile")) {
    char* end = nullptr;
    const double v = std::strtod(p->c_str(), &end);
    if (p->empty() || *end != '\0' || !(v > 0.0 && v <= 100.0)) {
      bad_option("percentile", "'" + *p + "' is not a number in (0, 100]", "e.g. 99.99");
    }
    s.method_options.percentile = v;
  }
  const std::string weights = options.get("weights", "per_channel");
  if (weights != "per_channel" && weights != "per_tensor") {
    bad_option("weights", "'" + weights + "' is neither per_channel nor per_tensor",
               "use per_channel (the default) or per_tensor");
  }
  s.rewrite.per_tensor_weights = weights == "per_tensor";
  const std::string bias_correction = options.get("bias_correction", "0");
  if (bias_correction != "0" && bias_correction != "1") {
    bad_option("bias_correction", "'" + bias_correction + "' is not 0 or 1", "use true or false");
  }
  s.bias_correction = bias_correction == "1";
  const std::string rounding = options.get("rounding", "nearest");
  if (rounding != "nearest" && rounding != "adaptive") {
    bad_option("rounding", "'" + rounding + "' is neither nearest nor adaptive",
               "use nearest (the default) or adaptive");
  }
  s.rewrite.rounding = rounding;
  const std::string float_outputs = options.get("float_outputs", "none");
  if (float_outputs == "inner") {
    s.rewrite.float_outputs = FloatOutputs::kInner;
  } else if (float_outputs == "all") {
    s.rewrite.float_outputs = FloatOutputs::kAll;
  } else if (float_outputs != "none") {
    bad_option("float_outputs", "'" + float_outputs + "' is not none, inner or all",
               "use none (the default), inner or all");
  }
  for (const auto& [key, value] : options.with_prefix("layer.")) {
    const auto dot = key.rfind('.');
    const std::string node = dot == std::string::npos ? "" : key.substr(0, dot);
    const std::string what = dot == std::string::npos ? key : key.substr(dot + 1);
    if (node.empty() || (what != "keep_fp32" && what != "per_tensor")) {
      bad_option("layer." + key, "not layer.<node>.keep_fp32 or layer.<node>.per_tensor",
                 "see docs/config.md, layers");
    }
    if (!node_exists(graph, node)) {
      bad_option("layer." + key, "the model has no node '" + node + "'",
                 "name a node as 'eulernpu inspect' lists it");
    }
    if (value != "1" && value != "0")
      bad_option("layer." + key, "'" + value + "' is not 0 or 1", "use true or false");
    if (value == "1")
      (what == "keep_fp32" ? s.rewrite.keep_fp32 : s.rewrite.per_tensor_nodes).insert(node);
  }
  for (const enp_kv_t& kv : options.all()) {
    const std::string key = kv.key;
    if (key != "method" && key != "percentile" && key != "weights" && key != "float_outputs" &&
        key != "bias_correction" && key != "rounding" && key.rfind("layer.", 0) != 0) {
      bad_option(key, "unknown option", "see docs/config.md for the keys");
    }
  }
  return s;
}

Session::Session(OwnedGraph graph, SessionOptions options)
    : graph_(std::move(graph)), options_(std::move(options)) {
  const bool adaptive = options_.rewrite.rounding == "adaptive";
  if (!options_.bias_correction && !adaptive) return;
  for (const Node& n : graph_.nodes) {
    if (!n.domain.empty() || n.inputs.size() < 2) continue;
    const sdk::OwnedTensor* w = graph_.initializer(n.input(1));
    if (!w) continue;
    if (n.op_type == "Conv") {
      const ValueType* x = graph_.type(n.input(0));
      if (!x || !x->shape_known || x->dims.size() != w->dims.size() || w->dims.size() < 3 ||
          w->dims.size() > 5) {
        continue;
      }
      const std::vector<int64_t> kernel(w->dims.begin() + 2, w->dims.end());
      const std::vector<int64_t> spatial(x->dims.begin() + 2, x->dims.end());
      const auto pads = explicit_pads(n, spatial, kernel);
      const size_t r = kernel.size();
      if (!pads) continue;
      const auto strides = n.attr_ints("strides", std::vector<int64_t>(r, 1));
      const auto dilations = n.attr_ints("dilations", std::vector<int64_t>(r, 1));
      const int64_t group = n.attr_int("group", 1);
      if (strides.size() != r || dilations.size() != r) continue;
      if (options_.bias_correction) {
        MeanSource m{n.name, n.input(0), {}, {}};
        m.taps.emplace(kernel, strides, dilations, *pads);
        mean_sources_.push_back(std::move(m));
      }
      // The weights' (O, C/group, k...) must match the input's channels.
      if (adaptive && group >= 1 && x->dims[1] > 0 && x->dims[1] % group == 0 &&
          x->dims[1] / group == w->dims[1]) {
        moment_sources_.push_back(
            {n.name, n.input(0),
             std::make_unique<InputMoments>(kernel, strides, dilations, *pads, group, x->dims[1])});
      }
    } else if ((n.op_type == "Gemm" && n.attr_int("transA", 0) == 0) || n.op_type == "MatMul") {
      if (options_.bias_correction) mean_sources_.push_back({n.name, n.input(0), {}, {}});
      const bool trans_b = n.op_type == "Gemm" && n.attr_int("transB", 0) != 0;
      if (adaptive && w->dims.size() == 2) {
        moment_sources_.push_back(
            {n.name, n.input(0), std::make_unique<InputMoments>(w->dims[trans_b ? 1 : 0])});
      }
    }
  }
}

void Session::observe(uint32_t pass, std::span<const enp_tensor_t> values) {
  if (pass >= passes()) {
    throw sdk::Error(ENP_INTERNAL, "internal plugin error",
                     "pass " + std::to_string(pass) + " of " + std::to_string(passes()),
                     "report this as a bug");
  }
  std::vector<float> copy;
  for (const enp_tensor_t& t : values) {
    if (t.dtype != ENP_DTYPE_FLOAT32 || !t.data) continue;
    // Read in place: the host's data is aligned. A copy only where it is
    // not (the ABI does not promise it), since a copy of every value was a
    // fifth of calibration's time.
    const size_t n = t.size_bytes / sizeof(float);
    std::span<const float> buffer;
    if (reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0) {
      buffer = std::span<const float>(static_cast<const float*>(t.data), n);
    } else {
      copy.resize(n);
      if (n != 0) std::memcpy(copy.data(), t.data, n * sizeof(float));
      buffer = copy;
    }
    auto found = observers_.find(t.name);
    if (found == observers_.end()) {
      const std::optional<int> bits = needs_histogram(options_.method)
                                          ? std::optional<int>(histogram_bits(options_.method))
                                          : std::nullopt;
      found = observers_.emplace(t.name, TensorObserver(bits)).first;
    }
    TensorObserver& obs = found->second;
    if (pass == 0) {
      obs.observe(buffer);
      for (MeanSource& m : mean_sources_) {
        if (m.value != t.name || !t.dims || t.rank == 0) continue;
        const std::span<const int64_t> dims(t.dims, t.rank);
        if (m.taps) {
          m.taps->observe(buffer, dims);
        } else {
          m.channels.observe(buffer, dims, t.rank - 1);
        }
      }
      for (MomentSource& m : moment_sources_) {
        if (m.value != t.name || !t.dims) continue;
        try {
          m.moments->observe(buffer, std::span<const int64_t>(t.dims, t.rank));
        } catch (const std::invalid_argument&) {
          // A sample of another shape than the graph states: that layer
          // keeps nearest rounding rather than mixing geometries.
          m.failed = true;
        }
      }
    } else {
      if (!std::isfinite(obs.min()) || !std::isfinite(obs.max())) continue;  // quantize() says so
      auto it = errors_.find(t.name);
      if (it == errors_.end())
        it = errors_.emplace(t.name, ErrorMeter(candidate_ranges(obs))).first;
      it->second.observe(buffer);
    }
  }
  ++samples_[pass];
}

OwnedGraph Session::quantize() const {
  std::map<std::string, QParams> calibrated;
  RewriteSettings rewrite = options_.rewrite;
  for (const MeanSource& m : mean_sources_) {
    rewrite.input_means[m.node] = m.taps ? m.taps->means() : m.channels.means();
  }
  for (const MomentSource& m : moment_sources_) {
    if (!m.failed) rewrite.input_moments[m.node] = m.moments.get();
  }
  for (const auto& [name, obs] : observers_) {
    if (!std::isfinite(obs.min()) || !std::isfinite(obs.max())) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "calibration data does not fit the model",
                       "value '" + name + "' took an infinite value on the calibration samples",
                       "check the calibration data (inputs out of the model's range)");
    }
    if (options_.method == Method::kBest) {
      const auto it = errors_.find(name);
      const Candidate c = it != errors_.end() ? it->second.best() : candidate_ranges(obs)[0];
      calibrated[name] = to_qparams(activation_params(c.range));
      rewrite.value_methods[name] = c.name;
    } else {
      calibrated[name] = to_qparams(
          activation_params(choose_range(obs, options_.method, options_.method_options)));
    }
  }
  return Rewriter(graph_, std::move(calibrated), std::move(rewrite)).run();
}

void Session::finish(sdk::GraphBuilder& out) {
  if (samples_[0] == 0) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "no calibration samples",
                     "the quantizer observed no sample", "give calibration data");
  }
  // Imported statistics may stop short of a pass (sharded calibration):
  // best's choice from part of pass 2 would differ from the whole's.
  for (uint32_t pass = 1; pass < passes(); ++pass) {
    if (samples_[pass] != samples_[0]) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "calibration statistics are incomplete",
                       "pass " + std::to_string(pass + 1) + " covers " +
                           std::to_string(samples_[pass]) + " of " + std::to_string(samples_[0]) +
                           " samples",
                       "give every shard's statistics of every pass (docs/scale-out.md)");
    }
  }
  quantize().emit(out);
}

}  // namespace eulernpu::int8_quantizer
