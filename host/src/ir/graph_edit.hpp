// Editing a finalized onnx::GraphProto in place: who produces and reads each
// value, float32 constants as vectors, new initializers and nodes with
// unique names, and one commit that rebuilds the node list. The rewrites
// before quantization (optimize.hpp) are written against it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace eulernpu::host::ir {

class GraphEdit {
 public:
  // `model` is finalized: sorted, and every value's type in value_info or
  // the outputs. It must outlive this object; edits reach it at commit().
  explicit GraphEdit(onnx::ModelProto& model);

  int64_t opset() const { return opset_; }
  const onnx::GraphProto& graph() const { return model_.graph(); }
  const onnx::NodeProto& node(int i) const { return model_.graph().node(i); }
  int node_count() const { return model_.graph().node_size(); }

  // Index of the node writing `value`, -1 for inputs and initializers.
  int producer(const std::string& value) const;
  // Nodes reading `value` (once per reading node).
  const std::vector<int>& consumers(const std::string& value) const;
  bool is_graph_output(const std::string& value) const { return outputs_.count(value) != 0; }
  // Read by exactly one node and not a graph output: a rewrite may absorb it.
  bool only_read_by(const std::string& value, int node) const;

  const onnx::TensorProto* initializer(const std::string& name) const;
  // Values of a float32 initializer; nullopt if `name` is not one.
  std::optional<std::vector<float>> floats(const std::string& name) const;
  // The one value of a float32 constant holding a single element (any
  // rank), or of one whose elements are all equal; nullopt otherwise.
  std::optional<float> scalar(const std::string& name) const;
  // Element type and dims of a value (dims -1 if unknown); nullopt if untyped.
  std::optional<std::pair<int32_t, std::vector<int64_t>>> type(const std::string& value) const;

  // A fresh name starting with `hint`.
  std::string unique(const std::string& hint);
  // A new float32 initializer; returns its (unique) name.
  std::string add_floats(const std::string& hint, const std::vector<int64_t>& dims,
                         const std::vector<float>& values);

  // A new initializer as given (its name must be fresh, or the value's
  // whose producer is removed).
  void add_tensor(onnx::TensorProto t) {
    names_.insert(t.name());
    added_.push_back(std::move(t));
  }

  // Edits, applied by commit() in the node's place: `replacement` (zero or
  // more nodes) stands where node `i` stood. A node is edited at most once.
  void replace(int i, std::vector<onnx::NodeProto> replacement);
  void remove(int i) { replace(i, {}); }
  bool edited(int i) const { return edits_.count(i) != 0; }
  // Renames every read of `from` to `to` (after the edits), for a node
  // removed whose output `to` now stands for.
  void redirect(const std::string& from, const std::string& to) { redirect_[from] = to; }

  // Applies the edits, drops initializers nothing reads any more, and
  // returns how many nodes were edited. The model still needs
  // finalize_model() (order, shapes) afterwards.
  int commit();

 private:
  onnx::ModelProto& model_;
  int64_t opset_ = 0;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, int> initializers_;
  std::map<std::string, int> value_info_;
  std::set<std::string> outputs_;
  std::set<std::string> names_;
  std::map<int, std::vector<onnx::NodeProto>> edits_;
  std::map<std::string, std::string> redirect_;
  std::vector<onnx::TensorProto> added_;
};

// A node of the default domain with `inputs` and one `output`.
onnx::NodeProto make_node(const std::string& op, const std::string& name,
                          std::vector<std::string> inputs, const std::string& output);

// The float attribute `key` of `n`, `fallback` if absent.
float attr_float(const onnx::NodeProto& n, const std::string& key, float fallback);
int64_t attr_int(const onnx::NodeProto& n, const std::string& key, int64_t fallback);

}  // namespace eulernpu::host::ir
