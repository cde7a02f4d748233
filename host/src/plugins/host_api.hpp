// The host's side of the plugin ABI: the service table handed to every
// plugin and the concrete types behind abi.h's opaque handles.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "eulernpu/sdk/abi.h"
#include "formats/artifact.hpp"
#include "ir/onnx_convert.hpp"
#include "onnx/onnx_pb.h"

struct enp_status_t {
  enp_status_code_t code;
  std::string title, where, fix, see;
};

struct enp_graph_builder_t {
  onnx::ModelProto model;
  // Initializers declared without data (a spec validated without weights):
  // their type is known, their values are not, so they can't be compiled.
  std::set<std::string> unbound_weights;
};

struct enp_artifact_writer_t {
  std::map<std::string, std::vector<uint8_t>> files;
  // ABI 1.5 artifact_set_summary: a JSON object, or null if none was set.
  nlohmann::ordered_json summary;
};

// Views handed to a plugin must outlive the read call, so the reader keeps
// every file and tensor list it has produced until it is destroyed.
struct enp_artifact_reader_t {
  explicit enp_artifact_reader_t(const eulernpu::host::Artifact& a) : artifact(a) {}
  struct TensorList {
    std::vector<eulernpu::host::Tensor> tensors;
    std::vector<enp_tensor_t> views;
  };
  const eulernpu::host::Artifact& artifact;
  std::map<std::string, std::vector<uint8_t>> files;
  std::map<std::string, TensorList> tensor_lists;
};

namespace eulernpu::host {
// An output a session run left in the backend's memory (ABI 1.8
// tensor_list_add_lasting): valid until the session's next run or close.
struct LastingTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  uint64_t size_bytes = 0;
};
}  // namespace eulernpu::host

struct enp_tensor_list_t {
  std::vector<eulernpu::host::Tensor> tensors;
  // Set by the host for a run whose outputs it reads before the session
  // runs again: tensor_list_add_lasting then keeps a view in `lasting`
  // instead of a copy in `tensors`.
  bool read_in_place = false;
  // The first `lasting_used` entries are this run's; the others an earlier
  // run's, whose name and shape buffers the next outputs reuse.
  std::vector<eulernpu::host::LastingTensor> lasting;
  size_t lasting_used = 0;
  std::string report;  // JSON a backend attached to the run, if any
  // An earlier run's tensors, whose buffers an output of the same name is
  // copied into: a session run per calibration sample then writes memory
  // already mapped, where fresh buffers faulted in every page (most of
  // calibration's time on a 320×320 detector).
  std::vector<eulernpu::host::Tensor> recycled;
  size_t recycled_next = 0;  // where the next output's name is looked for first
};

struct enp_support_report_t {
  struct Entry {
    bool supported = false;
    std::string reason;
  };
  std::vector<std::optional<Entry>> nodes;
  nlohmann::ordered_json plan;  // ABI 1.6: the backend's plan, or null
};

namespace eulernpu::host {

struct DeviceInfo {
  std::string name, description, default_core_mode, source;
  std::vector<std::string> core_modes;
};

}  // namespace eulernpu::host

struct enp_device_list_t {
  std::vector<eulernpu::host::DeviceInfo> devices;
};

// Bytes a plugin hands over (ABI 1.9 byte_buffer_append: a quantizer's
// calibration statistics).
struct enp_byte_buffer_t {
  std::string bytes;
};

namespace eulernpu::host {

// The table passed to every plugin's initialize(); lives forever.
const enp_host_api_t* host_api();

// What host_api()->plugin_search_path returns; set before plugins load.
void set_plugin_search_path(std::string path);

// Turns a status a plugin returned into a UserError and frees it; does
// nothing for NULL. `plugin` names the plugin in internal errors.
void throw_if_error(enp_status_t* status, const std::string& plugin);

}  // namespace eulernpu::host
