// Writing a frontend plugin in C++: derive from Frontend, then
//
//   ENP_FRONTEND_PLUGIN(MyFrontend, "my_format", "0.1.0", "what it reads",
//                       "fmt", ".ext1", ".ext2")
//
// in one source file.
#pragma once

#include <string>
#include <vector>

#include "eulernpu/sdk/abi.h"
#include "eulernpu/sdk/graph.hpp"
#include "eulernpu/sdk/status.hpp"

namespace eulernpu::sdk {

// Describes a graph to the host; every call copies its arguments.
class GraphBuilder {
 public:
  explicit GraphBuilder(enp_graph_builder_t* b) : b_(b) {}
  void set_name(const std::string& name) { check(host_api()->graph_set_name(b_, name.c_str())); }
  void add_input(const std::string& name, int32_t dtype, const std::vector<int64_t>& dims) {
    enp_tensor_t t = type_only(name, dtype, dims);
    check(host_api()->graph_add_input(b_, &t));
  }
  void add_output(const std::string& name, int32_t dtype, const std::vector<int64_t>& dims) {
    enp_tensor_t t = type_only(name, dtype, dims);
    check(host_api()->graph_add_output(b_, &t));
  }
  // An output whose shape the host infers.
  void add_output(const std::string& name, int32_t dtype) {
    enp_tensor_t t{name.c_str(), dtype, 0, nullptr, nullptr, 0};
    check(host_api()->graph_add_output(b_, &t));
  }
  // Type-only values as views (dims == NULL: shape unknown).
  void add_input(const enp_tensor_t& value) { check(host_api()->graph_add_input(b_, &value)); }
  void add_output(const enp_tensor_t& value) { check(host_api()->graph_add_output(b_, &value)); }
  void add_value_info(const enp_tensor_t& value) {
    check(host_api()->graph_add_value_info(b_, &value));
  }
  void add_initializer(const enp_tensor_t& tensor) {
    check(host_api()->graph_add_initializer(b_, &tensor));
  }
  void add_node(const enp_node_t& node) { check(host_api()->graph_add_node(b_, &node)); }
  void set_opset(const std::string& domain, int64_t version) {
    check(host_api()->graph_set_opset(b_, domain.c_str(), version));
  }
  void set_metadata(const std::string& key, const std::string& value) {
    check(host_api()->graph_set_metadata(b_, key.c_str(), value.c_str()));
  }
  // Names the dynamic dimensions of input or output `value` (ABI 1.1).
  void set_dim_names(const std::string& value, const std::vector<std::string>& names) {
    std::vector<const char*> ptrs;
    for (const auto& n : names) ptrs.push_back(n.c_str());
    check(host_api()->graph_set_dim_names(b_, value.c_str(), ptrs.data(),
                                          static_cast<uint32_t>(ptrs.size())));
  }

 private:
  static enp_tensor_t type_only(const std::string& name, int32_t dtype,
                                const std::vector<int64_t>& dims) {
    // dims.data() may be NULL for a scalar; NULL would mean "unknown shape".
    static const int64_t kScalar = 0;
    return enp_tensor_t{name.c_str(),
                        dtype,
                        static_cast<uint32_t>(dims.size()),
                        dims.empty() ? &kScalar : dims.data(),
                        nullptr,
                        0};
  }
  enp_graph_builder_t* b_;
};

struct FrontendRequest {
  std::string model_path;
  std::string weights_path;  // empty if none
  std::span<const enp_tensor_t> weights;
  Options options;
};

class Frontend {
 public:
  virtual ~Frontend() = default;
  virtual void import_model(const FrontendRequest& request, GraphBuilder& out) = 0;
};

namespace detail {

template <typename F>
F& frontend_instance() {
  static F instance;
  return instance;
}

template <typename F>
struct FrontendTrampolines {
  static enp_status_t* import_model(const enp_frontend_request_t* r, enp_graph_builder_t* out) {
    return guard([&] {
      FrontendRequest request{r->model_path,
                              r->weights_path ? r->weights_path : "",
                              {r->weights, r->n_weights},
                              Options(r->options, r->n_options)};
      GraphBuilder builder(out);
      frontend_instance<F>().import_model(request, builder);
    });
  }
  static enp_status_t* initialize(const enp_host_api_t* host) {
    host_api() = host;
    return guard([] { (void)frontend_instance<F>(); });
  }
};

template <typename F, typename... Ext>
const enp_plugin_header_t* frontend_descriptor(const char* name, const char* version,
                                               const char* description, const char* format,
                                               Ext... extensions) {
  using T = FrontendTrampolines<F>;
  static const char* const exts[] = {extensions...};
  static const enp_frontend_v1_t frontend{sizeof(enp_frontend_v1_t), format, exts,
                                          static_cast<uint32_t>(sizeof...(Ext)), &T::import_model};
  static const enp_plugin_v1_t plugin{
      {ENP_ABI_MAJOR, ENP_ABI_MINOR, ENP_PLUGIN_FRONTEND, 0, name, version, description},
      sizeof(enp_plugin_v1_t),
      &T::initialize,
      &frontend,
      nullptr,
      nullptr};
  return &plugin.header;
}

}  // namespace detail
}  // namespace eulernpu::sdk

#define ENP_FRONTEND_PLUGIN(Class, name, version, description, format, ...)                        \
  extern "C" ENP_EXPORT const enp_plugin_header_t* enp_plugin_entry(void) {                        \
    return ::eulernpu::sdk::detail::frontend_descriptor<Class>(name, version, description, format, \
                                                               __VA_ARGS__);                       \
  }
