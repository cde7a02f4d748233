// One quantization: the float graph, an observer per float value fed pass
// by pass, and at the end the rewrite into the int8 graph.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "bias_correction.hpp"
#include "calibration.hpp"
#include "eulernpu/sdk/quantizer.hpp"
#include "owned_graph.hpp"
#include "rewrite.hpp"

namespace eulernpu::int8_quantizer {

// The options of docs/config.md as the host passes them.
struct SessionOptions {
  Method method = Method::kPercentile;
  MethodOptions method_options;
  RewriteSettings rewrite;
  bool bias_correction = false;

  // Throws sdk::Error (invalid argument) naming a bad key or value.
  static SessionOptions parse(const sdk::Options& options, const OwnedGraph& graph);
};

class Session : public sdk::QuantSession {
 public:
  Session(OwnedGraph graph, SessionOptions options);
  uint32_t passes() const { return method_passes(options_.method); }

  void observe(uint32_t pass, std::span<const enp_tensor_t> values) override;
  void finish(sdk::GraphBuilder& out) override;
  // Sharded calibration (session_stats.cpp): pass 0's observers or pass
  // 1's error sums as bytes, and another session's merged in.
  std::string export_stats(uint32_t pass) override;
  void import_stats(uint32_t pass, std::string_view bytes) override;

  // The quantized graph (what finish() emits); exposed for tests.
  OwnedGraph quantize() const;

 private:
  OwnedGraph graph_;
  SessionOptions options_;
  std::map<std::string, TensorObserver> observers_;
  std::map<std::string, ErrorMeter> errors_;  // method best, pass 2
  // Bias correction: per Conv (tap means) or Gemm / MatMul by a constant
  // (means along A's last axis), its input's means.
  struct MeanSource {
    std::string node, value;
    std::optional<TapMeans> taps;
    ChannelMeans channels;
  };
  std::vector<MeanSource> mean_sources_;
  // Adaptive rounding: per Conv / Gemm / MatMul by a constant, its input's
  // second moments.
  struct MomentSource {
    std::string node, value;
    std::unique_ptr<InputMoments> moments;
    bool failed = false;
  };
  std::vector<MomentSource> moment_sources_;
  // Throws unless every statistic of this session merges exactly.
  void require_mergeable(uint32_t pass, const char* what) const;
  uint64_t samples_[2] = {0, 0};
};

}  // namespace eulernpu::int8_quantizer
