// acme_npu: an example out-of-tree backend, the starting point for a vendor
// port. It needs nothing but the eulernpu SDK headers and the C++ standard
// library; its "device" is the host CPU running plain loops.
#include "artifact_format.hpp"
#include "eulernpu/sdk/backend.hpp"
#include "executor.hpp"
#include "lowering.hpp"
#include "ops.hpp"

namespace acme_npu {

namespace sdk = eulernpu::sdk;

class AcmeBackend : public sdk::Backend {
 public:
  static const std::vector<enp_op_support_t>& static_ops() { return op_declarations(); }

  std::vector<sdk::DeviceInfo> devices() override {
    return {
        {"acme-edge", "Acme edge NPU (emulated on the host CPU)", {"single"}, "single", "builtin"}};
  }

  void query(const sdk::GraphView& graph, const sdk::Options&,
             sdk::SupportReport& report) override {
    for (size_t i = 0; i < graph.node_count(); ++i) {
      const auto reason = unsupported_reason(graph, i);
      report.node(i, !reason, reason.value_or(""));
    }
  }

  void lower(const sdk::GraphView& graph, const sdk::Options&, sdk::ArtifactWriter& out) override {
    const Lowered lowered = lower_graph(graph);
    out.write_file(kGraphFile, write_graph_json(lowered.program));
    out.write_file(kPlanFile, write_plan_json(lowered.program));
    out.write_tensors(kWeightsFile, lowered.weights);
  }

  void run(sdk::ArtifactReader& artifact, const sdk::Options&, std::span<const enp_tensor_t> inputs,
           sdk::OutputSink& out) override {
    // Both views stay valid until run() returns (the host owns them).
    const Program program =
        read_program(artifact.read_file(kGraphFile), artifact.read_file(kPlanFile));
    const auto weights = artifact.read_tensors(kWeightsFile);
    for (const sdk::OwnedTensor& t : execute(program, weights, inputs)) out.add(t);
  }
};

}  // namespace acme_npu

ENP_BACKEND_PLUGIN(acme_npu::AcmeBackend, "acme_npu", "0.1.0",
                   "Acme edge NPU example: fp32 Gemm, MatMul, Add, Relu, Softmax in plain C++")
