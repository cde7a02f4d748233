// eulernpu parse: source model -> IR file (.mblt), the frontend step alone.
#include <cstdio>

#include "cli/cli.hpp"
#include "cli/model_source.hpp"
#include "core/error.hpp"
#include "formats/ir_file.hpp"
#include "ir/optimize.hpp"
#include "pipeline/target_choice.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {

int cmd_parse(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu parse",
                           "Parse a model into eulernpu's IR: an ONNX file with the graph "
                           "checked, shape-inferred and constant-folded.");
  add_model_options(options, false);
  options.add_options()("output", "IR file to write (.mblt)", cxxopts::value<std::string>())(
      "optimize", "apply the graph rewrites quantization starts with (docs/optimization.md)")(
      "equalize", "with --optimize: also cross-layer equalization, as quantize --equalize")(
      "backend", "the model's source framework, as --frontend (onnx, spec)",
      cxxopts::value<std::string>());
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "parse", "output");
  const TargetChoice target = choose_target(
      ctx.registry(),
      {optional_string(*args, "backend"), optional_string(*args, "frontend"), "", false});
  if (!target.note.empty()) std::printf("Target   %s\n", target.note.c_str());
  LoadedModel loaded = load_model(ctx, *args, "parse", target.frontend);
  onnx::ModelProto& model = loaded.imported.model;
  if (args->count("optimize")) {
    ir::OptimizeOptions optimize;
    optimize.equalize = args->count("equalize") != 0;
    const auto rewrites = ir::optimize_for_quantization(
        model, loaded.path, constant_evaluator(ctx.registry().backend("cpu_ref"), {}), optimize);
    std::printf("Optimize OK: %s\n", ir::rewrite_counts(rewrites).c_str());
  }
  const LoadedPlugin* frontend = loaded.imported.frontend;
  add_provenance(model, {loaded.path, frontend ? std::optional(frontend->identity()) : std::nullopt,
                         loaded.input_shapes});
  write_ir_file((*args)["output"].as<std::string>(), model);

  const auto& g = model.graph();
  std::set<std::string> weights;
  for (const auto& t : g.initializer()) weights.insert(t.name());
  int inputs = 0;
  for (const auto& v : g.input()) inputs += weights.count(v.name()) ? 0 : 1;
  std::printf("Parse    OK: %d node%s · %d input%s · %d output%s · %zu weight%s\n", g.node_size(),
              g.node_size() == 1 ? "" : "s", inputs, inputs == 1 ? "" : "s", g.output_size(),
              g.output_size() == 1 ? "" : "s", weights.size(), weights.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace eulernpu::host
