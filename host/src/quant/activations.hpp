// The float model's intermediate values on given inputs, as calibration and
// the int8 accuracy report need them: the model is lowered once with every
// float32 value it computes exposed as an output, then run per sample on a
// reference backend, in one session (the backend prepares the graph once).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "formats/artifact.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

class ActivationRecorder {
 public:
  // `model` is finalized (sorted, static shapes). Lowers it on `backend`
  // (cpu_ref) with `options` (e.g. threads); throws what lowering throws.
  // `with_int8` also records the int8 values (the quantized graph's).
  ActivationRecorder(const LoadedPlugin& backend, const onnx::ModelProto& model, KeyValues options,
                     bool with_int8 = false);
  // The session refers to artifact_: a moved or copied recorder would not.
  ActivationRecorder(const ActivationRecorder&) = delete;
  ActivationRecorder& operator=(const ActivationRecorder&) = delete;

  // The values recorded (float32, and int8 if asked), in order: graph inputs
  // first, then every node output in the graph's (topological) order.
  const std::vector<std::string>& names() const { return names_; }

  // One tensor per names() entry for one sample (the model's inputs).
  // `recycled`: an earlier record()'s values, whose buffers this one fills
  // (a model's values are many times its inputs; fresh buffers for each
  // sample faulted in every page). Not thread-safe: the runs share the
  // session.
  std::vector<Tensor> record(const std::vector<Tensor>& inputs,
                             std::vector<Tensor> recycled = {}) const;

  // One sample's values as views, in names() order, without copies where
  // the backend keeps them in its own memory (ABI 1.8; cpu_ref does):
  // valid until this recorder runs again, and while `inputs` and `out`
  // live. What the backend copies, `out` holds (in its buffers of the
  // last call).
  struct Views {
    std::vector<enp_tensor_t> values;
    BackendSession::InPlaceOutputs storage;
    // Where each value was found last time ({0: storage.lasting, 1:
    // storage.copied, 2: inputs}, index): checked by name, looked up
    // again only where it moved.
    std::vector<std::pair<uint8_t, uint32_t>> where;
  };
  void view(const std::vector<Tensor>& inputs, Views& out) const;

 private:
  const LoadedPlugin& backend_;
  KeyValues options_;
  std::vector<std::string> names_;
  Artifact artifact_;
  // Reads artifact_, declared before it; a run does not change what a
  // recorder records, so record() stays const.
  std::unique_ptr<BackendSession> session_;
};

}  // namespace eulernpu::host
