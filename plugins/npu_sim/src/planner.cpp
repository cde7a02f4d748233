#include "planner.hpp"

#include "checked_int.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "pipeline.hpp"
#include "tiling.hpp"

namespace eulernpu::npu_sim {
namespace {

using nlohmann::json;
using std::int64_t;

int64_t plan_mul(int64_t a, int64_t b) {
  return checked_mul(a, b, "failed to plan op", "a size or cycle count");
}
int64_t plan_add(int64_t a, int64_t b) {
  return checked_add(a, b, "failed to plan op", "a size or cycle count");
}
std::string plan_str(int64_t v) { return std::to_string(v); }

// How a core mode runs inferences on the device.
struct ModeShape {
  int64_t unit_cores = 1;  // cores one inference (multi: one batch) uses
  int64_t units = 1;       // such units running at once
  int64_t samples = 1;     // inferences one unit runs at once (multi: 4)
  DmaRate dram;            // the DRAM bandwidth one unit gets
  DmaRate link;            // global modes: the link the cores exchange over
};

void validate_device(const DeviceSpec& d) {
  const std::string where = "failed to plan for device '" + d.name + "'";
  if (d.clusters < 1 || d.cores_per_cluster < 1) {
    throw std::invalid_argument(where + " with " + plan_str(d.clusters) + " clusters of " +
                                plan_str(d.cores_per_cluster) + " cores: both must be at least 1");
  }
  plan_mul(d.clusters, d.cores_per_cluster);
  const SystolicArray& a = d.core.array;
  if (a.rows < 1 || a.cols < 1) {
    throw std::invalid_argument(where + " with a " + plan_str(a.rows) + "x" + plan_str(a.cols) +
                                " array: rows and cols must be at least 1");
  }
  if (a.rows == 1 && a.cols == 1 && a.dataflow == Dataflow::kOutputStationary) {
    // SCALE-Sim counts M·N·K - 1 cycles there: faster than one MAC per cycle.
    throw std::invalid_argument(where +
                                " with a 1x1 array in os: SCALE-Sim's count is below one MAC "
                                "per cycle, so no plan could respect the roofline");
  }
  if (a.word_bytes != 1) {
    throw std::invalid_argument(where + " with " + plan_str(a.word_bytes) +
                                "-byte words: the planner models int8 (1-byte) operands");
  }
  const SramSpec& s = d.core.sram;
  const bool separate_ok = s.input_bytes >= 2 && s.weight_bytes >= 2 && s.output_bytes >= 2;
  if (s.unified_bytes < 0 || (!s.unified() && !separate_ok)) {
    throw std::invalid_argument(where +
                                ": each core needs input, weight and output SRAMs of at least "
                                "2 bytes, or a unified SRAM");
  }
  if (std::isnan(d.dram_bytes_per_cycle) || std::isnan(d.link_bytes_per_cycle)) {
    throw std::invalid_argument(where + ": DRAM and link bandwidths must be numbers");
  }
  if (!(d.clock_mhz > 0) || std::isinf(d.clock_mhz)) {
    throw std::invalid_argument(where + " at " + std::to_string(d.clock_mhz) +
                                " MHz: the clock must be positive and finite");
  }
  if (d.sync_cycles < 0) {
    throw std::invalid_argument(where + " with sync_cycles " + plan_str(d.sync_cycles) +
                                ": must not be negative");
  }
}

ModeShape mode_shape(const DeviceSpec& d, CoreMode mode) {
  const std::string name = core_mode_name(mode);
  if (!d.supports(name)) {
    std::string list;
    for (const std::string& m : d.core_modes) list += (list.empty() ? "" : ", ") + m;
    throw std::invalid_argument("failed to plan for device '" + d.name + "' in core mode '" + name +
                                "': the device supports " +
                                (list.empty() ? std::string("none") : list));
  }
  ModeShape s;
  switch (mode) {
    case CoreMode::kSingle:
      s.units = d.cores();
      break;
    case CoreMode::kMulti:
      if (d.cores_per_cluster < 4) {
        throw std::invalid_argument("failed to plan for device '" + d.name +
                                    "' in core mode 'multi': a batch of 4 needs 4 cores in a "
                                    "cluster, the device has " +
                                    plan_str(d.cores_per_cluster));
      }
      s.unit_cores = 4;
      s.samples = 4;
      s.units = d.clusters * (d.cores_per_cluster / 4);
      break;
    case CoreMode::kGlobal4:
    case CoreMode::kGlobal8: {
      const int64_t g = mode == CoreMode::kGlobal4 ? 4 : 8;
      if (d.cores() < g) {
        throw std::invalid_argument("failed to plan for device '" + d.name + "' in core mode '" +
                                    name + "': it needs " + plan_str(g) +
                                    " cores, the device has " + plan_str(d.cores()));
      }
      s.unit_cores = g;
      s.units = d.cores() / g;
      s.link = DmaRate{d.link_bytes_per_cycle};
      break;
    }
  }
  // Every unit streams at once, so each gets an equal share of DRAM.
  s.dram = DmaRate{d.dram_bytes_per_cycle / static_cast<double>(s.units)};
  return s;
}

bool global_mode(CoreMode m) { return m == CoreMode::kGlobal4 || m == CoreMode::kGlobal8; }

json range(int64_t a, int64_t b) { return json::array({a, b}); }

// Operand buffers, both sets when the op has more than one tile.
json buffers_json(const BufferBudget& b, int64_t input, int64_t weight, int64_t output,
                  bool double_buffered, int64_t& peak) {
  json out = json::array();
  const int64_t sets = double_buffered ? 2 : 1;
  struct Operand {
    const char* name;
    int64_t bytes;
    int64_t half;
  };
  const Operand ops[] = {
      {"input", input, b.input}, {"weight", weight, b.weight}, {"output", output, b.output}};
  peak = 0;
  for (int64_t set = 0; set < sets; ++set) {
    int64_t unified_offset = set * b.total;
    for (const Operand& o : ops) {
      if (o.bytes == 0) continue;
      json e;
      e["name"] = std::string(o.name) + plan_str(set);
      e["sram"] = b.unified ? "unified" : o.name;
      e["offset"] = b.unified ? unified_offset : set * o.half;
      e["bytes"] = o.bytes;
      out.push_back(std::move(e));
      unified_offset += o.bytes;
      peak += o.bytes;
    }
  }
  return out;
}

json slices_json(int64_t cores, int64_t slice, int64_t extent) {
  json out = json::array();
  for (int64_t c = 0; c < cores; ++c) {
    out.push_back({{"core", c}, {"range", range(c * slice, std::min(extent, (c + 1) * slice))}});
  }
  return out;
}

void finish(OpPlan& p, const PipelineResult& r, int64_t sync, const ModeShape& m,
            const CoreSpec& core) {
  p.compute_cycles = r.compute;
  p.stall_cycles = r.total - r.compute;
  p.sync_cycles = sync;
  p.total_cycles = plan_add(r.total, sync);
  p.dma_cycles = r.dma;
  p.tile_count = r.tiles;
  p.dram_read_bytes = r.load_bytes;
  p.dram_write_bytes = r.store_bytes;
  const int64_t peak_macs = plan_mul(plan_mul(core.array.rows, core.array.cols), p.cores);
  p.roofline_cycles =
      std::max(ceil_div(p.macs, peak_macs), m.dram.cycles(plan_add(r.load_bytes, r.store_bytes)));
  p.mac_utilization = p.total_cycles > 0
                          ? static_cast<double>(p.macs) / (static_cast<double>(p.total_cycles) *
                                                           static_cast<double>(peak_macs))
                          : 0.0;
}

// Barrier plus an all-gather of the op's output over the link: after the op
// every core of the unit has received the slices the other cores produced,
// (cores - 1) / cores of the output, whatever the next op's split needs.
int64_t exchange(OpPlan& p, int64_t output_bytes, const DeviceSpec& d, const ModeShape& m,
                 CoreMode mode) {
  if (!global_mode(mode)) return 0;
  p.link_bytes = p.cores > 1 ? ceil_div(plan_mul(output_bytes, p.cores - 1), p.cores) : 0;
  return plan_add(d.sync_cycles, m.link.cycles(p.link_bytes));
}

OpPlan plan_conv(const OpDesc& op, const DeviceSpec& d, CoreMode mode, const ModeShape& m) {
  const CoreSpec& core = d.core;
  const bool gemm = op.kind == OpDesc::Kind::kGemm;
  const ConvLayer layer = gemm ? to_conv_layer(op.gemm) : op.conv;
  const ComputeResult whole = simulate_compute(core.array, layer);  // validates the layer
  const OperandMatrices& o = whole.operands;
  if (op.count < 1)
    throw std::invalid_argument("count " + plan_str(op.count) + " must be at least 1");
  if (op.weight_bytes < 0 || op.input_bytes < 0 || op.output_bytes < 0) {
    throw std::invalid_argument("byte counts must not be negative");
  }
  // Weight bytes beyond the int8 filters are per-channel data (bias,
  // requantization multiplier and shift), spread over the output channels.
  const int64_t filters = plan_mul(plan_mul(op.count, o.k), o.n);
  const int64_t extra = std::max<int64_t>(0, op.weight_bytes - filters);
  const int64_t extra_per_channel = ceil_div(extra, plan_mul(op.count, o.n));

  OpPlan p;
  p.node = op.node;
  p.op_type = op.op_type;
  p.macs = plan_mul(plan_mul(whole.macs, op.count), m.samples);

  // How the unit's cores share the op. `shared_weights`: the operand every
  // core needs whole is the weights (multi, row split), else the input
  // (channel split); it is loaded once and broadcast.
  ConvLayer slice = layer;
  std::string split = "none";
  int64_t cores = 1;
  int64_t slice_extent = 0;
  int64_t extent = 0;
  bool shared_weights = true;
  if (mode == CoreMode::kMulti) {
    split = "batch";
    cores = 4;
  } else if (global_mode(mode)) {
    const int64_t g = m.unit_cores;
    const int64_t n_slice = ceil_div(o.n, std::min(g, o.n));
    const int64_t n_cores = ceil_div(o.n, n_slice);
    const int64_t r_slice = ceil_div(o.ofmap_h, std::min(g, o.ofmap_h));
    const int64_t r_cores = ceil_div(o.ofmap_h, r_slice);
    ConvLayer by_channels = layer;
    by_channels.num_filters = n_slice;
    ConvLayer by_rows = layer;
    // Every core is timed on the largest slice (see docs): r_slice rows.
    by_rows.ifmap_h = (r_slice - 1) * layer.stride_h + layer.filter_h;
    // The split whose largest slice computes faster; channels on a tie.
    const int64_t c_cycles = simulate_compute(core.array, by_channels).cycles;
    const int64_t r_cycles = simulate_compute(core.array, by_rows).cycles;
    if (n_cores > 1 && (r_cores == 1 || c_cycles <= r_cycles)) {
      split = "channels";
      cores = n_cores;
      slice = by_channels;
      slice_extent = n_slice;
      extent = o.n;
      shared_weights = false;
    } else if (r_cores > 1) {
      split = "rows";
      cores = r_cores;
      slice = by_rows;
      slice_extent = r_slice;
      extent = o.ofmap_h;
    }
  }
  p.cores = cores;

  const ConvTiling t = tile_conv(slice, op.count, extra_per_channel, core);

  std::map<std::array<int64_t, 4>, int64_t> compute_cache;
  auto compute = [&](const ConvTile& tile) {
    const ConvLayer& sub = tile.sub_layer;
    auto [it, fresh] =
        compute_cache.try_emplace({sub.ifmap_h, sub.ifmap_w, sub.channels, sub.num_filters}, 0);
    if (fresh) it->second = simulate_compute(core.array, sub).cycles;
    return it->second;
  };
  auto cost = [&](const ConvTile& tile) {
    const int64_t in = tile.load_input ? tile.input_bytes : 0;
    const int64_t w = tile.load_weight ? tile.weight_bytes : 0;
    TileCost c;
    c.load_bytes =
        shared_weights ? plan_add(w, plan_mul(cores, in)) : plan_add(in, plan_mul(cores, w));
    c.store_bytes = tile.store_output ? plan_mul(cores, tile.output_bytes) : 0;
    c.load = m.dram.cycles(c.load_bytes);
    c.compute = compute(tile);
    c.store = m.dram.cycles(c.store_bytes);
    return c;
  };
  // The schedule of one group as runs: on each loop level (outermost
  // first), the first, middle and last blocks; middle ones are identical
  // (same sizes and residency), so the nest has at most 3^4 distinct tiles.
  enum LoopAxis : std::size_t { kChannels, kRows, kCols, kSlices };
  const std::array<LoopAxis, 4> order = t.channels_outer
                                            ? std::array{kChannels, kRows, kCols, kSlices}
                                            : std::array{kRows, kCols, kChannels, kSlices};
  const std::array<int64_t, 4> counts = {t.n_blocks, t.row_blocks, t.col_blocks, t.k_blocks};
  std::array<int64_t, 4> at{};
  auto level = [&](auto& self, std::size_t depth, Seq& out) -> void {
    const LoopAxis axis = order[depth];
    const int64_t count = counts[axis];
    std::vector<std::pair<int64_t, int64_t>> runs = {{0, 1}};  // (block, repeat)
    if (count > 2) runs.emplace_back(1, count - 2);
    if (count > 1) runs.emplace_back(count - 1, 1);
    for (const auto& [block, repeat] : runs) {
      at[axis] = block;
      if (depth + 1 == order.size()) {
        out.add_tile(cost(conv_tile(t, 0, at[kChannels], at[kRows], at[kCols], at[kSlices])),
                     repeat);
      } else if (repeat == 1) {
        self(self, depth + 1, out);  // a single block: its tiles in line
      } else {
        Seq run;
        self(self, depth + 1, run);
        out.add_seq(std::move(run), repeat);
      }
    }
  };
  Seq group;
  level(level, 0, group);
  Seq root;
  root.add_seq(std::move(group), op.count);
  const PipelineResult r = run_pipeline(root);

  const int64_t output_bytes = plan_mul(plan_mul(op.count, o.m), plan_mul(o.n, m.samples));
  finish(p, r, exchange(p, output_bytes, d, m, mode), m, core);

  const BufferBudget b = buffer_budget(core.sram);
  p.buffers = buffers_json(b, t.input_tile_bytes, t.weight_tile_bytes, t.output_tile_bytes,
                           r.tiles > 1, p.peak_sram_bytes);
  json tiling;
  tiling["kind"] = gemm ? "gemm" : "conv";
  tiling["split"] = split;
  tiling["cores"] = cores;
  tiling["slices"] = split == "channels" || split == "rows"
                         ? slices_json(cores, slice_extent, extent)
                         : json::array();
  tiling["groups"] = op.count;
  tiling["n_tile"] = t.n_tile;
  tiling["n_blocks"] = t.n_blocks;
  tiling["row_tile"] = t.row_tile;
  tiling["row_blocks"] = t.row_blocks;
  tiling["col_tile"] = t.col_tile;
  tiling["col_blocks"] = t.col_blocks;
  tiling["k_tile"] = t.k_tile;
  tiling["k_blocks"] = t.k_blocks;
  tiling["accumulator_bytes"] = t.k_blocks > 1 ? 4 : 1;
  tiling["loop_order"] = t.channels_outer ? "channels_outer" : "rows_outer";
  tiling["tile_count"] = r.tiles;
  tiling["tiles_listed"] = std::min(r.tiles, kListedTiles);
  tiling["shared_operand"] = cores > 1 ? (shared_weights ? "weight" : "input") : "none";
  p.tiling = std::move(tiling);

  p.tiles = json::array();
  p.transfers = json::array();
  int64_t index = 0;
  json core_list = json::array();
  for (int64_t c = 0; c < cores; ++c) core_list.push_back(c);
  for_each_conv_tile(t, [&](const ConvTile& tile) {
    const TileCost c = cost(tile);
    json e;
    e["index"] = index;
    e["group"] = tile.group;
    e["cores"] = core_list;
    e["out_channels"] = range(tile.n0, tile.n1);
    e["out_rows"] = range(tile.r0, tile.r1);
    e["out_cols"] = range(tile.c0, tile.c1);
    e["in_rows"] = range(tile.in_r0, tile.in_r1);
    e["in_cols"] = range(tile.in_c0, tile.in_c1);
    e["in_channels"] = range(tile.k0, tile.k1);
    e["input_bytes"] = tile.input_bytes;
    e["weight_bytes"] = tile.weight_bytes;
    e["output_bytes"] = tile.store_output ? tile.output_bytes : 0;
    e["compute_cycles"] = c.compute;
    p.tiles.push_back(std::move(e));
    p.transfers.push_back({{"tile", index},
                           {"direction", "load"},
                           {"input_bytes", tile.load_input ? tile.input_bytes : 0},
                           {"weight_bytes", tile.load_weight ? tile.weight_bytes : 0},
                           {"bytes", c.load_bytes},
                           {"cycles", c.load}});
    p.transfers.push_back(
        {{"tile", index}, {"direction", "store"}, {"bytes", c.store_bytes}, {"cycles", c.store}});
    return ++index < kListedTiles;
  });
  return p;
}

OpPlan plan_vector(const OpDesc& op, const DeviceSpec& d, CoreMode mode, const ModeShape& m) {
  if (op.elements < 1) {
    throw std::invalid_argument("elements " + plan_str(op.elements) + " must be at least 1");
  }
  if (op.weight_bytes < 0 || op.input_bytes < 0 || op.output_bytes < 0) {
    throw std::invalid_argument("byte counts must not be negative");
  }
  // Bytes per output element; a count left 0 means int8, one byte each.
  const int64_t in_pe = op.input_bytes > 0 ? ceil_div(op.input_bytes, op.elements) : 1;
  const int64_t out_pe = op.output_bytes > 0 ? ceil_div(op.output_bytes, op.elements) : 1;
  OpPlan p;
  p.node = op.node;
  p.op_type = op.op_type;

  int64_t cores = 1;
  int64_t slice = op.elements;
  std::string split = "none";
  if (mode == CoreMode::kMulti) {
    cores = 4;
    split = "batch";
  } else if (global_mode(mode) && op.kind == OpDesc::Kind::kVector) {
    slice = ceil_div(op.elements, std::min(m.unit_cores, op.elements));
    cores = ceil_div(op.elements, slice);
    if (cores > 1) split = "elements";
  }
  p.cores = cores;
  json tiling;
  tiling["split"] = split;
  tiling["cores"] = cores;
  tiling["slices"] = split == "elements" ? slices_json(cores, slice, op.elements) : json::array();

  if (op.kind == OpDesc::Kind::kMove) {
    // DRAM to DRAM through the DMA engine: read, then write; no compute.
    TileCost c;
    c.load_bytes = plan_mul(plan_mul(in_pe, op.elements), cores);
    c.store_bytes = plan_mul(plan_mul(out_pe, op.elements), cores);
    c.load = m.dram.cycles(c.load_bytes);
    c.store = m.dram.cycles(c.store_bytes);
    Seq root;
    root.add_tile(c, 1);
    const PipelineResult r = run_pipeline(root);
    finish(p, r, exchange(p, 0, d, m, mode), m, d.core);
    p.buffers = json::array();
    tiling["kind"] = "move";
    tiling["tile_count"] = 1;
    tiling["tiles_listed"] = 1;
    p.tiling = std::move(tiling);
    json core_list = json::array();
    for (int64_t k = 0; k < cores; ++k) core_list.push_back(k);
    p.tiles = json::array({{{"index", 0},
                            {"cores", core_list},
                            {"elements", range(0, op.elements)},
                            {"input_bytes", c.load_bytes},
                            {"output_bytes", c.store_bytes},
                            {"compute_cycles", 0}}});
    p.transfers = json::array({{{"tile", 0},
                                {"direction", "dram_to_dram"},
                                {"read_bytes", c.load_bytes},
                                {"write_bytes", c.store_bytes},
                                {"cycles", plan_add(c.load, c.store)}}});
    return p;
  }

  const int64_t lanes = d.core.array.cols;
  const VectorTiling v = tile_vector(slice, in_pe, out_pe, op.weight_bytes, lanes, d.core.sram);
  auto cost = [&](int64_t elements, bool table) {
    TileCost c;
    // The table is loaded once and broadcast; every core loads its own data.
    c.load_bytes =
        plan_add(table ? op.weight_bytes : 0, plan_mul(cores, plan_mul(elements, in_pe)));
    c.store_bytes = plan_mul(cores, plan_mul(elements, out_pe));
    c.load = m.dram.cycles(c.load_bytes);
    c.compute = ceil_div(elements, lanes);
    c.store = m.dram.cycles(c.store_bytes);
    return c;
  };
  const int64_t last = slice - (v.tiles - 1) * v.tile_elements;
  Seq root;
  root.add_tile(cost(v.tiles > 1 ? v.tile_elements : last, true), 1);
  if (v.tiles > 2) root.add_tile(cost(v.tile_elements, false), v.tiles - 2);
  if (v.tiles > 1) root.add_tile(cost(last, false), 1);
  const PipelineResult r = run_pipeline(root);
  const int64_t output_bytes = plan_mul(plan_mul(out_pe, op.elements), m.samples);
  finish(p, r, exchange(p, output_bytes, d, m, mode), m, d.core);

  const BufferBudget b = buffer_budget(d.core.sram);
  p.buffers = buffers_json(b, plan_mul(v.tile_elements, in_pe), 0,
                           plan_mul(v.tile_elements, out_pe), v.tiles > 1, p.peak_sram_bytes);
  if (op.weight_bytes > 0) {  // the table: one buffer, resident, after buffer set 0
    p.buffers.push_back(
        {{"name", "table"},
         {"sram", b.unified ? "unified" : "weight"},
         {"offset", b.unified ? plan_mul(v.tile_elements, plan_add(in_pe, out_pe)) : 0},
         {"bytes", op.weight_bytes}});
    p.peak_sram_bytes = plan_add(p.peak_sram_bytes, op.weight_bytes);
  }
  tiling["kind"] = "vector";
  tiling["lanes"] = lanes;
  tiling["tile_elements"] = v.tile_elements;
  tiling["tile_count"] = r.tiles;
  tiling["tiles_listed"] = std::min(r.tiles, kListedTiles);
  p.tiling = std::move(tiling);
  p.tiles = json::array();
  p.transfers = json::array();
  json core_list = json::array();
  for (int64_t k = 0; k < cores; ++k) core_list.push_back(k);
  for (int64_t i = 0; i < std::min(v.tiles, kListedTiles); ++i) {
    const int64_t e0 = i * v.tile_elements;
    const int64_t e1 = std::min(slice, e0 + v.tile_elements);
    const TileCost c = cost(e1 - e0, i == 0);
    p.tiles.push_back({{"index", i},
                       {"cores", core_list},
                       {"elements", range(e0, e1)},
                       {"input_bytes", plan_mul(e1 - e0, in_pe)},
                       {"output_bytes", plan_mul(e1 - e0, out_pe)},
                       {"compute_cycles", c.compute}});
    p.transfers.push_back(
        {{"tile", i}, {"direction", "load"}, {"bytes", c.load_bytes}, {"cycles", c.load}});
    p.transfers.push_back(
        {{"tile", i}, {"direction", "store"}, {"bytes", c.store_bytes}, {"cycles", c.store}});
  }
  return p;
}

}  // namespace

GraphPlan plan_graph(const std::vector<OpDesc>& ops, const DeviceSpec& device, CoreMode mode) {
  validate_device(device);
  const ModeShape m = mode_shape(device, mode);
  GraphPlan g;
  g.device = device.name;
  g.mode = mode;
  g.unit_cores = m.unit_cores;
  g.units = m.units;
  g.samples = m.samples;
  g.ops.reserve(ops.size());
  for (const OpDesc& op : ops) {
    try {
      switch (op.kind) {
        case OpDesc::Kind::kConv:
        case OpDesc::Kind::kGemm:
          g.ops.push_back(plan_conv(op, device, mode, m));
          break;
        case OpDesc::Kind::kVector:
        case OpDesc::Kind::kMove:
          g.ops.push_back(plan_vector(op, device, mode, m));
          break;
        default:
          throw std::invalid_argument("unknown op kind " + plan_str(static_cast<int>(op.kind)));
      }
    } catch (const std::exception& e) {
      throw std::invalid_argument("failed to plan op '" + op.node + "' (" + op.op_type + ", " +
                                  kind_name(op.kind) + ") on device '" + device.name +
                                  "': " + e.what());
    }
    const OpPlan& p = g.ops.back();
    g.total_cycles = plan_add(g.total_cycles, p.total_cycles);
    g.dram_read_bytes = plan_add(g.dram_read_bytes, p.dram_read_bytes);
    g.dram_write_bytes = plan_add(g.dram_write_bytes, p.dram_write_bytes);
    g.macs = plan_add(g.macs, p.macs);
    g.peak_sram_bytes = std::max(g.peak_sram_bytes, p.peak_sram_bytes);
  }
  g.latency_ms = static_cast<double>(g.total_cycles) / (device.clock_mhz * 1000.0);
  if (g.total_cycles > 0) {
    g.throughput_ips = static_cast<double>(m.units * m.samples) / (g.latency_ms / 1000.0);
    const double pes = static_cast<double>(device.core.array.rows * device.core.array.cols);
    g.mac_utilization = static_cast<double>(g.macs) / (static_cast<double>(g.total_cycles) * pes *
                                                       static_cast<double>(m.unit_cores));
  }
  return g;
}

json to_json(const GraphPlan& plan) {
  json j;
  j["device"] = plan.device;
  j["core_mode"] = core_mode_name(plan.mode);
  j["summary"] = {{"total_cycles", plan.total_cycles},
                  {"latency_ms", plan.latency_ms},
                  {"throughput_ips", plan.throughput_ips},
                  {"macs", plan.macs},
                  {"mac_utilization", plan.mac_utilization},
                  {"dram_read_bytes", plan.dram_read_bytes},
                  {"dram_write_bytes", plan.dram_write_bytes},
                  {"peak_sram_bytes", plan.peak_sram_bytes},
                  {"unit_cores", plan.unit_cores},
                  {"units", plan.units},
                  {"samples_per_unit", plan.samples}};
  json ops = json::array();
  for (const OpPlan& p : plan.ops) {
    json o;
    o["node"] = p.node;
    o["op_type"] = p.op_type;
    o["cores"] = p.cores;
    o["tiling"] = p.tiling;
    o["tile_count"] = p.tile_count;
    o["tiles"] = p.tiles;
    o["buffers"] = p.buffers;
    o["transfers"] = p.transfers;
    o["cycles"] = {{"compute", p.compute_cycles},   {"stall", p.stall_cycles},
                   {"sync", p.sync_cycles},         {"total", p.total_cycles},
                   {"roofline", p.roofline_cycles}, {"dma", p.dma_cycles}};
    o["macs"] = p.macs;
    o["mac_utilization"] = p.mac_utilization;
    o["dram_read_bytes"] = p.dram_read_bytes;
    o["dram_write_bytes"] = p.dram_write_bytes;
    o["link_bytes"] = p.link_bytes;
    o["peak_sram_bytes"] = p.peak_sram_bytes;
    ops.push_back(std::move(o));
  }
  j["ops"] = std::move(ops);
  return j;
}

const char* kind_name(OpDesc::Kind k) {
  switch (k) {
    case OpDesc::Kind::kConv:
      return "conv";
    case OpDesc::Kind::kGemm:
      return "gemm";
    case OpDesc::Kind::kVector:
      return "vector";
    case OpDesc::Kind::kMove:
      return "move";
  }
  return "?";
}

}  // namespace eulernpu::npu_sim
