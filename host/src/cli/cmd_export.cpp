// eulernpu export: an artifact as a self-contained bundle for its target
// (sources, plan, weights, build files), written by its backend.
#include <cstdio>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "formats/manifest.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {
namespace {

// Every bundle holds this file (docs/backends/zynq_ps.md, "The bundle"); it
// is how a later export recognizes the directory it may replace.
constexpr const char* kBundleMarker = "bundle.json";

}  // namespace

int cmd_export(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu export",
                           "Write an artifact as a self-contained bundle for its target device.");
  options.add_options()("artifact", "artifact directory or .mxq file",
                        cxxopts::value<std::string>())(
      "bundle", "bundle directory to write (an earlier bundle there is replaced)",
      cxxopts::value<std::string>());
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  for (const char* name : {"artifact", "bundle"}) require(*args, "export", name);

  const Artifact artifact = Artifact::open((*args)["artifact"].as<std::string>());
  const nlohmann::json manifest = read_manifest(artifact);
  if (manifest.contains("partitions")) {
    throw UserError("backend cannot export a bundle", "the artifact is partitioned across backends",
                    "compile the whole model for one backend, e.g. --backend zynq_ps");
  }
  const LoadedPlugin& backend =
      ctx.registry().backend(manifest["backend"]["name"].get<std::string>());
  const KeyValues export_options = {{"plugin_dirs", ctx.search_path_string()},
                                    {"target_device", manifest.value("target_device", "")}};
  const FileSet files = export_bundle(backend, artifact, export_options);
  if (!files.count(kBundleMarker)) {
    throw UserError("plugin returned invalid data",
                    "backend '" + backend.name + "' exported a bundle without " + kBundleMarker,
                    "report this to the plugin's author");
  }
  const std::string out = (*args)["bundle"].as<std::string>();
  write_output_dir(out, files, kBundleMarker, "a bundle");
  std::printf("Export   OK: %zu files written to %s\n", files.size(), out.c_str());
  return 0;
}

}  // namespace eulernpu::host
