#include "cli/quantize_cli.hpp"

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace eulernpu::host {

void add_calibration_options(cxxopts::Options& options, const std::string& group) {
  options.add_options(group)("calib-data-path",
                             "calibration samples: a directory of .npy/.npz files or a list file",
                             cxxopts::value<std::string>())(
      "calib-samples", "use at most N calibration samples", cxxopts::value<int64_t>())(
      "config", "quantization config file (YAML, docs/config.md)", cxxopts::value<std::string>())(
      "preset", "named quantization preset (default, fast, entropy, mse, best)",
      cxxopts::value<std::string>())("quantizer", "quantizer plugin (default: the one loaded)",
                                     cxxopts::value<std::string>())(
      "threads", "worker threads for calibration runs (0 = backend default)",
      cxxopts::value<int>()->default_value("0"))(
      "no-optimize", "compile the graph as given: none of the rewrites of docs/optimization.md")(
      "equalize",
      "balance the channel ranges of Conv/Gemm pairs across a Relu before quantizing "
      "(cross-layer equalization, docs/optimization.md)");
}

void add_quantize_options(cxxopts::Options& options) {
  add_calibration_options(options, "quantization");
  options.add_options("quantization")("save-quantized-ir",
                                      "also write the quantized graph as an IR file (.mblt)",
                                      cxxopts::value<std::string>())(
      "report", "write the per-layer accuracy report (JSON)", cxxopts::value<std::string>())(
      "sensitivity-samples",
      "samples for the report's per-value sensitivity ('alone'; default " +
          std::to_string(kSensitivitySamples) + " with --report, else 0 = skipped)",
      cxxopts::value<int64_t>())(
      "accuracy-target",
      "keep the most sensitive nodes in float32 until the outputs reach this SQNR (dB) on the "
      "calibration samples",
      cxxopts::value<double>())(
      "calib-stats",
      "statistics files of a sharded calibration (eulernpu calibrate --shard; docs/scale-out.md), "
      "merged instead of observing the samples; every file after it up to the next option",
      cxxopts::value<std::vector<std::string>>());
}

namespace {

bool is_calib_stats(const std::string& a) { return a == "--calib-stats"; }

// Files follow --calib-stats up to the next option (an empty argument is a
// file name, however unlikely, not an option).
bool is_option(const std::string& a) { return !a.empty() && a[0] == '-'; }

}  // namespace

std::vector<std::string> take_calib_stats(int& argc, char** argv) {
  std::vector<std::string> files;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (is_calib_stats(a)) {
      const int before = static_cast<int>(files.size());
      while (i + 1 < argc && !is_option(argv[i + 1])) files.emplace_back(argv[++i]);
      if (static_cast<int>(files.size()) == before) {
        throw UserError("invalid command line", "--calib-stats needs at least one file",
                        "e.g. --calib-stats part.*.calib");
      }
    } else if (a.rfind("--calib-stats=", 0) == 0) {
      files.push_back(a.substr(14));
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return files;
}

std::vector<std::string> without_calib_stats(const std::vector<std::string>& command_line) {
  std::vector<std::string> out;
  for (size_t i = 0; i < command_line.size(); ++i) {
    const std::string& a = command_line[i];
    if (is_calib_stats(a)) {
      while (i + 1 < command_line.size() && !is_option(command_line[i + 1])) ++i;
    } else if (a.rfind("--calib-stats=", 0) != 0) {
      out.push_back(a);
    }
  }
  return out;
}

bool wants_quantization(const cxxopts::ParseResult& args) {
  return args.count("calib-data-path") != 0;
}

namespace {

std::optional<std::string> maybe(const cxxopts::ParseResult& args, const std::string& name) {
  if (!args.count(name)) return std::nullopt;
  return args[name].as<std::string>();
}

}  // namespace

QuantizeOptions calibration_options(const cxxopts::ParseResult& args) {
  QuantizeOptions o;
  o.calib_data_path = args["calib-data-path"].as<std::string>();
  o.config = maybe(args, "config");
  o.preset = maybe(args, "preset");
  o.quantizer = maybe(args, "quantizer");
  if (args.count("calib-samples")) o.calib_samples = args["calib-samples"].as<int64_t>();
  o.threads = args["threads"].as<int>();
  o.optimize = args.count("no-optimize") == 0;
  o.equalize = args.count("equalize") != 0;
  return o;
}

QuantizeOptions quantize_options(const cxxopts::ParseResult& args) {
  QuantizeOptions o = calibration_options(args);
  if (args.count("sensitivity-samples")) {
    o.sensitivity_samples = args["sensitivity-samples"].as<int64_t>();
  }
  if (args.count("accuracy-target")) o.accuracy_target = args["accuracy-target"].as<double>();
  if (auto p = maybe(args, "save-quantized-ir")) o.save_quantized_ir = *p;
  if (auto p = maybe(args, "report")) o.report = *p;
  return o;
}

}  // namespace eulernpu::host
