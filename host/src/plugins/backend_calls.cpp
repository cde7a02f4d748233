#include "plugins/backend_calls.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>

#include "core/error.hpp"
#include "core/node_summary.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "ir/onnx_convert.hpp"
#include "plugins/plugin_call.hpp"

namespace eulernpu::host {
namespace {

struct KvView {
  explicit KvView(const KeyValues& kv) {
    for (const auto& [k, v] : kv) items.push_back({k.c_str(), v.c_str()});
  }
  std::vector<enp_kv_t> items;
};

}  // namespace

std::vector<DeviceInfo> list_devices(const LoadedPlugin& backend) {
  enp_device_list_t list;
  call_plugin(backend.name, "list_devices", [&] { return backend.backend().list_devices(&list); });
  return list.devices;
}

std::vector<enp_support_report_t::Entry> query_support(const LoadedPlugin& backend,
                                                       const onnx::ModelProto& model,
                                                       const KeyValues& options) {
  return query_backend(backend, model, options).nodes;
}

SupportAnswer query_backend(const LoadedPlugin& backend, const onnx::ModelProto& model,
                            const KeyValues& options) {
  GraphViewStorage view(model);
  KvView kv(options);
  enp_support_report_t report;
  report.nodes.resize(view.graph()->n_nodes);
  call_plugin(backend.name, "query", [&] {
    return backend.backend().query(view.graph(), kv.items.data(), kv.items.size(), &report);
  });
  SupportAnswer out;
  for (auto& e : report.nodes) {
    // A node the backend did not mention is one it does not handle.
    out.nodes.push_back(
        e.value_or(enp_support_report_t::Entry{false, "not reported by the backend"}));
  }
  out.plan = std::move(report.plan);
  return out;
}

void require_supported(const LoadedPlugin& backend, const onnx::ModelProto& model,
                       const KeyValues& options, const std::string& list_command) {
  const auto support = query_support(backend, model, options);
  std::vector<NodeProblem> problems;
  for (size_t i = 0; i < support.size(); ++i) {
    if (support[i].supported) continue;
    const auto& n = model.graph().node(static_cast<int>(i));
    problems.push_back({n.name(), n.op_type(), support[i].reason});
  }
  if (problems.empty()) return;
  const std::string& first_op = problems.front().op;
  std::string where = "backend '" + backend.name + "' cannot lower " + summarize_nodes(problems);
  if (problems.size() > 3 && !list_command.empty())
    where += "; '" + list_command + "' lists them all";
  throw UserError(sdk::errors::lowering_missing_title(first_op), where,
                  sdk::errors::lowering_missing_fix(first_op),
                  std::string(sdk::errors::kLoweringMissingSee));
}

bool names_device_file(const std::string& device) {
  const auto ext = std::filesystem::path(device).extension();
  return device.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml" || ext == ".json";
}

std::pair<DeviceInfo, std::string> resolve_target(const LoadedPlugin& backend,
                                                  const std::string& device,
                                                  const std::string& core_mode) {
  const auto devices = list_devices(backend);
  std::string known;
  for (const DeviceInfo& d : devices) known += (known.empty() ? "" : ", ") + d.name;
  const DeviceInfo* chosen = nullptr;
  for (const DeviceInfo& d : devices) {
    if (device.empty() || d.name == device) {
      chosen = &d;
      break;
    }
  }
  // A path names a descriptor file for the backend to read (npu_sim's
  // devices are data): only the backend knows its schema, so it resolves the
  // file, its default core mode and the mode check when lowering.
  if (!chosen && names_device_file(device) && std::filesystem::is_regular_file(device)) {
    DeviceInfo file;
    file.name = device;
    file.source = device;
    return {file, core_mode.empty() ? "single" : core_mode};
  }
  if (!chosen) {
    throw UserError("target device not found",
                    "backend '" + backend.name + "' has no device '" + device +
                        "' (it has: " + (known.empty() ? "none" : known) + ")",
                    "pick one with --target-device; 'eulernpu capabilities "
                    "--backend " +
                        backend.name + "' lists them");
  }
  const std::string mode = core_mode.empty() ? chosen->default_core_mode : core_mode;
  // A device listed without core modes is one the backend could not load
  // (a bad descriptor file): lowering reports why, naming the file.
  if (chosen->core_modes.empty()) return {*chosen, mode};
  std::string modes;
  for (const std::string& m : chosen->core_modes) {
    if (m == mode) return {*chosen, mode};
    modes += (modes.empty() ? "" : ", ") + m;
  }
  throw UserError("core mode not supported by target device",
                  "device '" + chosen->name + "' supports " + modes + ", not '" + mode + "'",
                  "pick one of those with --inference-scheme, or another device");
}

FileSet lower(const LoadedPlugin& backend, const onnx::ModelProto& model, const KeyValues& options,
              nlohmann::ordered_json* summary) {
  GraphViewStorage view(model);
  KvView kv(options);
  enp_artifact_writer_t writer;
  call_plugin(backend.name, "lower", [&] {
    return backend.backend().lower(view.graph(), kv.items.data(), kv.items.size(), &writer);
  });
  if (summary) *summary = std::move(writer.summary);
  return std::move(writer.files);
}

std::vector<Tensor> run_artifact(const LoadedPlugin& backend, const Artifact& artifact,
                                 const KeyValues& options, const std::vector<Tensor>& inputs,
                                 std::string* report) {
  KvView kv(options);
  const std::vector<enp_tensor_t> views = tensor_views(inputs);
  enp_artifact_reader_t reader(artifact);
  enp_tensor_list_t outputs;
  call_plugin(backend.name, "run", [&] {
    return backend.backend().run(&reader, kv.items.data(), kv.items.size(), views.data(),
                                 views.size(), &outputs);
  });
  if (report) *report = std::move(outputs.report);
  return std::move(outputs.tensors);
}

BackendSession::BackendSession(const LoadedPlugin& backend, const Artifact& artifact,
                               KeyValues options)
    : backend_(backend), artifact_(artifact), options_(std::move(options)) {
  const enp_backend_v1_t& table = backend.backend();
  if (backend.abi_minor < 7 ||
      table.struct_size < offsetof(enp_backend_v1_t, session_close) + sizeof(table.session_close) ||
      !table.session_open || !table.session_run || !table.session_close) {
    return;
  }
  reader_ = std::make_unique<enp_artifact_reader_t>(artifact);
  KvView kv(options_);
  // NULL: the backend keeps no session, and each run is a run call.
  call_plugin(backend.name, "session_open", [&] {
    return table.session_open(reader_.get(), kv.items.data(), kv.items.size(), &session_);
  });
}

BackendSession::~BackendSession() {
  if (session_) backend_.backend().session_close(session_);
}

std::vector<Tensor> BackendSession::run(const std::vector<Tensor>& inputs, std::string* report,
                                        std::vector<Tensor> recycled) {
  if (!session_) return run_artifact(backend_, artifact_, options_, inputs, report);
  const std::vector<enp_tensor_t> views = tensor_views(inputs);
  enp_tensor_list_t outputs;
  outputs.recycled = std::move(recycled);
  call_plugin(backend_.name, "run", [&] {
    return backend_.backend().session_run(session_, views.data(), views.size(), &outputs);
  });
  if (report) *report = std::move(outputs.report);
  return std::move(outputs.tensors);
}

void BackendSession::run_in_place(const std::vector<Tensor>& inputs, InPlaceOutputs& out) {
  if (!session_) {
    out.lasting.clear();
    out.copied = run_artifact(backend_, artifact_, options_, inputs);
    return;
  }
  const std::vector<enp_tensor_t> views = tensor_views(inputs);
  enp_tensor_list_t outputs;
  outputs.read_in_place = true;
  outputs.recycled = std::move(out.copied);
  outputs.lasting = std::move(out.lasting);  // their buffers, refilled
  // Whatever the run throws, `out` is left empty rather than stale.
  out.copied.clear();
  out.lasting.clear();
  call_plugin(backend_.name, "run", [&] {
    return backend_.backend().session_run(session_, views.data(), views.size(), &outputs);
  });
  out.copied = std::move(outputs.tensors);
  outputs.lasting.resize(outputs.lasting_used);
  out.lasting = std::move(outputs.lasting);
}

FileSet export_bundle(const LoadedPlugin& backend, const Artifact& artifact,
                      const KeyValues& options) {
  const enp_backend_v1_t& table = backend.backend();
  // A later minor version may grow the table: what matters is that it
  // reaches export_bundle.
  if (backend.abi_minor < 4 ||
      table.struct_size < offsetof(enp_backend_v1_t, export_bundle) + sizeof(table.export_bundle) ||
      !table.export_bundle) {
    throw UserError("backend cannot export a bundle",
                    "backend '" + backend.name + "' has no export function (ABI 1.4)",
                    "compile for a backend that exports bundles, such as zynq_ps");
  }
  KvView kv(options);
  enp_artifact_reader_t reader(artifact);
  enp_artifact_writer_t writer;
  try {
    call_plugin(backend.name, "export", [&] {
      return table.export_bundle(&reader, kv.items.data(), kv.items.size(), &writer);
    });
  } catch (const UserError& e) {
    // The SDK's default export cannot name its backend; the host can.
    if (e.title() != "backend cannot export a bundle") throw;
    throw UserError(e.title(), "backend '" + backend.name + "' " + e.where(), e.fix());
  }
  return std::move(writer.files);
}

std::vector<Tensor> take_declared_outputs(const LoadedPlugin& backend,
                                          const nlohmann::ordered_json& decls,
                                          std::vector<Tensor>& outputs,
                                          const std::string& context) {
  auto bad = [&](const std::string& what) {
    return UserError("plugin returned invalid data",
                     "backend '" + backend.name + "' " + what + context,
                     "report this to the plugin's author");
  };
  std::vector<Tensor> out;
  for (const auto& decl : decls) {
    const std::string name = decl.value("name", "");
    auto it = std::find_if(outputs.begin(), outputs.end(),
                           [&](const Tensor& t) { return t.name == name; });
    if (it == outputs.end()) throw bad("did not return output '" + name + "'");
    const std::string dtype = decl.value("dtype", "");
    if (dtype != dtype_name(it->dtype)) {
      throw bad("returned output '" + name + "' as " + dtype_name(it->dtype) + ", declared " +
                dtype);
    }
    if (decl.contains("shape")) {
      const auto declared = decl["shape"].get<std::vector<int64_t>>();
      bool fits = declared.size() == it->shape.size();
      for (size_t i = 0; fits && i < declared.size(); ++i) {
        fits = declared[i] < 0 || declared[i] == it->shape[i];
      }
      if (!fits) {
        throw bad("returned output '" + name + "' of shape " + shape_string(it->shape) +
                  ", declared " + shape_string(declared));
      }
    }
    out.push_back(std::move(*it));
  }
  return out;
}

ir::ConstantEvaluator constant_evaluator(const LoadedPlugin& backend, KeyValues options) {
  return [&backend, options = std::move(options)](const onnx::ModelProto& constants) {
    return run_artifact(backend, Artifact::from_files(lower(backend, constants, options)), options,
                        {});
  };
}

}  // namespace eulernpu::host
