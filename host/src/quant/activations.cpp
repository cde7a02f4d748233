#include "quant/activations.hpp"

#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "core/error.hpp"

namespace eulernpu::host {
namespace {

// `model` with every float32 (and int8 if asked) node output also a graph
// output, and the recorded names in order.
onnx::ModelProto exposing_all(const onnx::ModelProto& model, bool with_int8,
                              std::vector<std::string>& names) {
  auto recorded = [with_int8](const onnx::ValueInfoProto& v) {
    const int t = v.type().tensor_type().elem_type();
    return t == onnx::TensorProto::FLOAT || (with_int8 && t == onnx::TensorProto::INT8);
  };
  onnx::ModelProto m = model;
  onnx::GraphProto& g = *m.mutable_graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::map<std::string, const onnx::ValueInfoProto*> types;
  for (const auto& v : g.value_info()) types[v.name()] = &v;
  std::set<std::string> outputs;
  for (const auto& v : g.output()) {
    types[v.name()] = &v;
    outputs.insert(v.name());
  }
  for (const auto& v : g.input()) {
    if (!initializers.count(v.name()) && recorded(v)) names.push_back(v.name());
  }
  std::vector<onnx::ValueInfoProto> added;
  for (const auto& n : model.graph().node()) {
    for (const auto& o : n.output()) {
      auto it = types.find(o);
      if (o.empty() || it == types.end() || !recorded(*it->second)) continue;
      names.push_back(o);
      if (!outputs.count(o)) added.push_back(*it->second);
    }
  }
  for (auto& v : added) *g.add_output() = std::move(v);
  return m;
}

}  // namespace

ActivationRecorder::ActivationRecorder(const LoadedPlugin& backend, const onnx::ModelProto& model,
                                       KeyValues options, bool with_int8)
    : backend_(backend),
      options_(std::move(options)),
      // names_ is declared (so constructed) before artifact_.
      artifact_(
          Artifact::from_files(lower(backend_, exposing_all(model, with_int8, names_), options_))),
      session_(std::make_unique<BackendSession>(backend_, artifact_, options_)) {}

std::vector<Tensor> ActivationRecorder::record(const std::vector<Tensor>& inputs,
                                               std::vector<Tensor> recycled) const {
  // The outputs are moved out, the inputs copied: a model's activations
  // are many times its inputs, and each copy was a pass over all of them.
  std::vector<Tensor> outputs = session_->run(inputs, nullptr, std::move(recycled));
  std::map<std::string, Tensor*> produced;
  for (Tensor& t : outputs) produced[t.name] = &t;
  std::map<std::string, const Tensor*> given;
  for (const Tensor& t : inputs) given[t.name] = &t;
  std::vector<Tensor> values;
  values.reserve(names_.size());  // no reallocation: `source` may point into it
  for (const std::string& name : names_) {
    if (auto it = produced.find(name); it != produced.end() && it->second != nullptr) {
      values.push_back(std::move(*it->second));
      it->second = nullptr;  // a name listed twice is copied from values
      continue;
    }
    const Tensor* source = nullptr;
    if (auto it = given.find(name); it != given.end()) source = it->second;
    for (size_t i = 0; source == nullptr && i < values.size(); ++i) {
      if (names_[i] == name) source = &values[i];
    }
    if (source == nullptr) {
      throw UserError("plugin returned invalid data",
                      backend_.name + " returned no value for '" + name + "'",
                      "report this to the plugin's author");
    }
    values.push_back(*source);
  }
  return values;
}

void ActivationRecorder::view(const std::vector<Tensor>& inputs, Views& out) const {
  out.values.clear();  // no view outlives the storage a failed run empties
  session_->run_in_place(inputs, out.storage);
  const auto& lasting = out.storage.lasting;
  const auto& copied = out.storage.copied;
  // abi.h: NULL dims with rank 0 means "shape unknown".
  static const int64_t kScalarDims = 0;
  auto name_at = [&](uint8_t kind, uint32_t i) -> const std::string* {
    if (kind == 0) return i < lasting.size() ? &lasting[i].name : nullptr;
    if (kind == 1) return i < copied.size() ? &copied[i].name : nullptr;
    return i < inputs.size() ? &inputs[i].name : nullptr;
  };
  auto view_at = [&](uint8_t kind, uint32_t i) {
    const std::string& name = *name_at(kind, i);
    const std::vector<int64_t>& shape = kind == 0   ? lasting[i].shape
                                        : kind == 1 ? copied[i].shape
                                                    : inputs[i].shape;
    const int32_t dtype = static_cast<int32_t>(kind == 0   ? lasting[i].dtype
                                               : kind == 1 ? copied[i].dtype
                                                           : inputs[i].dtype);
    const void* data = kind == 0 ? lasting[i].data
                                 : static_cast<const void*>(kind == 1 ? copied[i].data.data()
                                                                      : inputs[i].data.data());
    const uint64_t bytes = kind == 0   ? lasting[i].size_bytes
                           : kind == 1 ? copied[i].data.size()
                                       : inputs[i].data.size();
    return enp_tensor_t{name.c_str(),
                        dtype,
                        static_cast<uint32_t>(shape.size()),
                        shape.empty() ? &kScalarDims : shape.data(),
                        data,
                        bytes};
  };
  // Produced values first, then the given inputs, as record() takes them;
  // built only when a value is not where it was on the last run.
  std::map<std::string_view, std::pair<uint8_t, uint32_t>> found;
  auto find = [&](const std::string& name) {
    if (found.empty()) {
      for (uint32_t i = 0; i < lasting.size(); ++i)
        found.emplace(lasting[i].name, std::pair<uint8_t, uint32_t>{0, i});
      for (uint32_t i = 0; i < copied.size(); ++i)
        found.emplace(copied[i].name, std::pair<uint8_t, uint32_t>{1, i});
      for (uint32_t i = 0; i < inputs.size(); ++i)
        found.emplace(inputs[i].name, std::pair<uint8_t, uint32_t>{2, i});
    }
    const auto it = found.find(name);
    if (it == found.end()) {
      throw UserError("plugin returned invalid data",
                      backend_.name + " returned no value for '" + name + "'",
                      "report this to the plugin's author");
    }
    return it->second;
  };
  out.where.resize(names_.size(), {uint8_t{3}, 0});
  out.values.resize(names_.size());
  for (size_t k = 0; k < names_.size(); ++k) {
    auto& [kind, i] = out.where[k];
    const std::string* at = kind < 3 ? name_at(kind, i) : nullptr;
    if (at == nullptr || *at != names_[k]) std::tie(kind, i) = find(names_[k]);
    out.values[k] = view_at(kind, i);
  }
}

}  // namespace eulernpu::host
