// Conversions between the ABI's plain structs and ONNX protobuf messages.
// The host keeps models as onnx::ModelProto (the .mblt format); plugins only
// ever see the enp_* views built here.
#pragma once

#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "eulernpu/sdk/abi.h"
#include "onnx/onnx_pb.h"

namespace eulernpu::host {

// Each throws UserError("plugin returned invalid data", ...) when the
// struct is inconsistent (unknown dtype, data size not matching dims, ...).
onnx::TensorProto to_tensor_proto(const enp_tensor_t& tensor);
onnx::ValueInfoProto to_value_info(const enp_tensor_t& value);
onnx::NodeProto to_node_proto(const enp_node_t& node);

// Views over tensors owned elsewhere; valid while `tensors` lives unchanged.
std::vector<enp_tensor_t> tensor_views(std::span<const Tensor> tensors);

// Checks a plugin-provided tensor and copies it.
Tensor copy_tensor(const enp_tensor_t& t, const std::string& what);
// The same into `out`, whose buffer is reused where it is large enough (a
// run's outputs copied into the last run's memory fault no page in).
void copy_tensor_into(const enp_tensor_t& t, const std::string& what, Tensor& out);
// Checks a plugin-provided tensor and sets `out`'s name, dtype and shape
// from it; `out.data` is left as it is.
void describe_tensor(const enp_tensor_t& t, const std::string& what, Tensor& out);
// The same into separate fields, whose buffers are reused (a run's
// hundreds of outputs allocate nothing once their names have been seen).
void describe_tensor(const enp_tensor_t& t, const std::string& what, std::string& name,
                     DType& dtype, std::vector<int64_t>& shape);

// Reads an initializer or tensor attribute into an owning Tensor, whichever
// field of TensorProto holds its data.
Tensor from_tensor_proto(const onnx::TensorProto& proto);

// dtype and dims of a ValueInfoProto; unknown dims are -1.
Tensor type_of(const onnx::ValueInfoProto& value);

// Owns everything an enp_graph_t points to, for a ModelProto that must
// outlive it and stay unmodified.
class GraphViewStorage {
 public:
  explicit GraphViewStorage(const onnx::ModelProto& model);
  const enp_graph_t* graph() const { return &graph_; }

 private:
  enp_tensor_t add_tensor(Tensor tensor);
  enp_tensor_t add_type(const onnx::ValueInfoProto& value);

  std::deque<Tensor> tensors_;
  std::deque<std::vector<int64_t>> int_lists_;
  std::deque<std::vector<double>> float_lists_;
  std::deque<std::vector<const char*>> string_lists_;
  std::deque<enp_tensor_t> attr_tensors_;
  std::deque<std::string> graph_bytes_;  // ENP_ATTR_GRAPH: serialized subgraphs
  std::deque<std::vector<enp_attribute_t>> attr_lists_;
  std::vector<enp_node_t> nodes_;
  std::vector<enp_tensor_t> inputs_, outputs_, initializers_, value_infos_;
  std::vector<enp_opset_t> opsets_;
  std::vector<enp_kv_t> metadata_;
  enp_graph_t graph_{};
};

}  // namespace eulernpu::host
