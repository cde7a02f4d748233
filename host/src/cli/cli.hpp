// The command-line front: global options, the command table, and what every
// command shares.
#pragma once

// Repeatable options keep their commas (--input-shape x=1,3,224,224):
// cxxopts would otherwise split values at ','. Include cxxopts only here.
#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

struct Context {
  std::vector<std::filesystem::path> plugin_dirs;
  bool allow_insecure_plugin_dir = false;  // --allow-insecure-plugin-dir
  std::filesystem::path installed_plugin_dir;
  // The whole command line, for the manifest's reproducibility record.
  std::vector<std::string> command_line;
  // Long work's progress: on stderr unless --quiet, and to a caller's
  // callback (the Python module's).
  Progress progress;

  // Discovers plugins on first use; commands that need none never load any.
  const PluginRegistry& registry();
  // "dir1:dir2:..." of the search path, passed to backends that look for
  // data files (device descriptors) beside their plugins.
  std::string search_path_string();

 private:
  std::unique_ptr<PluginRegistry> registry_;
};

// One command's arguments: argv[0] is the command name.
using CommandFn = int (*)(Context& ctx, int argc, char** argv);

int cmd_plugins(Context& ctx, int argc, char** argv);
int cmd_capabilities(Context& ctx, int argc, char** argv);
int cmd_validate(Context& ctx, int argc, char** argv);
int cmd_calibrate(Context& ctx, int argc, char** argv);
int cmd_compile(Context& ctx, int argc, char** argv);
int cmd_quantize(Context& ctx, int argc, char** argv);
int cmd_run(Context& ctx, int argc, char** argv);
int cmd_benchmark(Context& ctx, int argc, char** argv);
int cmd_export(Context& ctx, int argc, char** argv);
int cmd_compare(Context& ctx, int argc, char** argv);
int cmd_parse(Context& ctx, int argc, char** argv);
int cmd_inspect(Context& ctx, int argc, char** argv);
int cmd_sweep(Context& ctx, int argc, char** argv);

// Parses a command's options; --help prints usage and returns nullopt.
// Unknown options and missing values are UserErrors naming the command.
std::optional<cxxopts::ParseResult> parse_command(cxxopts::Options& options, int argc, char** argv);

// Throws UserError("missing required option") unless `name` was given.
void require(const cxxopts::ParseResult& args, const std::string& command, const std::string& name);

// The option's value, or "" if it was not given.
std::string optional_string(const cxxopts::ParseResult& args, const std::string& name);

// --out or its spelling --output (seed 000's): the path, "" if neither was
// given and it is not `required`; both given is a UserError.
std::string output_path(const cxxopts::ParseResult& args, const std::string& command,
                        bool required);

}  // namespace eulernpu::host
