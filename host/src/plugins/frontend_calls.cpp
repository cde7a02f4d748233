#include "plugins/frontend_calls.hpp"

#include "core/error.hpp"
#include "formats/npz.hpp"
#include "ir/finalize.hpp"
#include "plugins/host_api.hpp"
#include "plugins/plugin_call.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {

ImportedModel import_model(const PluginRegistry& registry, const fs::path& path,
                           const ImportOptions& options) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw UserError("file not found", "model '" + path.string() + "' does not exist",
                    "check the path");
  }
  const LoadedPlugin& frontend = registry.frontend_for(path, options.frontend);

  std::vector<Tensor> weights;
  std::string weights_path;
  if (options.weights) {
    weights = read_npz(*options.weights);
    weights_path = options.weights->string();
  }
  const std::vector<enp_tensor_t> weight_views = tensor_views(weights);
  std::vector<enp_kv_t> kv;
  for (const auto& [k, v] : options.options) kv.push_back({k.c_str(), v.c_str()});

  const std::string model_path = path.string();
  enp_frontend_request_t request{sizeof(enp_frontend_request_t),
                                 model_path.c_str(),
                                 weight_views.data(),
                                 weight_views.size(),
                                 options.weights ? weights_path.c_str() : nullptr,
                                 kv.data(),
                                 kv.size()};
  enp_graph_builder_t builder;
  call_plugin(frontend.name, "import_model",
              [&] { return frontend.frontend().import_model(&request, &builder); });

  ImportedModel out;
  out.model = std::move(builder.model);
  out.unbound_weights = std::move(builder.unbound_weights);
  out.frontend = &frontend;
  finalize_model(out.model, model_path);
  return out;
}

}  // namespace eulernpu::host
