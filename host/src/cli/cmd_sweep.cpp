// eulernpu sweep: one compile job per backend x target device x core mode
// x preset, as a jobs file (docs/scale-out.md); `sweep run` runs one job
// and `sweep collect` tabulates them (cli/sweep_run.cpp).
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "cli/cli.hpp"
#include "cli/model_source.hpp"
#include "cli/quantize_cli.hpp"
#include "cli/sweep.hpp"
#include "core/error.hpp"
#include "formats/sha256.hpp"
#include "pipeline/sweep_jobs.hpp"
#include "plugins/backend_calls.hpp"
#include "quant/calib_stats.hpp"
#include "quant/quantize_pipeline.hpp"

namespace eulernpu::host {

namespace {

// Options sweep reads itself; everything else on its command line is
// passed to every job's compile.
const std::set<std::string> kOwnOptions = {"--jobs",          "--out-dir",          "--backend",
                                           "--target-device", "--inference-scheme", "--preset",
                                           "--eval-input",    "--eval-golden"};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? comma : comma - at);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// An absolute path for the jobs, which may run elsewhere in the tree.
std::string absolute(const std::string& path, const char* option) {
  std::error_code ec;
  const auto p = path.empty() ? std::filesystem::path() : std::filesystem::absolute(path, ec);
  if (path.empty() || ec) {
    throw UserError("invalid command line",
                    std::string(option) + " '" + path + "'" + (ec ? ": " + ec.message() : ""),
                    "give a path");
  }
  return p.lexically_normal().string();
}

int sweep_create(Context& ctx, int argc, char** argv) {
  cxxopts::Options options(
      "eulernpu sweep",
      "Write one compile job per backend x target device x core mode x preset (docs/scale-out.md);"
      " 'eulernpu sweep run --jobs FILE --index I' runs one, 'eulernpu sweep collect' tabulates "
      "them. Every other option (the model, the calibration) is passed to each job's compile.");
  options.add_options("sweep")("jobs", "jobs file to write (JSON)", cxxopts::value<std::string>())(
      "out-dir", "directory for the jobs' artifacts and results", cxxopts::value<std::string>())(
      "backend", "backend of every job (default cpu_ref)",
      cxxopts::value<std::string>()->default_value("cpu_ref"))(
      "target-device", "devices, comma-separated (default: the backend's first)",
      cxxopts::value<std::string>())("inference-scheme",
                                     "core modes, comma-separated (default: each device's)",
                                     cxxopts::value<std::string>())(
      "eval-input", "inputs (.npz) every job's artifact runs on", cxxopts::value<std::string>())(
      "eval-golden", "the outputs expected for --eval-input (.npz): SQNR, max abs, top-1",
      cxxopts::value<std::string>())(
      "calib-stats", "statistics files (calibrate --shard): each job gets those of its own config",
      cxxopts::value<std::vector<std::string>>());
  add_model_options(options, true);
  add_calibration_options(options, "calibration");
  std::vector<std::string> stats_paths = take_calib_stats(argc, argv);
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "sweep", "jobs");
  require(*args, "sweep", "out-dir");
  if (args->count("eval-input") != args->count("eval-golden")) {
    throw UserError("invalid command line", "--eval-input and --eval-golden go together",
                    "give both: the inputs and the outputs expected for them");
  }
  const bool quantizing = args->count("calib-data-path") != 0;
  const std::vector<std::string> presets = args->count("preset")
                                               ? split_list((*args)["preset"].as<std::string>())
                                               : std::vector<std::string>{};
  if ((!presets.empty() || !stats_paths.empty()) && !quantizing) {
    throw UserError("invalid command line", "--preset or --calib-stats without --calib-data-path",
                    "give the calibration set: the jobs quantize to int8");
  }
  // The pass-through: the command line without sweep's own options.
  std::vector<std::string> passthrough;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (kOwnOptions.count(name)) {
      if (eq == std::string::npos) ++i;  // and its value
      continue;
    }
    passthrough.push_back(a);
  }

  const LoadedPlugin& backend = ctx.registry().backend((*args)["backend"].as<std::string>());
  std::vector<std::string> devices = args->count("target-device")
                                         ? split_list((*args)["target-device"].as<std::string>())
                                         : std::vector<std::string>{""};
  const std::vector<std::string> schemes =
      args->count("inference-scheme") ? split_list((*args)["inference-scheme"].as<std::string>())
                                      : std::vector<std::string>{""};
  // Statistics by the config they were gathered with.
  std::map<std::string, std::vector<std::string>> stats_by_config;
  for (const std::string& path : stats_paths) {
    stats_by_config[read_stats_file(path).identity.config_sha256].push_back(
        absolute(path, "--calib-stats"));
  }
  const QuantizeOptions calibration = quantizing ? calibration_options(*args) : QuantizeOptions{};
  if (calibration.config && !presets.empty()) {
    throw UserError("invalid command line", "--config with --preset",
                    "sweep either presets or one config file");
  }

  SweepPlan plan;
  plan.cwd = absolute(".", "the current directory");
  const std::string out_dir = absolute((*args)["out-dir"].as<std::string>(), "--out-dir");
  if (args->count("eval-input")) {
    plan.eval_input = absolute((*args)["eval-input"].as<std::string>(), "--eval-input");
    plan.eval_golden = absolute((*args)["eval-golden"].as<std::string>(), "--eval-golden");
  }
  std::set<std::string> used_configs;
  const std::vector<std::optional<std::string>> job_presets =
      presets.empty() ? std::vector<std::optional<std::string>>{std::nullopt}
                      : std::vector<std::optional<std::string>>(presets.begin(), presets.end());
  for (const std::string& d : devices) {
    for (const std::string& s : schemes) {
      std::string device, scheme;
      try {
        const auto [info, mode] = resolve_target(backend, d, s);
        device = info.name;
        scheme = mode;
      } catch (const UserError& e) {
        plan.skipped.push_back({{"target_device", d},
                                {"inference_scheme", s},
                                {"reason", e.title() + ": " + e.where()}});
        continue;
      }
      for (const auto& preset : job_presets) {
        SweepJob job;
        job.index = static_cast<uint32_t>(plan.jobs.size());
        job.backend = backend.name;
        job.target_device = device;
        job.inference_scheme = scheme;
        job.preset = preset.value_or(
            quantizing ? calibration.preset.value_or(calibration.config ? "(config)" : "default")
                       : "float32");
        const std::string stem = out_dir + "/job-" + std::to_string(job.index);
        job.artifact = stem + ".mxq";
        job.result = stem + ".json";
        for (const auto& dir : ctx.plugin_dirs)
          job.command.insert(job.command.end(),
                             {"--plugin-dir", absolute(dir.string(), "--plugin-dir")});
        job.command.insert(job.command.end(), {"-q", "compile"});
        job.command.insert(job.command.end(), passthrough.begin(), passthrough.end());
        job.command.insert(job.command.end(), {"--backend", backend.name, "--target-device", device,
                                               "--inference-scheme", scheme});
        if (preset) job.command.insert(job.command.end(), {"--preset", *preset});
        if (quantizing && !stats_by_config.empty()) {
          QuantizeOptions with_preset = calibration;
          if (preset) with_preset.preset = preset;
          const std::string digest = config_sha256(effective_config(with_preset));
          const auto it = stats_by_config.find(digest);
          if (it != stats_by_config.end()) {
            used_configs.insert(digest);
            job.command.emplace_back("--calib-stats");
            job.command.insert(job.command.end(), it->second.begin(), it->second.end());
          }
        }
        job.command.insert(job.command.end(), {"--out", job.artifact});
        plan.jobs.push_back(std::move(job));
      }
    }
  }
  for (const auto& [digest, files] : stats_by_config) {
    if (!used_configs.count(digest)) {
      throw UserError("calibration statistics do not fit",
                      "'" + files.front() + "' is of a config none of the jobs uses",
                      "give statistics written with one of the sweep's presets");
    }
  }
  if (plan.jobs.empty()) {
    throw UserError("no sweep jobs",
                    "no device and core mode of the lists fit backend '" + backend.name + "'",
                    "see 'eulernpu capabilities' or the backend's docs for its devices");
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    throw UserError("cannot write output file", "--out-dir '" + out_dir + "': " + ec.message(),
                    "give a directory that can be created and written");
  }
  write_sweep_plan((*args)["jobs"].as<std::string>(), plan);
  std::printf("Sweep OK: %zu job%s · %zu combination%s skipped · %s\n", plan.jobs.size(),
              plan.jobs.size() == 1 ? "" : "s", plan.skipped.size(),
              plan.skipped.size() == 1 ? "" : "s", (*args)["jobs"].as<std::string>().c_str());
  for (const auto& s : plan.skipped) {
    std::printf("  skipped %s/%s: %s\n", s["target_device"].get<std::string>().c_str(),
                s["inference_scheme"].get<std::string>().c_str(),
                s["reason"].get<std::string>().c_str());
  }
  return 0;
}

}  // namespace

int cmd_sweep(Context& ctx, int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "run") return sweep_run(ctx, argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "collect") return sweep_collect(ctx, argc - 1, argv + 1);
  return sweep_create(ctx, argc, argv);
}

}  // namespace eulernpu::host
