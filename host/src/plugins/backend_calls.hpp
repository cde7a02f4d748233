// Host-side calls into backend plugins, with their results in host types.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/artifact.hpp"
#include "ir/optimize.hpp"
#include "onnx/onnx_pb.h"
#include "plugins/host_api.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

std::vector<DeviceInfo> list_devices(const LoadedPlugin& backend);

// One entry per node: can `backend` lower it, and why not.
std::vector<enp_support_report_t::Entry> query_support(const LoadedPlugin& backend,
                                                       const onnx::ModelProto& model,
                                                       const KeyValues& options);

// The same, with the plan the backend attached to its answer (ABI 1.6;
// null when it has none).
struct SupportAnswer {
  std::vector<enp_support_report_t::Entry> nodes;
  nlohmann::ordered_json plan;
};
SupportAnswer query_backend(const LoadedPlugin& backend, const onnx::ModelProto& model,
                            const KeyValues& options);

// Throws "backend lowering missing for op X" for the first unsupported node,
// summarizing the unsupported nodes in `where` (summarize_nodes); past a few
// nodes `where` names `list_command`, the command that lists them all.
void require_supported(const LoadedPlugin& backend, const onnx::ModelProto& model,
                       const KeyValues& options, const std::string& list_command = "");

// Whether --target-device names a device descriptor file (a path, or a
// .yaml/.yml/.json name) rather than a device a backend lists.
bool names_device_file(const std::string& device);

// The device named `device` (or the backend's first one if empty) and the
// core mode (its default if empty), checked against each other.
std::pair<DeviceInfo, std::string> resolve_target(const LoadedPlugin& backend,
                                                  const std::string& device,
                                                  const std::string& core_mode);

// `summary`, if given, receives the JSON object the backend described the
// artifact with (ABI 1.5), or null.
FileSet lower(const LoadedPlugin& backend, const onnx::ModelProto& model, const KeyValues& options,
              nlohmann::ordered_json* summary = nullptr);

// `report`, if given, receives the JSON report the backend attached ("" if none).
std::vector<Tensor> run_artifact(const LoadedPlugin& backend, const Artifact& artifact,
                                 const KeyValues& options, const std::vector<Tensor>& inputs,
                                 std::string* report = nullptr);

// An artifact loaded once and run many times (`eulernpu benchmark`): the
// backend's session (ABI 1.7), or a run call per run where the plugin has
// none. `options` are the run options, fixed for the session's life;
// `artifact` must outlive it.
class BackendSession {
 public:
  BackendSession(const LoadedPlugin& backend, const Artifact& artifact, KeyValues options);
  ~BackendSession();
  BackendSession(const BackendSession&) = delete;
  BackendSession& operator=(const BackendSession&) = delete;
  // `report`, if given, receives the run's JSON report ("" if none).
  // `recycled`: an earlier run's outputs, whose buffers this run's outputs
  // of the same names fill (taken; what is left over is freed).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::string* report = nullptr,
                          std::vector<Tensor> recycled = {});
  // A run whose outputs the caller reads before this session runs again:
  // those the backend keeps in its own memory (ABI 1.8) come back as views
  // into it (`lasting`), the others as copies (`copied`, into the buffers
  // `copied` held from an earlier run).
  struct InPlaceOutputs {
    std::vector<Tensor> copied;
    std::vector<LastingTensor> lasting;
  };
  void run_in_place(const std::vector<Tensor>& inputs, InPlaceOutputs& out);
  // Whether the backend keeps a session (false: every run loads again).
  bool native() const { return session_ != nullptr; }

 private:
  const LoadedPlugin& backend_;
  const Artifact& artifact_;
  KeyValues options_;
  std::unique_ptr<enp_artifact_reader_t> reader_;
  enp_session_t* session_ = nullptr;
};

// The bundle's files (`eulernpu export`): "backend cannot export a bundle"
// if the backend has no export function (before ABI 1.4, or NULL).
FileSet export_bundle(const LoadedPlugin& backend, const Artifact& artifact,
                      const KeyValues& options);

// The outputs `decls` (a manifest's list of {name, dtype, shape}) name,
// taken from a backend's `outputs` in that order. Each must be there with
// its declared dtype and shape (a dimension declared -1 may be anything):
// a backend that returns something else is "plugin returned invalid data"
// naming it and `context`, never a result file with the wrong contents.
std::vector<Tensor> take_declared_outputs(const LoadedPlugin& backend,
                                          const nlohmann::ordered_json& decls,
                                          std::vector<Tensor>& outputs, const std::string& context);

// Runs constant subgraphs on `backend` (the reference), for the graph
// rewrites' constant folding (ir/optimize.hpp).
ir::ConstantEvaluator constant_evaluator(const LoadedPlugin& backend, KeyValues options);

}  // namespace eulernpu::host
