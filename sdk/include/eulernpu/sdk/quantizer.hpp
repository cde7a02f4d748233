// Writing a quantizer plugin in C++: derive from Quantizer (which starts a
// QuantSession per quantization), then
//
//   ENP_QUANTIZER_PLUGIN(MyQuantizer, "my_quantizer", "0.1.0", "what it does",
//                        "minmax", "entropy")
//
// in one source file. abi.h describes the order in which the host calls a
// session.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "eulernpu/sdk/abi.h"
#include "eulernpu/sdk/frontend.hpp"
#include "eulernpu/sdk/graph.hpp"
#include "eulernpu/sdk/status.hpp"

namespace eulernpu::sdk {

class QuantSession {
 public:
  virtual ~QuantSession() = default;
  // One calibration sample's float32 values in pass `pass`.
  virtual void observe(uint32_t pass, std::span<const enp_tensor_t> values) = 0;
  // Writes the quantized graph.
  virtual void finish(GraphBuilder& out) = 0;
  // Sharded calibration (ABI 1.9, abi.h): what pass `pass` observed so
  // far as bytes, and such bytes of another session merged into this one.
  // A quantizer that cannot merge exactly keeps these defaults, which refuse.
  virtual std::string export_stats(uint32_t pass);
  virtual void import_stats(uint32_t pass, std::string_view bytes);
};

inline std::string QuantSession::export_stats(uint32_t) {
  throw Error(ENP_UNIMPLEMENTED, "sharded calibration is not supported",
              "this quantizer cannot write its calibration statistics",
              "calibrate on one machine (leave out --shard and --calib-stats)");
}

inline void QuantSession::import_stats(uint32_t, std::string_view) {
  throw Error(ENP_UNIMPLEMENTED, "sharded calibration is not supported",
              "this quantizer cannot read calibration statistics",
              "calibrate on one machine (leave out --shard and --calib-stats)");
}

class Quantizer {
 public:
  virtual ~Quantizer() = default;
  // `graph` is borrowed for this call only: copy what the session keeps.
  // Sets `passes` to the number of passes over the calibration samples.
  virtual std::unique_ptr<QuantSession> begin(const GraphView& graph, const Options& options,
                                              uint32_t& passes) = 0;
};

namespace detail {

template <typename Q>
Q& quantizer_instance() {
  static Q instance;
  return instance;
}

template <typename Q>
struct QuantizerTrampolines {
  static QuantSession* cast(enp_quant_session_t* s) { return reinterpret_cast<QuantSession*>(s); }

  static enp_status_t* begin(const enp_graph_t* graph, const enp_kv_t* options, uint64_t n_options,
                             enp_quant_session_t** session, uint32_t* n_passes) {
    return guard([&] {
      uint32_t passes = 1;
      std::unique_ptr<QuantSession> s =
          quantizer_instance<Q>().begin(GraphView(graph), Options(options, n_options), passes);
      *n_passes = passes;
      *session = reinterpret_cast<enp_quant_session_t*>(s.release());
    });
  }
  static enp_status_t* observe(enp_quant_session_t* session, uint32_t pass,
                               const enp_tensor_t* values, uint64_t n_values) {
    return guard([&] { cast(session)->observe(pass, {values, n_values}); });
  }
  static enp_status_t* finish(enp_quant_session_t* session, enp_graph_builder_t* out) {
    return guard([&] {
      GraphBuilder builder(out);
      cast(session)->finish(builder);
    });
  }
  static void end(enp_quant_session_t* session) { delete cast(session); }
  static enp_status_t* export_stats(enp_quant_session_t* session, uint32_t pass,
                                    enp_byte_buffer_t* out) {
    return guard([&] {
      const std::string bytes = cast(session)->export_stats(pass);
      const enp_host_api_t* api = host_api();
      if (api->struct_size < offsetof(enp_host_api_t, byte_buffer_append) + sizeof(void*) ||
          !api->byte_buffer_append) {
        throw Error(ENP_UNIMPLEMENTED, "sharded calibration is not supported",
                    "the host is older than plugin ABI 1.9", "use eulernpu 1.9 or newer");
      }
      check(api->byte_buffer_append(out, bytes.data(), bytes.size()));
    });
  }
  static enp_status_t* import_stats(enp_quant_session_t* session, uint32_t pass, const void* data,
                                    uint64_t size) {
    return guard([&] {
      cast(session)->import_stats(
          pass, std::string_view(static_cast<const char*>(data), data ? size : 0));
    });
  }
  static enp_status_t* initialize(const enp_host_api_t* host) {
    host_api() = host;
    return guard([] { (void)quantizer_instance<Q>(); });
  }
};

template <typename Q, typename... Method>
const enp_plugin_header_t* quantizer_descriptor(const char* name, const char* version,
                                                const char* description, Method... methods) {
  using T = QuantizerTrampolines<Q>;
  static const char* const method_names[] = {methods...};
  static const enp_quantizer_v1_t quantizer{sizeof(enp_quantizer_v1_t),
                                            method_names,
                                            static_cast<uint32_t>(sizeof...(Method)),
                                            &T::begin,
                                            &T::observe,
                                            &T::finish,
                                            &T::end,
                                            &T::export_stats,
                                            &T::import_stats};
  static const enp_plugin_v1_t plugin{
      {ENP_ABI_MAJOR, ENP_ABI_MINOR, ENP_PLUGIN_QUANTIZER, 0, name, version, description},
      sizeof(enp_plugin_v1_t),
      &T::initialize,
      nullptr,
      &quantizer,
      nullptr};
  return &plugin.header;
}

}  // namespace detail
}  // namespace eulernpu::sdk

#define ENP_QUANTIZER_PLUGIN(Class, name, version, description, ...)                        \
  extern "C" ENP_EXPORT const enp_plugin_header_t* enp_plugin_entry(void) {                 \
    return ::eulernpu::sdk::detail::quantizer_descriptor<Class>(name, version, description, \
                                                                __VA_ARGS__);               \
  }
