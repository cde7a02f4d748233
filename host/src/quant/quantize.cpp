#include "quant/quantize.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/sha256.hpp"
#include "ir/finalize.hpp"
#include "ir/onnx_convert.hpp"
#include "plugins/host_api.hpp"
#include "plugins/plugin_call.hpp"
#include "quant/activations.hpp"

namespace eulernpu::host {

namespace {

std::vector<CalibInput> calib_inputs(const onnx::ModelProto& model) {
  std::set<std::string> weights;
  for (const auto& t : model.graph().initializer()) weights.insert(t.name());
  std::vector<CalibInput> out;
  for (const auto& v : model.graph().input()) {
    if (weights.count(v.name())) continue;
    const Tensor t = type_of(v);
    out.push_back({v.name(), t.dtype, t.shape});
  }
  return out;
}

// Ends a plugin session however the quantization leaves.
struct SessionGuard {
  const enp_quantizer_v1_t& q;
  const std::string& plugin;
  enp_quant_session_t* s = nullptr;
  ~SessionGuard() {
    if (!s) return;
    const PluginCallMark mark(plugin, "session_end");
    try {
      q.session_end(s);
    } catch (...) {
      // Already leaving, maybe on another error: the session is gone either way.
    }
  }
};

}  // namespace

onnx::ModelProto at_batch_one(const onnx::ModelProto& model, const std::string& source) {
  return at_batch(model, source, 1);
}

onnx::ModelProto at_batch(const onnx::ModelProto& model, const std::string& source, int64_t batch) {
  std::set<std::string> weights;
  for (const auto& t : model.graph().initializer()) weights.insert(t.name());
  onnx::ModelProto m = model;
  bool changed = false;
  // The batch is the first data input's first dimension. An input whose
  // first dimension is another fixed size carries no batch there (an LSTM
  // state of (2, batch, hidden): h and c) and keeps its shape.
  std::optional<int64_t> batch_dim;
  for (const auto& v : model.graph().input()) {
    if (weights.count(v.name())) continue;
    const auto& shape = v.type().tensor_type().shape();
    if (shape.dim_size() == 0) continue;
    if (shape.dim(0).has_dim_value()) batch_dim = shape.dim(0).dim_value();
    break;
  }
  for (auto& v : *m.mutable_graph()->mutable_input()) {
    if (weights.count(v.name())) continue;
    auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() == 0) continue;
    auto* d = shape->mutable_dim(0);
    if (batch_dim && d->has_dim_value() && d->dim_value() != *batch_dim) continue;
    if (d->has_dim_value() && d->dim_value() == batch) continue;
    d->Clear();
    d->set_dim_value(batch);
    changed = true;
  }
  if (!changed) return m;
  // Everything downstream follows from the inputs again.
  m.mutable_graph()->clear_value_info();
  for (auto& v : *m.mutable_graph()->mutable_output()) {
    v.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  finalize_model(m, source + " (at batch " + std::to_string(batch) + ")");
  return m;
}

const LoadedPlugin& find_quantizer(const PluginRegistry& registry, const std::string& name) {
  const auto quantizers = registry.of_kind(ENP_PLUGIN_QUANTIZER);
  std::string names;
  for (const LoadedPlugin* p : quantizers) {
    names += (names.empty() ? "" : ", ") + p->name;
    if (p->name == name) return *p;
  }
  for (const LoadedPlugin* p : quantizers) {
    if (name.empty() && p->abi_minor >= 2) return *p;
  }
  throw UserError("quantizer not found",
                  name.empty() ? "no quantizer plugin (ABI 1.2) is loaded"
                               : "no quantizer plugin '" + name + "' is loaded" +
                                     (names.empty() ? "" : " (loaded: " + names + ")"),
                  "check --plugin-dir and 'eulernpu plugins'");
}

namespace {

// A quantizer session begun on a float model with the request's options,
// ended however the caller leaves.
struct OpenSession {
  const LoadedPlugin& plugin;
  const enp_quantizer_v1_t& q;
  GraphViewStorage view;
  SessionGuard guard;
  uint32_t passes = 0;

  OpenSession(const QuantizeRequest& request, const onnx::ModelProto& float_model)
      : plugin(*request.quantizer),
        q(*plugin.descriptor->quantizer),
        view(float_model),
        guard{q, plugin.name} {
    if (plugin.abi_minor < 2 ||
        q.struct_size < offsetof(enp_quantizer_v1_t, session_end) + sizeof(q.session_end) ||
        !q.session_begin || !q.session_observe || !q.session_finish || !q.session_end) {
      throw UserError("plugin returned invalid data",
                      "quantizer '" + plugin.name + "' has no session functions (ABI 1.2)",
                      "use a quantizer built against SDK 1.2 or newer");
    }
    std::vector<enp_kv_t> kv;
    for (const auto& [k, v] : request.quantizer_options) kv.push_back({k.c_str(), v.c_str()});
    call_plugin(plugin.name, "session_begin", [&] {
      return q.session_begin(view.graph(), kv.data(), kv.size(), &guard.s, &passes);
    });
    if (!guard.s || passes == 0 || passes > 16) {
      throw UserError("plugin returned invalid data",
                      "quantizer '" + plugin.name + "' asked for " + std::to_string(passes) +
                          " calibration passes",
                      "report this to the plugin's author");
    }
  }

  // Sharded calibration needs ABI 1.9's export and import.
  void require_stats() const {
    if (plugin.abi_minor < 9 ||
        q.struct_size < offsetof(enp_quantizer_v1_t, session_import) + sizeof(q.session_import) ||
        !q.session_export || !q.session_import) {
      throw UserError(
          "sharded calibration is not supported",
          "quantizer '" + plugin.name + "' cannot write or read its statistics (ABI 1.9)",
          "calibrate on one machine (leave out --shard and --calib-stats)");
    }
  }

  void import(uint32_t pass, const std::string& bytes) {
    call_plugin(plugin.name, "session_import",
                [&] { return q.session_import(guard.s, pass, bytes.data(), bytes.size()); });
  }

  std::string export_pass(uint32_t pass) {
    enp_byte_buffer_t out;
    call_plugin(plugin.name, "session_export",
                [&] { return q.session_export(guard.s, pass, &out); });
    return std::move(out.bytes);
  }
};

std::string model_sha256(const onnx::ModelProto& model) {
  const std::string bytes = model.SerializeAsString();
  return sha256_hex(bytes.data(), bytes.size());
}

}  // namespace

QuantizeResult quantize_model(const onnx::ModelProto& float_model, const std::string& source,
                              const QuantizeRequest& request) {
  QuantizeResult result;
  result.float_at_batch_one = at_batch_one(float_model, source);
  require_static_shapes(result.float_at_batch_one, source + " (at batch 1)");
  CalibOptions copts;
  copts.max_samples = request.max_samples;
  result.calibration =
      load_calibration_data(request.calib_path, calib_inputs(result.float_at_batch_one), copts);
  const auto& samples = result.calibration.samples;

  result.float_recorder = std::make_shared<const ActivationRecorder>(
      *request.reference, result.float_at_batch_one, request.reference_options);
  const ActivationRecorder& recorder = *result.float_recorder;

  OpenSession open(request, float_model);
  const LoadedPlugin& plugin = open.plugin;
  const enp_quantizer_v1_t& q = open.q;
  SessionGuard& session = open.guard;
  const uint32_t passes = open.passes;
  const bool sharded = !request.stats.empty() || request.shard;
  if (sharded) open.require_stats();
  StatsIdentity identity;
  if (sharded) {
    identity = {model_sha256(float_model),
                result.calibration.sha256,
                samples.size(),
                request.config_sha256,
                plugin.name + " " + plugin.identity().version,
                passes,
                request.reference->name + " " + request.reference->version,
                kVersion};
  }
  // Passes before `observed` come from the statistics files.
  const uint32_t observed = request.shard           ? request.shard->pass
                            : request.stats.empty() ? 0
                                                    : passes;
  if (request.shard && observed >= passes) {
    throw UserError("invalid command line",
                    "--pass " + std::to_string(observed + 1) + ", but this config calibrates in " +
                        std::to_string(passes) + " pass" + (passes > 1 ? "es" : ""),
                    "give --pass 1" + std::string(passes > 1 ? " or 2" : ""));
  }
  if (observed > 0) {
    const auto ordered = order_stats(request.stats, identity, observed);
    for (uint32_t pass = 0; pass < observed; ++pass) {
      for (const StatsFile* f : ordered[pass]) open.import(pass, f->stats);
    }
  }
  // Each pass runs every sample again and the quantizer reads the values
  // where the backend computed them: a run costs less than keeping every
  // sample's values, whose fresh pages cost more than the run itself, and
  // than copying them out (docs/performance.md, calibration). A shard
  // runs its own samples (i mod n = k) of its one pass.
  ActivationRecorder::Views values;
  const uint32_t last = request.shard ? observed + 1 : passes;
  const size_t stride = request.shard ? request.shard->n : 1;
  const size_t first = request.shard ? request.shard->k : 0;
  const size_t share = samples.size() > first ? (samples.size() - first + stride - 1) / stride : 0;
  for (uint32_t pass = observed; pass < last; ++pass) {
    size_t done = 0;
    for (size_t i = first; i < samples.size(); i += stride) {
      recorder.view(samples[i], values);
      call_plugin(plugin.name, "session_observe", [&] {
        return q.session_observe(session.s, pass, values.values.data(), values.values.size());
      });
      if (request.progress) request.progress(pass, passes, ++done, share);
    }
  }
  if (request.shard) {
    result.shard_stats = StatsFile{identity, request.shard->k, request.shard->n,
                                   observed, uint64_t{share},  open.export_pass(observed),
                                   {}};
    return result;
  }
  enp_graph_builder_t builder;
  call_plugin(plugin.name, "session_finish", [&] { return q.session_finish(session.s, &builder); });
  result.model = std::move(builder.model);
  // A graph the quantizer got wrong is its bug, not a property of the
  // user's model: say so under the plugin's name, not as a shape error.
  try {
    finalize_model(result.model, source + " (quantized)");
  } catch (const UserError& e) {
    throw UserError(
        "plugin returned invalid data",
        "quantizer '" + plugin.name + "' wrote an invalid graph: " + e.title() + ": " + e.where(),
        "report this to the plugin's author; meanwhile keep the node named above in "
        "float32 (layer.<node>.keep_fp32, docs/config.md)");
  }
  return result;
}

StatsFile merge_shards(const onnx::ModelProto& float_model, const QuantizeRequest& request,
                       const StatsIdentity& identity, uint32_t pass,
                       const std::vector<StatsFile>& shards) {
  OpenSession open(request, float_model);
  open.require_stats();
  if (identity.model_sha256 != model_sha256(float_model)) {
    throw UserError("calibration statistics do not fit", "the shards are of another model",
                    "give every rank the same model and options");
  }
  std::vector<StatsFile> all = request.stats;
  all.insert(all.end(), shards.begin(), shards.end());
  const auto ordered = order_stats(all, identity, pass + 1);
  uint64_t samples = 0;
  for (uint32_t p = 0; p <= pass; ++p) {
    for (const StatsFile* f : ordered[p]) {
      open.import(p, f->stats);
      if (p == pass) samples += f->shard_samples;
    }
  }
  return StatsFile{identity, 0, 1, pass, samples, open.export_pass(pass), {}};
}

}  // namespace eulernpu::host
