#include "cli/model_source.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "formats/ir_file.hpp"

namespace eulernpu::host {

void add_model_options(cxxopts::Options& options, bool with_mblt) {
  options.add_options()("spec", "spec.yaml model (with --weights)", cxxopts::value<std::string>())(
      "weights", "weights .npz for --spec", cxxopts::value<std::string>())(
      "model", "model file of any loaded frontend (.onnx, .yaml)", cxxopts::value<std::string>())(
      "frontend", "frontend to read --model with (default: by extension)",
      cxxopts::value<std::string>())("input-shape",
                                     "fix a dynamic input shape: NAME=D0,D1,... (repeatable)",
                                     cxxopts::value<std::vector<std::string>>())(
      "freeze-input", "make an input a constant: NAME=V0,V1,... (repeatable; e.g. sr=16000)",
      cxxopts::value<std::vector<std::string>>());
  if (with_mblt) {
    options.add_options()("mblt", "IR file written by 'eulernpu parse'",
                          cxxopts::value<std::string>());
  }
}

std::vector<std::pair<std::string, std::string>> name_values(const cxxopts::ParseResult& args,
                                                             const std::string& option,
                                                             const std::string& example) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!args.count(option)) return out;
  for (const std::string& item : args[option].as<std::vector<std::string>>()) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UserError("invalid command line", "--" + option + " '" + item + "' is not NAME=...",
                      "e.g. --" + option + " " + example);
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> backend_options(const cxxopts::ParseResult& args) {
  static const char* const kHostKeys[] = {"target_device", "inference_scheme", "plugin_dirs",
                                          "threads",       "report",           "estimate_only"};
  auto out = name_values(args, "backend-option", "fit_dsp=0.9");
  for (const auto& [key, value] : out) {
    for (const char* reserved : kHostKeys) {
      if (key == reserved) {
        throw UserError("invalid command line",
                        "--backend-option " + key + " is set by eulernpu itself",
                        "use the command's own option for it (see --help)");
      }
    }
  }
  return out;
}

LoadedModel load_model(Context& ctx, const cxxopts::ParseResult& args, const std::string& command,
                       const std::string& frontend) {
  const size_t given = args.count("spec") + args.count("model") + args.count("mblt");
  if (given != 1) {
    throw UserError("missing required option",
                    "'eulernpu " + command + "' needs exactly one of --spec, --model" +
                        (command == "compile" || command == "quantize" ? " or --mblt" : ""),
                    "see 'eulernpu " + command + " --help'");
  }
  LoadedModel out;
  out.input_shapes = name_values(args, "input-shape", "input=1,3,224,224");
  const auto frozen = name_values(args, "freeze-input", "sr=16000");
  if (args.count("mblt")) {
    if (!out.input_shapes.empty() || !frozen.empty() || args.count("weights")) {
      throw UserError("invalid command line",
                      "--input-shape, --freeze-input and --weights apply when parsing; an IR "
                      "file is parsed",
                      "pass them to 'eulernpu parse', or compile from --model");
    }
    out.path = args["mblt"].as<std::string>();
    out.imported.model = read_ir_file(out.path);
    return out;
  }
  out.path = args[args.count("spec") ? "spec" : "model"].as<std::string>();
  ImportOptions import;
  import.frontend = frontend.empty() ? optional_string(args, "frontend") : frontend;
  // An IR file given as a source model: no frontend reads it, and the
  // generic error would not say which option does.
  if (import.frontend.empty() && std::filesystem::path(out.path).extension() == ".mblt") {
    throw UserError(
        "no frontend for this model",
        "'" + out.path + "' is an IR file written by 'eulernpu parse', not a source model",
        command == "parse"
            ? "it is parsed already: compile it with 'eulernpu compile --mblt " + out.path + "'"
            : "pass it with --mblt " + out.path);
  }
  if (args.count("weights")) {
    import.weights = args["weights"].as<std::string>();
    out.weights_path = import.weights->string();
  }
  for (const auto& [name, dims] : out.input_shapes) {
    import.options.emplace_back("input_shape." + name, dims);
  }
  out.imported = import_model(ctx.registry(), out.path, import);
  freeze_inputs(out.imported.model, frozen, out.path);
  return out;
}

void require_weights(const LoadedModel& loaded) {
  const auto& missing = loaded.imported.unbound_weights;
  if (missing.empty()) return;
  throw UserError(
      "weights not provided",
      "'" + loaded.path + "' needs weight '" + *missing.begin() + "'" +
          (missing.size() > 1 ? " and " + std::to_string(missing.size() - 1) + " more" : ""),
      "pass the weights file with --weights");
}

}  // namespace eulernpu::host
