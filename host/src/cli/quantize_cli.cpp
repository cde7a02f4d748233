#include "cli/quantize_cli.hpp"

#include <optional>
#include <string>

namespace eulernpu::host {

void add_quantize_options(cxxopts::Options& options) {
  options.add_options("quantization")(
      "calib-data-path", "calibration samples: a directory of .npy/.npz files or a list file",
      cxxopts::value<std::string>())("calib-samples", "use at most N calibration samples",
                                     cxxopts::value<int64_t>())(
      "config", "quantization config file (YAML, docs/config.md)", cxxopts::value<std::string>())(
      "preset", "named quantization preset (default, fast, entropy, mse, best)",
      cxxopts::value<std::string>())("quantizer", "quantizer plugin (default: the one loaded)",
                                     cxxopts::value<std::string>())(
      "save-quantized-ir", "also write the quantized graph as an IR file (.mblt)",
      cxxopts::value<std::string>())("report", "write the per-layer accuracy report (JSON)",
                                     cxxopts::value<std::string>())(
      "threads", "worker threads for calibration runs (0 = backend default)",
      cxxopts::value<int>()->default_value("0"))(
      "sensitivity-samples",
      "samples for the report's per-value sensitivity ('alone'; default " +
          std::to_string(kSensitivitySamples) + " with --report, else 0 = skipped)",
      cxxopts::value<int64_t>())(
      "no-optimize", "compile the graph as given: none of the rewrites of docs/optimization.md")(
      "equalize",
      "balance the channel ranges of Conv/Gemm pairs across a Relu before quantizing "
      "(cross-layer equalization, docs/optimization.md)")(
      "accuracy-target",
      "keep the most sensitive nodes in float32 until the outputs reach this SQNR (dB) on the "
      "calibration samples",
      cxxopts::value<double>());
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

QuantizeOptions quantize_options(const cxxopts::ParseResult& args) {
  QuantizeOptions o;
  o.calib_data_path = args["calib-data-path"].as<std::string>();
  o.config = maybe(args, "config");
  o.preset = maybe(args, "preset");
  o.quantizer = maybe(args, "quantizer");
  if (args.count("calib-samples")) o.calib_samples = args["calib-samples"].as<int64_t>();
  o.threads = args["threads"].as<int>();
  if (args.count("sensitivity-samples")) {
    o.sensitivity_samples = args["sensitivity-samples"].as<int64_t>();
  }
  o.optimize = args.count("no-optimize") == 0;
  o.equalize = args.count("equalize") != 0;
  if (args.count("accuracy-target")) o.accuracy_target = args["accuracy-target"].as<double>();
  if (auto p = maybe(args, "save-quantized-ir")) o.save_quantized_ir = *p;
  if (auto p = maybe(args, "report")) o.report = *p;
  return o;
}

}  // namespace eulernpu::host
