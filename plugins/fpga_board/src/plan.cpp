#include "plan.hpp"

#include <algorithm>

#include "estimate.hpp"
#include "eulernpu/sdk/text_table.hpp"

namespace eulernpu::fpga_board {
namespace {

using nlohmann::ordered_json;
using sdk::fixed_cell;
using sdk::grouped_cell;

int64_t bytes_of(const kit::LoweredArtifact& a, const std::vector<std::string>& names) {
  int64_t n = 0;
  for (const std::string& t : names) {
    if (const kit::TensorDecl* d = t.empty() ? nullptr : find_tensor(a, t)) n += d->bytes;
  }
  return n;
}

// Taps each output of a pool reads: the window, or the whole plane.
int64_t pool_taps(const kit::LoweredArtifact& a, const kit::LoweredNode& n) {
  if (n.op == "QGlobalAveragePool") {
    const kit::TensorDecl* x = find_tensor(a, n.inputs[0]);
    return x != nullptr && x->shape.size() == 4 ? x->shape[2] * x->shape[3] : 1;
  }
  const auto it = n.attributes.find("kernel_shape");
  int64_t taps = 1;
  if (it != n.attributes.end() && it->is_array()) {
    for (const auto& k : *it) taps *= k.is_number_integer() ? k.get<int64_t>() : 1;
  }
  return taps;
}

ordered_json resources_json(const Board& board, const EngineModel& engine,
                            const FitLimits& limits) {
  ordered_json r = ordered_json::object();
  const Resources& used = engine.on(board.family);
  for (const ResourceKind& k : kResourceKinds) {
    const double have = board.resources.*k.member;
    r[k.key] = {{"used", used.*k.member},
                {"available", static_cast<int64_t>(have)},
                {"limit", limits.share.*k.member},
                {"utilisation", have > 0 ? used.*k.member / have : 0.0}};
  }
  return r;
}

}  // namespace

OpTime pl_op_time(const kit::LoweredArtifact& a, const kit::LoweredNode& n, const Placement& p,
                  const EngineSize& size, const Board& board) {
  OpTime t;
  const double hz = board.pl_clock_mhz * 1e6;
  const double bandwidth = board.pl_ddr_gbps * 1e9;
  const kit::TensorDecl* y = n.outputs.empty() ? nullptr : find_tensor(a, n.outputs[0]);
  const int64_t out_elements = y == nullptr ? 0 : element_count(*y);
  switch (p.kind) {
    case PlKind::kEngine: {
      std::string why;
      const auto g = engine_geometry(a, n, why);
      if (!g) break;
      const LayerStats st = layer_schedule(size, *g);
      t.macs = st.macs;
      t.cycles = st.cycles;
      t.tiles = st.tiles;
      // The input, the weights with their bias and multipliers, the output.
      t.ddr_bytes = bytes_of(a, n.inputs) + bytes_of(a, n.outputs);
      break;
    }
    case PlKind::kPool: {
      const int64_t lanes = size.pp * size.icp;
      t.cycles = (out_elements * pool_taps(a, n) + lanes - 1) / lanes;
      t.ddr_bytes = bytes_of(a, {n.inputs[0]}) + bytes_of(a, n.outputs);
      break;
    }
    case PlKind::kAdd: {
      const int64_t lanes = size.pp * size.icp;
      t.cycles = (out_elements + lanes - 1) / lanes;
      t.ddr_bytes = bytes_of(a, n.inputs) + bytes_of(a, n.outputs);
      break;
    }
    case PlKind::kView:  // a new shape for the same bytes in DDR
    case PlKind::kNone:
      break;
  }
  t.compute_s = static_cast<double>(t.cycles) / hz;
  t.memory_s = static_cast<double>(t.ddr_bytes) / bandwidth;
  t.time_s = std::max(t.compute_s, t.memory_s);
  return t;
}

ordered_json make_plan(const kit::LoweredArtifact& lowered, const Board& board,
                       const EngineModel& engine, const FitLimits& limits) {
  const std::vector<Placement> placement = place(lowered);
  const std::vector<Subgraph> parts = subgraphs(lowered, placement);
  const EngineSize& size = engine.size;
  const zynq_ps::Device& ps = board.ps;
  const double bandwidth = board.pl_ddr_gbps * 1e9;

  ordered_json plan;
  plan["format"] = kPlanFormat;
  plan["version"] = kPlanVersion;
  plan["board"] = board.name;
  plan["part"] = board.part;
  plan["family"] = board.family;
  plan["pl_clock_mhz"] = board.pl_clock_mhz;
  plan["pl_ddr_gbps"] = board.pl_ddr_gbps;
  plan["ps"] = {
      {"device", ps.name}, {"cpu", ps.cpu}, {"cores", ps.cores}, {"clock_mhz", ps.clock_mhz}};
  plan["engine"] = {{"size", size.name}, {"pp", size.pp},       {"icp", size.icp},
                    {"ocp", size.ocp},   {"depth", size.depth}, {"macs_per_cycle", size.macs()}};
  plan["resources"] = resources_json(board, engine, limits);
  plan["subgraphs"] = ordered_json::array();
  double pl_s = 0, ps_s = 0, transfer_s = 0;
  int64_t macs = 0, pl_macs = 0, pl_cycles = 0, engine_cycles = 0;
  for (size_t si = 0; si < parts.size(); ++si) {
    const Subgraph& s = parts[si];
    ordered_json js;
    js["name"] =
        std::string(s.unit == Unit::kPL ? "subgraph_pl_" : "subgraph_ps_") + std::to_string(si);
    js["device"] = unit_name(s.unit);
    js["ops"] = ordered_json::array();
    double time_s = 0;
    int64_t cycles = 0, sub_macs = 0;
    for (size_t index : s.nodes) {
      const kit::LoweredNode& n = lowered.graph.nodes[index];
      ordered_json op{{"node", n.name}, {"op", n.op}};
      if (s.unit == Unit::kPL) {
        const OpTime t = pl_op_time(lowered, n, placement[index], size, board);
        static constexpr const char* kKinds[] = {"", "engine", "pool", "add", "view"};
        op["unit"] = kKinds[static_cast<int>(placement[index].kind)];
        op["macs"] = t.macs;
        op["tiles"] = t.tiles;
        op["cycles"] = t.cycles;
        op["ddr_bytes"] = t.ddr_bytes;
        op["compute_us"] = t.compute_s * 1e6;
        op["memory_us"] = t.memory_s * 1e6;
        op["time_us"] = t.time_s * 1e6;
        time_s += t.time_s;
        cycles += t.cycles;
        sub_macs += t.macs;
        if (placement[index].kind == PlKind::kEngine) engine_cycles += t.cycles;
      } else {
        const zynq_ps::OpEstimate e = zynq_ps::op_estimate(lowered, n, ps, ps.cores);
        op["kernel"] = e.kernel;
        op["macs"] = e.macs;
        op["time_us"] = e.time_s * 1e6;
        if (!placement[index].reason.empty()) op["why_ps"] = placement[index].reason;
        time_s += e.time_s;
        sub_macs += e.macs;
      }
      js["ops"].push_back(op);
    }
    int64_t moved = 0;
    for (const auto* list : {&s.inputs, &s.outputs}) {
      for (const Transfer& t : *list) moved += t.bytes;
    }
    auto transfers = [](const std::vector<Transfer>& list) {
      ordered_json j = ordered_json::array();
      for (const Transfer& t : list) j.push_back({{"tensor", t.tensor}, {"bytes", t.bytes}});
      return j;
    };
    js["inputs"] = transfers(s.inputs);
    js["outputs"] = transfers(s.outputs);
    const double move_s = static_cast<double>(moved) / bandwidth;
    js["transfer_bytes"] = moved;
    js["transfer_us"] = move_s * 1e6;
    js["macs"] = sub_macs;
    if (s.unit == Unit::kPL) js["cycles"] = cycles;
    js["time_us"] = time_s * 1e6;
    (s.unit == Unit::kPL ? pl_s : ps_s) += time_s;
    transfer_s += move_s;
    macs += sub_macs;
    if (s.unit == Unit::kPL) {
      pl_macs += sub_macs;
      pl_cycles += cycles;
    }
    plan["subgraphs"].push_back(js);
  }
  const double total_s = pl_s + ps_s + transfer_s;
  plan["totals"] = {{"latency_ms", total_s * 1e3},
                    {"pl_ms", pl_s * 1e3},
                    {"ps_ms", ps_s * 1e3},
                    {"transfer_ms", transfer_s * 1e3},
                    {"pl_cycles", pl_cycles},
                    {"engine_cycles", engine_cycles},
                    {"macs", macs},
                    {"pl_macs", pl_macs},
                    {"throughput_ips", total_s > 0 ? 1.0 / total_s : 0.0}};
  plan["summary"] = plan_summary(plan);
  return plan;
}

std::string plan_summary(const ordered_json& plan) {
  const ordered_json& e = plan["engine"];
  std::string s = "fpga_board: board " + plan["board"].get<std::string>() + " (" +
                  plan["part"].get<std::string>() + "), engine " + e["size"].get<std::string>() +
                  " (" + std::to_string(e["pp"].get<int64_t>()) + "x" +
                  std::to_string(e["icp"].get<int64_t>()) + "x" +
                  std::to_string(e["ocp"].get<int64_t>()) + ") at " +
                  fixed_cell(plan["pl_clock_mhz"].get<double>(), 0) + " MHz, PS " +
                  plan["ps"]["device"].get<std::string>() + ", estimated\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"subgraph", "device", "ops", "MACs", "transfers", "time us"});
  for (const ordered_json& sg : plan["subgraphs"]) {
    rows.push_back({sg["name"].get<std::string>(), sg["device"].get<std::string>(),
                    std::to_string(sg["ops"].size()), grouped_cell(sg["macs"].get<int64_t>()),
                    grouped_cell(sg["transfer_bytes"].get<int64_t>()) + " B",
                    fixed_cell(sg["time_us"].get<double>() + sg["transfer_us"].get<double>(), 1)});
  }
  s += sdk::text_table(rows, {false, false, true, true, true, true}, 2);
  s += "Resources (engine " + e["size"].get<std::string>() + "):\n";
  rows.clear();
  rows.push_back({"resource", "used", "available", "utilisation", "limit"});
  for (const ResourceKind& k : kResourceKinds) {
    const ordered_json& r = plan["resources"][k.key];
    rows.push_back({k.label, grouped_cell(std::llround(r["used"].get<double>())),
                    grouped_cell(r["available"].get<int64_t>()),
                    fixed_cell(100.0 * r["utilisation"].get<double>(), 1) + "%",
                    fixed_cell(r["limit"].get<double>(), 2)});
  }
  s += sdk::text_table(rows, {false, true, true, true, true}, 2);
  const ordered_json& t = plan["totals"];
  s += "Totals:\n";
  s += sdk::text_table({{"latency", fixed_cell(t["latency_ms"].get<double>(), 3) + " ms"},
                        {"on the PL", fixed_cell(t["pl_ms"].get<double>(), 3) + " ms"},
                        {"on the PS", fixed_cell(t["ps_ms"].get<double>(), 3) + " ms"},
                        {"PS/PL transfers", fixed_cell(t["transfer_ms"].get<double>(), 3) + " ms"},
                        {"MACs on the PL", grouped_cell(t["pl_macs"].get<int64_t>()) + " of " +
                                               grouped_cell(t["macs"].get<int64_t>())}},
                       {false, true}, 2);
  return s;
}

}  // namespace eulernpu::fpga_board
