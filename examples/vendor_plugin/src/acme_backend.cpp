// acme_npu: an example out-of-tree backend, the starting point for a vendor
// port. It is an adapter over the SDK's backend kit: the kit writes and
// reads the artifact, plans the arena and runs the schedule; acme_npu
// decides what it lowers and computes its own float32 ops in the kit's
// per-node hook. Every int8 op comes with the kit's reference kernels.
#include "device.hpp"
#include "eulernpu/kit/executor.hpp"
#include "eulernpu/kit/lowering.hpp"
#include "eulernpu/sdk/backend.hpp"
#include "lowering.hpp"
#include "ops.hpp"

namespace acme_npu {

namespace sdk = eulernpu::sdk;
namespace kit = eulernpu::kit;

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
    check_graph(graph);
    kit::lower_graph(graph, out, "", kWeightsFile);
  }

  void run(sdk::ArtifactReader& artifact, const sdk::Options& options,
           std::span<const enp_tensor_t> inputs, sdk::OutputSink& out) override {
    kit::run_artifact(artifact, options, inputs, out, "", run_on_device);
  }
};

}  // namespace acme_npu

ENP_BACKEND_PLUGIN(acme_npu::AcmeBackend, "acme_npu", "0.2.0",
                   "Acme edge NPU example: fp32 Gemm, MatMul, Add, Relu, Softmax in plain C++; "
                   "int8 through the backend kit")
