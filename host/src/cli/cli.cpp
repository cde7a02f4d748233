#include "cli/cli.hpp"

#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace eulernpu::host {

const PluginRegistry& Context::registry() {
  if (!registry_) {
    const char* env = std::getenv("EULERNPU_PLUGIN_PATH");
    registry_ = std::make_unique<PluginRegistry>(PluginRegistry::discover(
        plugin_dirs, env ? env : "", installed_plugin_dir, allow_insecure_plugin_dir));
  }
  return *registry_;
}

std::string Context::search_path_string() {
  std::string s;
  for (const SearchDir& d : registry().search_path()) {
    if (!s.empty()) s += ':';
    s += d.path.string();
  }
  return s;
}

std::optional<cxxopts::ParseResult> parse_command(cxxopts::Options& options, int argc,
                                                  char** argv) {
  options.add_options()("h,help", "show this help");
  try {
    auto result = options.parse(argc, argv);
    if (result.count("help")) {
      std::printf("%s\n", options.help().c_str());
      return std::nullopt;
    }
    if (!result.unmatched().empty()) {
      throw UserError("invalid command line",
                      "unexpected argument '" + result.unmatched().front() + "' for '" +
                          options.program() + "'",
                      "see '" + options.program() + " --help'");
    }
    return result;
  } catch (const cxxopts::exceptions::exception& e) {
    throw UserError("invalid command line", options.program() + ": " + e.what(),
                    "see '" + options.program() + " --help'");
  }
}

void require(const cxxopts::ParseResult& args, const std::string& command,
             const std::string& name) {
  if (!args.count(name)) {
    throw UserError("missing required option", "'eulernpu " + command + "' needs --" + name,
                    "see 'eulernpu " + command + " --help'");
  }
}

std::string optional_string(const cxxopts::ParseResult& args, const std::string& name) {
  return args.count(name) ? args[name].as<std::string>() : std::string();
}

std::string output_path(const cxxopts::ParseResult& args, const std::string& command,
                        bool required) {
  if (args.count("out") && args.count("output")) {
    throw UserError("invalid command line", "--out and --output name the same thing",
                    "give only one of them");
  }
  if (args.count("output")) return args["output"].as<std::string>();
  if (required) require(args, command, "out");
  return optional_string(args, "out");
}

}  // namespace eulernpu::host
