// The int8 post-training quantizer plugin: weights symmetric per output
// channel, activations asymmetric per tensor, int32 biases, calibrated by
// minmax, percentile, entropy or MSE (docs/quantization.md).
#include "eulernpu/sdk/quantizer.hpp"
#include "session.hpp"

namespace eulernpu::int8_quantizer {

class Int8Quantizer : public sdk::Quantizer {
 public:
  std::unique_ptr<sdk::QuantSession> begin(const sdk::GraphView& graph, const sdk::Options& options,
                                           uint32_t& passes) override {
    OwnedGraph g = OwnedGraph::copy_of(graph);
    SessionOptions o = SessionOptions::parse(options, g);
    auto session = std::make_unique<Session>(std::move(g), std::move(o));
    passes = session->passes();
    return session;
  }
};

}  // namespace eulernpu::int8_quantizer

ENP_QUANTIZER_PLUGIN(eulernpu::int8_quantizer::Int8Quantizer, "int8_quantizer", "1.0.0",
                     "int8 post-training quantization (per-channel weights, calibrated "
                     "activations)",
                     "minmax", "percentile", "entropy", "mse")
