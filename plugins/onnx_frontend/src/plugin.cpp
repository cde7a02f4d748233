// The ONNX frontend: reads .onnx models (opsets 7 to 28, external data,
// Constant nodes) and describes them to the host. Shape inference and
// constant folding are the host's, so every frontend gets them.
#include "eulernpu/sdk/frontend.hpp"
#include "graph_emitter.hpp"
#include "model_reader.hpp"

namespace eulernpu::onnx_frontend {

class OnnxFrontend : public sdk::Frontend {
 public:
  void import_model(const sdk::FrontendRequest& request, sdk::GraphBuilder& out) override {
    const onnx::ModelProto model = read_model(request.model_path);
    emit_graph(model, parse_shape_overrides(request.options), request.model_path, out);
  }
};

}  // namespace eulernpu::onnx_frontend

ENP_FRONTEND_PLUGIN(eulernpu::onnx_frontend::OnnxFrontend, "onnx", "1.0.0",
                    "ONNX models, opsets 7 to 28", "onnx", ".onnx")
