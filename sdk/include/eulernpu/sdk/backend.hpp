// Writing a backend plugin in C++: derive from Backend, then
//
//   ENP_BACKEND_PLUGIN(MyBackend, "my_backend", "0.1.0", "what it is")
//
// in exactly one source file. The macro defines the exported entry point and
// the C trampolines that turn exceptions into status objects.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eulernpu/sdk/abi.h"
#include "eulernpu/sdk/graph.hpp"
#include "eulernpu/sdk/status.hpp"

namespace eulernpu::sdk {

struct DeviceInfo {
  std::string name;
  std::string description;
  std::vector<std::string> core_modes;
  std::string default_core_mode;
  std::string source = "builtin";
};

// Writes artifact files through the host (which owns where they go).
class ArtifactWriter {
 public:
  explicit ArtifactWriter(enp_artifact_writer_t* w) : w_(w) {}
  void write_file(const std::string& path, std::string_view bytes) {
    check(host_api()->artifact_write_file(w_, path.c_str(), bytes.data(), bytes.size()));
  }
  void write_tensors(const std::string& path, const std::vector<OwnedTensor>& tensors) {
    std::vector<enp_tensor_t> views;
    views.reserve(tensors.size());
    for (const OwnedTensor& t : tensors) views.push_back(t.view());
    check(host_api()->artifact_write_tensors(w_, path.c_str(), views.data(), views.size()));
  }
  // Describes the artifact in its manifest (ABI 1.5 artifact_set_summary):
  // a JSON object. A host older than 1.5 has no place for it, and the
  // artifact is complete without it, so there it is dropped.
  void set_summary(const std::string& json) {
    const enp_host_api_t* api = host_api();
    if (api->struct_size < offsetof(enp_host_api_t, artifact_set_summary) + sizeof(void*)) return;
    check(api->artifact_set_summary(w_, json.data(), json.size()));
  }

 private:
  enp_artifact_writer_t* w_;
};

// Reads artifact files; returned views live until the run call returns.
class ArtifactReader {
 public:
  explicit ArtifactReader(enp_artifact_reader_t* r) : r_(r) {}
  std::string_view read_file(const std::string& path) {
    const void* data = nullptr;
    uint64_t size = 0;
    check(host_api()->artifact_read_file(r_, path.c_str(), &data, &size));
    return {static_cast<const char*>(data), static_cast<size_t>(size)};
  }
  std::span<const enp_tensor_t> read_tensors(const std::string& path) {
    const enp_tensor_t* tensors = nullptr;
    uint64_t count = 0;
    check(host_api()->artifact_read_tensors(r_, path.c_str(), &tensors, &count));
    return {tensors, static_cast<size_t>(count)};
  }

 private:
  enp_artifact_reader_t* r_;
};

class SupportReport {
 public:
  explicit SupportReport(enp_support_report_t* r) : r_(r) {}
  void node(uint64_t index, bool supported, const std::string& reason = {}) {
    check(host_api()->support_report_node(r_, index, supported ? 1 : 0, reason.c_str()));
  }
  // The backend's plan for the graph (ABI 1.6 support_report_plan): a JSON
  // object with a "summary" string. An older host has no place for it, and
  // the report is complete without it, so there it is dropped.
  void plan(const std::string& json) {
    const enp_host_api_t* api = host_api();
    if (api->struct_size < offsetof(enp_host_api_t, support_report_plan) + sizeof(void*)) return;
    check(api->support_report_plan(r_, json.data(), json.size()));
  }

 private:
  enp_support_report_t* r_;
};

class OutputSink {
 public:
  explicit OutputSink(enp_tensor_list_t* l) : l_(l) {}
  void add(const OwnedTensor& t) { add(t.view()); }
  // A tensor the backend holds (an arena's buffer): the host copies it, so
  // it needs to live only until this returns.
  void add(const enp_tensor_t& view) { check(host_api()->tensor_list_add(l_, &view)); }
  // In a session run only: a tensor whose data stays as it is until the
  // session's next run or its end (ABI 1.8 tensor_list_add_lasting), which
  // the host may read in place. A host before 1.8 copies it.
  void add_lasting(const enp_tensor_t& view) {
    const enp_host_api_t* api = host_api();
    if (api->struct_size < offsetof(enp_host_api_t, tensor_list_add_lasting) + sizeof(void*) ||
        !api->tensor_list_add_lasting) {
      add(view);
      return;
    }
    check(api->tensor_list_add_lasting(l_, &view));
  }
  // Attaches the run's report (ABI 1.2 run_report): a JSON object whose
  // "summary" string `run` prints; the host copies it. A second call
  // replaces the first.
  void attach_report(const std::string& json) {
    check(host_api()->run_report(l_, json.data(), json.size()));
  }

 private:
  enp_tensor_list_t* l_;
};

// A loaded artifact, run many times (ABI 1.7 sessions, `eulernpu
// benchmark`). Each run is what Backend::run would do with the options the
// session was opened with.
class Session {
 public:
  virtual ~Session() = default;
  virtual void run(std::span<const enp_tensor_t> inputs, OutputSink& out) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // A backend class also provides
  //   static const std::vector<enp_op_support_t>& static_ops();
  // the ops it lowers, alive as long as the library (a static table).
  // Target devices; the default is one device, "host", single mode.
  virtual std::vector<DeviceInfo> devices() {
    return {{"host", "the machine eulernpu runs on", {"single"}, "single", "builtin"}};
  }
  // Per node: can this backend lower it, and if not, why.
  virtual void query(const GraphView& graph, const Options& options, SupportReport& report) = 0;
  virtual void lower(const GraphView& graph, const Options& options, ArtifactWriter& out) = 0;
  virtual void run(ArtifactReader& artifact, const Options& options,
                   std::span<const enp_tensor_t> inputs, OutputSink& out) = 0;
  // A session over `artifact`, which stays valid until the session is
  // destroyed: its plan and weights read once for many runs. The default,
  // none, has the host call run() for every run.
  virtual std::unique_ptr<Session> open_session(ArtifactReader& artifact, const Options& options) {
    (void)artifact, (void)options;
    return nullptr;
  }
  // `eulernpu export` (ABI 1.4): the bundle's files, from an artifact this
  // backend lowered. Backends without a bundle keep this default.
  virtual void export_bundle(ArtifactReader& artifact, const Options& options,
                             ArtifactWriter& out) {
    (void)artifact, (void)options, (void)out;
    // The host puts the backend's name in front of `where`.
    throw Error(ENP_UNIMPLEMENTED, "backend cannot export a bundle",
                "writes no bundle: it runs its artifacts only through 'eulernpu run'",
                "compile for a backend that exports bundles, such as zynq_ps");
  }
};

namespace detail {

template <typename B>
B& backend_instance() {
  static B instance;
  return instance;
}

template <typename B>
struct BackendTrampolines {
  static enp_status_t* list_devices(enp_device_list_t* out) {
    return guard([&] {
      for (const DeviceInfo& d : backend_instance<B>().devices()) {
        std::vector<const char*> modes;
        for (const std::string& m : d.core_modes) modes.push_back(m.c_str());
        enp_device_info_t info{sizeof(enp_device_info_t),
                               d.name.c_str(),
                               d.description.c_str(),
                               modes.data(),
                               static_cast<uint32_t>(modes.size()),
                               d.default_core_mode.c_str(),
                               d.source.c_str()};
        check(host_api()->device_list_add(out, &info));
      }
    });
  }
  static enp_status_t* query(const enp_graph_t* g, const enp_kv_t* kv, uint64_t n,
                             enp_support_report_t* out) {
    return guard([&] {
      SupportReport report(out);
      backend_instance<B>().query(GraphView(g), Options(kv, n), report);
    });
  }
  static enp_status_t* lower(const enp_graph_t* g, const enp_kv_t* kv, uint64_t n,
                             enp_artifact_writer_t* out) {
    return guard([&] {
      ArtifactWriter writer(out);
      backend_instance<B>().lower(GraphView(g), Options(kv, n), writer);
    });
  }
  static enp_status_t* run(enp_artifact_reader_t* a, const enp_kv_t* kv, uint64_t n,
                           const enp_tensor_t* inputs, uint64_t n_inputs,
                           enp_tensor_list_t* outputs) {
    return guard([&] {
      ArtifactReader reader(a);
      OutputSink sink(outputs);
      backend_instance<B>().run(reader, Options(kv, n), {inputs, n_inputs}, sink);
    });
  }
  static enp_status_t* export_bundle(enp_artifact_reader_t* a, const enp_kv_t* kv, uint64_t n,
                                     enp_artifact_writer_t* out) {
    return guard([&] {
      ArtifactReader reader(a);
      ArtifactWriter writer(out);
      backend_instance<B>().export_bundle(reader, Options(kv, n), writer);
    });
  }
  static enp_status_t* session_open(enp_artifact_reader_t* a, const enp_kv_t* kv, uint64_t n,
                                    enp_session_t** session) {
    return guard([&] {
      ArtifactReader reader(a);
      std::unique_ptr<Session> s = backend_instance<B>().open_session(reader, Options(kv, n));
      *session = reinterpret_cast<enp_session_t*>(s.release());
    });
  }
  static enp_status_t* session_run(enp_session_t* session, const enp_tensor_t* inputs,
                                   uint64_t n_inputs, enp_tensor_list_t* outputs) {
    return guard([&] {
      OutputSink sink(outputs);
      reinterpret_cast<Session*>(session)->run({inputs, n_inputs}, sink);
    });
  }
  static void session_close(enp_session_t* session) { delete reinterpret_cast<Session*>(session); }
  static enp_status_t* initialize(const enp_host_api_t* host) {
    host_api() = host;
    return guard([] { (void)backend_instance<B>(); });
  }
};

template <typename B>
const enp_plugin_header_t* backend_descriptor(const char* name, const char* version,
                                              const char* description) {
  using T = BackendTrampolines<B>;
  static const std::vector<enp_op_support_t>& ops = B::static_ops();
  static const enp_backend_v1_t backend{sizeof(enp_backend_v1_t),
                                        ops.data(),
                                        ops.size(),
                                        &T::list_devices,
                                        &T::query,
                                        &T::lower,
                                        &T::run,
                                        &T::export_bundle,
                                        &T::session_open,
                                        &T::session_run,
                                        &T::session_close};
  static const enp_plugin_v1_t plugin{
      {ENP_ABI_MAJOR, ENP_ABI_MINOR, ENP_PLUGIN_BACKEND, 0, name, version, description},
      sizeof(enp_plugin_v1_t),
      &T::initialize,
      nullptr,
      nullptr,
      &backend};
  return &plugin.header;
}

}  // namespace detail
}  // namespace eulernpu::sdk

// Defines the plugin's exported entry point. `Class` derives from
// eulernpu::sdk::Backend, is default-constructible and has a static
// `static_ops()` (see Backend).
#define ENP_BACKEND_PLUGIN(Class, name, version, description)                              \
  extern "C" ENP_EXPORT const enp_plugin_header_t* enp_plugin_entry(void) {                \
    return ::eulernpu::sdk::detail::backend_descriptor<Class>(name, version, description); \
  }
