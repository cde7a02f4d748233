// fpga_board: a Zynq board's programmable logic and processing system
// together (docs/backends/fpga_board.md). Lowering places each op on the
// PL engine or the ARM cores (placement.hpp), picks the largest engine
// size that fits the board (engine_sizes.hpp) and writes plan.json (its
// subgraphs, transfers, resources and latency: plan.hpp) beside the
// backend kit's lowering. Running executes the PL ops through the engine's
// bit-accurate model, tile by tile (layer_tiles.hpp), and the rest through
// the portable kernels zynq_ps runs: the int8 outputs are cpu_ref's bytes.
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "board.hpp"
#include "engine_sizes.hpp"
#include "eulernpu/kit/executor.hpp"
#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/kit/lowering.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/artifact_json.hpp"
#include "eulernpu/sdk/backend.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "eulernpu/sdk/json_value.hpp"
#include "layer_tiles.hpp"
#include "placement.hpp"
#include "plan.hpp"
#include "trace.hpp"

namespace eulernpu::fpga_board {
namespace {

using nlohmann::ordered_json;

// Artifact layout (docs/backends/fpga_board.md, "The artifact").
constexpr const char* kBoardFile = "board.json";
constexpr const char* kPlanFile = "plan.json";
constexpr const char* kFunctionalPrefix = "functional/";
constexpr const char* kWeightsFile = "weights/fpga_board.npz";
constexpr const char* kCoreMode = "single";

[[noreturn]] void corrupt(const std::string& where) {
  sdk::errors::artifact_corrupt(where, "fpga_board");
}

// Without a target the first board is the default, as `compile` picks it.
Board target_board(const sdk::Options& options) {
  return resolve_board(options.get("target_device", ""), sdk::device_files::search_path(options));
}

void check_core_mode(const Board& board, const sdk::Options& options) {
  const std::string mode = options.get("inference_scheme", "");
  if (!mode.empty() && mode != kCoreMode) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "core mode not supported by target device",
                     "board '" + board.name + "' (" + board.source + ") supports " + kCoreMode +
                         ", not '" + mode + "'",
                     "drop --inference-scheme; fpga_board runs one input at a time");
  }
}

// fit_lut, fit_ff, fit_bram36, fit_uram, fit_dsp: shares in (0, 1].
FitLimits fit_limits(const sdk::Options& options) {
  FitLimits limits;
  for (const ResourceKind& k : kResourceKinds) {
    const std::string key = std::string("fit_") + k.key;
    const std::string text = options.get(key, "");
    if (text.empty()) continue;
    double v = 0;
    size_t used = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || !(v > 0 && v <= 1)) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "invalid command line",
                       "backend option " + key + " = '" + text +
                           "' is not a share of the board's " + k.label + " in (0, 1]",
                       "give a number such as 0.8 (docs/backends/fpga_board.md#engine-sizes)");
    }
    limits.share.*k.member = v;
  }
  return limits;
}

int64_t positive_option(const sdk::Options& options, const char* key, int64_t fallback) {
  const std::string text = options.get(key, "");
  if (text.empty()) return fallback;
  int64_t v = 0;
  size_t used = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 1) {
    throw sdk::Error(
        ENP_INVALID_ARGUMENT, "invalid command line",
        std::string("backend option ") + key + " = '" + text + "' is not a positive integer",
        "give a count such as 16");
  }
  return v;
}

ordered_json read_json(sdk::ArtifactReader& artifact, const char* file) {
  return sdk::read_artifact_json(artifact, file, "fpga_board");
}

// The PL engine ops of the plan, by node name.
std::map<std::string, bool> engine_ops(const ordered_json& plan) {
  std::map<std::string, bool> out;
  if (!plan.contains("subgraphs") || !plan["subgraphs"].is_array()) {
    corrupt("plan.json has no subgraph list");
  }
  for (const ordered_json& sg : plan["subgraphs"]) {
    if (!sg.is_object() || !sg.contains("ops") || !sg["ops"].is_array()) {
      corrupt("plan.json: a subgraph has no op list");
    }
    for (const ordered_json& op : sg["ops"]) {
      if (!op.is_object() || !op.contains("node") || !op["node"].is_string()) {
        corrupt("plan.json: an op has no node name");
      }
      if (sdk::value_or(op, "unit", std::string()) == "engine") {
        out[op["node"].get<std::string>()] = true;
      }
    }
  }
  return out;
}

}  // namespace

class FpgaBoardBackend : public sdk::Backend {
 public:
  static const std::vector<enp_op_support_t>& static_ops() { return kit::op_declarations(); }

  std::vector<sdk::DeviceInfo> devices() override {
    return sdk::device_files::device_infos(
        discover_boards(sdk::device_files::host_search_path()), [](const Board& b) {
          return sdk::DeviceInfo{b.name, b.description, {kCoreMode}, kCoreMode, b.source};
        });
  }

  void query(const sdk::GraphView& graph, const sdk::Options& options,
             sdk::SupportReport& report) override {
    if (!options.get("target_device", "").empty()) check_core_mode(target_board(options), options);
    // Every op the portable kernels run lowers here: what the PL does not
    // take runs on the PS.
    bool all = true;
    for (size_t i = 0; i < graph.node_count(); ++i) {
      const auto reason = kit::unsupported_reason(graph, i);
      report.node(i, !reason, reason.value_or(""));
      all = all && !reason;
    }
    // `inspect --backend fpga_board` shows the PS/PL split the compiler
    // would make: the plan of a lowering kept in memory.
    if (all && options.get("query_plan", "0") == "1") {
      const Board board = target_board(options);
      const FitLimits limits = fit_limits(options);
      const EngineModel& engine = choose_engine(board, limits, options.get("pl_config", ""));
      const kit::LoweredFiles files = kit::build_lowering(graph, kWeightsFile);
      report.plan(
          make_plan(kit::parse_lowered(files.graph_json, files.plan_json), board, engine, limits)
              .dump());
    }
  }

  void lower(const sdk::GraphView& graph, const sdk::Options& options,
             sdk::ArtifactWriter& out) override {
    const Board board = target_board(options);
    check_core_mode(board, options);
    const FitLimits limits = fit_limits(options);
    const EngineModel& engine = choose_engine(board, limits, options.get("pl_config", ""));
    kit::Lowering lowering = kit::lower_graph(graph, out, kFunctionalPrefix, kWeightsFile);
    const ordered_json plan = make_plan(lowering.lowered, board, engine, limits);
    out.write_file(kPlanFile, plan.dump(2) + "\n");
    out.write_file(kBoardFile, board_json(board).dump(2) + "\n");
    ordered_json& summary = lowering.summary;
    summary["board"] = board.name;
    summary["engine"] = engine.size.name;
    summary["subgraphs"] = plan["subgraphs"].size();
    // Microseconds are the estimate's resolution; more digits are noise.
    summary["estimated_ms"] =
        std::round(plan["totals"]["latency_ms"].get<double>() * 1000.0) / 1000.0;
    out.set_summary(summary.dump());
  }

  void run(sdk::ArtifactReader& artifact, const sdk::Options& options,
           std::span<const enp_tensor_t> inputs, sdk::OutputSink& out) override {
    const Board board = board_from_json(std::string(artifact.read_file(kBoardFile)),
                                        std::string("artifact ") + kBoardFile);
    check_core_mode(board, options);
    ordered_json plan = read_json(artifact, kPlanFile);
    if (sdk::value_or(plan, "format", std::string()) != kPlanFormat ||
        sdk::value_or(plan, "version", int64_t{0}) != kPlanVersion) {
      corrupt("plan.json is not an fpga_board plan of version " + std::to_string(kPlanVersion));
    }
    if (!plan.contains("engine") || !plan["engine"].is_object()) corrupt("plan.json has no engine");
    const EngineModel& engine =
        engine_by_name(sdk::value_or(plan["engine"], "size", std::string()));
    const std::map<std::string, bool> on_engine = engine_ops(plan);
    const bool estimate_only = options.get("estimate_only", "0") == "1";
    int64_t run_cycles = 0, run_tiles = 0;
    if (!estimate_only) {
      const kit::LoweredArtifact lowered = kit::read_lowered(artifact, kFunctionalPrefix);
      EngineCore core(engine.size);
      // pl_trace=FILE: the engine's tiles for co-simulating the RTL, at most
      // pl_trace_tiles (default 16) of each layer.
      std::unique_ptr<TraceWriter> trace;
      TileObserver observe;
      if (const std::string path = options.get("pl_trace", ""); !path.empty()) {
        trace = std::make_unique<TraceWriter>(path, engine.size,
                                              positive_option(options, "pl_trace_tiles", 16));
        observe = [&trace](const TileJob& job, std::span<const int8_t> y, int64_t cycles) {
          trace->tile(job, y, cycles);
        };
      }
      const kit::NodeRunner runner = [&](const kit::LoweredNode& node,
                                         const kit::KernelContext& ctx) {
        if (!on_engine.count(node.name)) return false;
        std::string why;
        const auto g = engine_geometry(lowered, node, why);
        if (!g) corrupt("plan.json puts node '" + node.name + "' on the PL engine, but " + why);
        if (trace) trace->begin_layer();
        const LayerStats st =
            run_layer(core, *g, ctx.inputs[0].as<int8_t>(), ctx.inputs[1].as<int8_t>(),
                      ctx.inputs[2].as<int32_t>(), ctx.inputs[3].as<int32_t>(),
                      ctx.inputs[4].as<int32_t>(), ctx.outputs[0].as<int8_t>(), observe);
        run_cycles += st.cycles;
        run_tiles += st.tiles;
        return true;
      };
      kit::run_artifact(artifact, options, inputs, out, kFunctionalPrefix, runner);
      if (trace) trace->commit();
    }
    if (estimate_only || options.get("report", "0") == "1") {
      // The cycles the engine's model counted, beside the plan's.
      if (!estimate_only) {
        plan["run"] = {{"engine_cycles", run_cycles}, {"engine_tiles", run_tiles}};
      }
      out.attach_report(plan.dump(2) + "\n");
    }
  }
};

}  // namespace eulernpu::fpga_board

ENP_BACKEND_PLUGIN(eulernpu::fpga_board::FpgaBoardBackend, "fpga_board", "0.1.0",
                   "Zynq board: int8 convolutions and GEMMs on a PL engine (RTL in the plugin), "
                   "the rest on the ARM cores")
