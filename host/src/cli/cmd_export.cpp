// eulernpu export: an artifact as a self-contained bundle for its target
// (sources, plan, weights, build files), written by its backend.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "formats/manifest.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {
namespace {

// Every bundle holds this file (docs/backends/zynq_ps.md, "The bundle"); it
// is how a later export recognizes the directory it may replace.
constexpr const char* kBundleMarker = "bundle.json";
// What a bundle.json eulernpu wrote says of itself: "eulernpu-<backend>-bundle".
constexpr std::string_view kFormatPrefix = "eulernpu-";
constexpr std::string_view kFormatSuffix = "-bundle";

// "dir/" names the directory "dir": the temporary sibling must not land
// inside it.
std::filesystem::path strip_separator(const std::string& out) {
  std::filesystem::path p(out);
  while (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

// A directory is replaced only if its bundle.json is one eulernpu wrote
// (its "format"), not merely a file of that name: export deletes the
// directory whole, the user's build/ and anything else in it included.
void check_earlier_bundle(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path marker = strip_separator(out) / kBundleMarker;
  if (!fs::is_regular_file(marker, ec)) return;  // write_output_dir judges the rest
  std::string format;
  if (fs::file_size(marker, ec) <= (1u << 20) && !ec) {
    std::ifstream in(marker, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object() && j.contains("format") && j["format"].is_string()) format = j["format"];
  }
  const bool ours = format.size() > kFormatPrefix.size() + kFormatSuffix.size() &&
                    format.compare(0, kFormatPrefix.size(), kFormatPrefix) == 0 &&
                    format.compare(format.size() - kFormatSuffix.size(), kFormatSuffix.size(),
                                   kFormatSuffix) == 0;
  if (!ours) {
    throw UserError("output path is in the way",
                    "'" + out + "' holds a bundle.json that is not an eulernpu bundle's",
                    "choose another --bundle or remove it");
  }
}

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
  const KeyValues export_options = {{"plugin_dirs", ctx.search_path_string()}};
  const FileSet files = export_bundle(backend, artifact, export_options);
  if (!files.count(kBundleMarker)) {
    throw UserError("plugin returned invalid data",
                    "backend '" + backend.name + "' exported a bundle without " + kBundleMarker,
                    "report this to the plugin's author");
  }
  const std::string out = (*args)["bundle"].as<std::string>();
  check_earlier_bundle(out);
  write_output_dir(strip_separator(out), files, kBundleMarker, "a bundle", "--bundle");
  std::printf("Export   OK: %zu files written to %s\n", files.size(), out.c_str());
  return 0;
}

}  // namespace eulernpu::host
