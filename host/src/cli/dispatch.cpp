#include "cli/dispatch.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "eulernpu/sdk/abi.h"

namespace eulernpu::host {

namespace {

struct Command {
  CommandFn fn;
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"plugins", {&cmd_plugins, "list loaded plugins and rejected libraries"}},
      {"capabilities", {&cmd_capabilities, "op x backend capability matrix"}},
      {"validate", {&cmd_validate, "check a spec (and its weights)"}},
      {"calibrate", {&cmd_calibrate, "one shard of a calibration -> a statistics file"}},
      {"compile", {&cmd_compile, "source model -> artifact for a backend"}},
      {"quantize", {&cmd_quantize, "calibrate + quantize to int8 + compile for a backend"}},
      {"run", {&cmd_run, "execute an artifact on its backend"}},
      {"benchmark", {&cmd_benchmark, "time an artifact's runs in one process"}},
      {"export", {&cmd_export, "an artifact as a bundle to build for its device"}},
      {"compare", {&cmd_compare, "compare result tensors with a golden"}},
      {"parse", {&cmd_parse, "source model -> IR file (.mblt)"}},
      {"sweep", {&cmd_sweep, "compile jobs over devices x core modes x presets; run, collect"}},
      {"inspect", {&cmd_inspect, "a model's inputs, ops and backend support"}},
  };
  return table;
}

// stderr's log sink: a message clears an open progress line first, so that
// it starts at the left edge rather than after the bar.
class ProgressAwareSink : public spdlog::sinks::ansicolor_stderr_sink_mt {
 public:
  void log(const spdlog::details::log_msg& msg) override {
    clear_progress_line_on_stderr();
    spdlog::sinks::ansicolor_stderr_sink_mt::log(msg);
  }
};

void print_usage() {
  std::printf(
      "usage: eulernpu [--plugin-dir DIR]... [--log-level LEVEL] [--quiet] <command> "
      "[options]\n\n"
      "global options:\n"
      "  --plugin-dir DIR   search DIR for plugins first (repeatable)\n"
      "  --allow-insecure-plugin-dir\n"
      "                     also load plugins any user could have written\n"
      "  --log-level LEVEL  trace, debug, info, warn (default), error, off\n"
      "  -q, --quiet        no progress display (also accepted after the command)\n"
      "  --version          print the version and the plugin ABI\n"
      "  -h, --help         this help\n\ncommands:\n");
  for (const auto& [name, c] : commands()) {
    std::printf("  %-13s %s\n", name.c_str(), c.summary);
  }
  std::printf("\n'eulernpu <command> --help' describes a command.\n");
}

void set_log_level(const std::string& level) {
  const auto l = spdlog::level::from_str(level);
  if (l == spdlog::level::off && level != "off") {
    throw UserError("invalid command line", "--log-level '" + level + "' is not a log level",
                    "use trace, debug, info, warn, error or off");
  }
  spdlog::set_level(l);
}

int run(int argc, char** argv, const std::string& installed_plugin_dir,
        const ProgressCallback& callback) {
  // Logs go to stderr so stdout carries only results. A process that runs
  // several command lines (the Python module) keeps the one logger.
  auto logger = spdlog::get("eulernpu");
  if (!logger) {
    logger = std::make_shared<spdlog::logger>("eulernpu", std::make_shared<ProgressAwareSink>());
    spdlog::register_logger(logger);
  }
  logger->set_pattern("[%l] %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  if (const char* env = std::getenv("EULERNPU_LOG_LEVEL")) set_log_level(env);

  // --quiet anywhere: it changes nothing a command makes, so it is not
  // part of the command line the manifest records either.
  bool quiet = false;
  argc = static_cast<int>(std::remove_if(argv + 1, argv + argc,
                                         [&](const char* a) {
                                           const std::string s = a;
                                           const bool q = s == "--quiet" || s == "-q";
                                           quiet = quiet || q;
                                           return q;
                                         }) -
                          argv);
  Context ctx;
  ctx.installed_plugin_dir = installed_plugin_dir;
  if (!quiet) ctx.progress.show_on_stderr();
  ctx.progress.set_callback(callback);
  ctx.command_line.push_back("eulernpu");
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        throw UserError("invalid command line", std::string(name) + " needs a value",
                        "see 'eulernpu --help'");
      }
      return argv[++i];
    };
    if (arg == "--plugin-dir") {
      ctx.plugin_dirs.emplace_back(value("--plugin-dir"));
    } else if (arg.rfind("--plugin-dir=", 0) == 0) {
      ctx.plugin_dirs.emplace_back(arg.substr(13));
    } else if (arg == "--allow-insecure-plugin-dir") {
      ctx.allow_insecure_plugin_dir = true;
    } else if (arg == "--log-level") {
      set_log_level(value("--log-level"));
    } else if (arg.rfind("--log-level=", 0) == 0) {
      set_log_level(arg.substr(12));
    } else if (arg == "--version") {
      std::printf("eulernpu %s (plugin ABI %d.%d)\n", kVersion, ENP_ABI_MAJOR, ENP_ABI_MINOR);
      return 0;
    } else if (arg == "-h" || arg == "--help") {
      print_usage();
      return 0;
    } else {
      throw UserError("invalid command line", "unknown global option '" + arg + "'",
                      "see 'eulernpu --help'");
    }
  }
  if (i >= argc) {
    print_usage();
    return 2;
  }
  const auto it = commands().find(argv[i]);
  if (it == commands().end()) {
    throw UserError("unknown command", "'" + std::string(argv[i]) + "' is not a command",
                    "see 'eulernpu --help' for the list");
  }
  for (int k = i; k < argc; ++k) ctx.command_line.emplace_back(argv[k]);
  return it->second.fn(ctx, argc - i, argv + i);
}

}  // namespace

int run_command_line(const std::vector<std::string>& args, const std::string& installed_plugin_dir,
                     const ProgressCallback& progress) {
  // The commands parse C-style arguments (cxxopts); the strings outlive the call.
  std::vector<std::string> copies = args;
  std::vector<char*> argv;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  return run(static_cast<int>(copies.size()), argv.data(), installed_plugin_dir, progress);
}

}  // namespace eulernpu::host
