// cpu_ref: the reference backend, every supported op in plain C++ with GEMM
// through OpenBLAS. It is the oracle other backends are checked against.
#include "eulernpu/kit/executor.hpp"
#include "eulernpu/kit/lowering.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/backend.hpp"

namespace eulernpu::kit {

class CpuRefBackend : public sdk::Backend {
 public:
  static const std::vector<enp_op_support_t>& static_ops() { return op_declarations(); }

  void query(const sdk::GraphView& graph, const sdk::Options&,
             sdk::SupportReport& report) override {
    for (size_t i = 0; i < graph.node_count(); ++i) {
      const auto reason = unsupported_reason(graph, i);
      report.node(i, !reason, reason.value_or(""));
    }
  }

  void lower(const sdk::GraphView& graph, const sdk::Options&, sdk::ArtifactWriter& out) override {
    lower_graph(graph, out);
  }

  void run(sdk::ArtifactReader& artifact, const sdk::Options& options,
           std::span<const enp_tensor_t> inputs, sdk::OutputSink& out) override {
    run_artifact(artifact, options, inputs, out);
  }

  std::unique_ptr<sdk::Session> open_session(sdk::ArtifactReader& artifact,
                                             const sdk::Options& options) override {
    return kit::open_session(artifact, options);
  }
};

}  // namespace eulernpu::kit

ENP_BACKEND_PLUGIN(eulernpu::kit::CpuRefBackend, "cpu_ref", "1.0.0",
                   "fp32 reference kernels (GEMM through OpenBLAS); the oracle")
