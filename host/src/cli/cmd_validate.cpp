// eulernpu validate SPEC [--weights W]: structure, references, op names and
// shapes, then whether the backend can lower every op.
#include <cstdio>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "ir/finalize.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/frontend_calls.hpp"

namespace eulernpu::host {

int cmd_validate(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu validate",
                           "Check a model spec: structure, references, op names, "
                           "shapes, and (with --weights) every weight tensor.");
  options.add_options()("spec", "spec.yaml to check", cxxopts::value<std::string>())(
      "weights", "weights .npz to check against the spec", cxxopts::value<std::string>())(
      "backend", "backend that must support every op",
      cxxopts::value<std::string>()->default_value("cpu_ref"))(
      "frontend", "frontend to read the spec with (default: by extension)",
      cxxopts::value<std::string>());
  options.parse_positional({"spec"});
  options.positional_help("SPEC");
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "validate", "spec");

  ImportOptions import;
  import.frontend = optional_string(*args, "frontend");
  if (args->count("weights")) import.weights = (*args)["weights"].as<std::string>();
  const std::string backend_name = (*args)["backend"].as<std::string>();
  const LoadedPlugin& backend = ctx.registry().backend(backend_name);
  const ImportedModel m = import_model(ctx.registry(), (*args)["spec"].as<std::string>(), import);
  const std::string spec = (*args)["spec"].as<std::string>();
  require_supported(backend, m.model, {{"plugin_dirs", ctx.search_path_string()}},
                    "eulernpu inspect " + spec + " --backend " + backend.name);

  const int ops = m.model.graph().node_size();
  const size_t components = component_count(m.model);
  std::printf("Validation OK: %d operator%s · %zu component%s · backend=%s\n", ops,
              ops == 1 ? "" : "s", components, components == 1 ? "" : "s", backend.name.c_str());
  return 0;
}

}  // namespace eulernpu::host
