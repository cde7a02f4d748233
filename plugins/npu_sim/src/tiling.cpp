#include "tiling.hpp"

#include "checked_int.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace eulernpu::npu_sim {
namespace {

using std::int64_t;

int64_t mul(int64_t a, int64_t b) { return checked_mul(a, b, "failed to tile op", "a size"); }
int64_t add(int64_t a, int64_t b) { return checked_add(a, b, "failed to tile op", "a size"); }
int64_t round_up(int64_t a, int64_t b) { return mul(ceil_div(a, b), b); }

std::string str(int64_t v) { return std::to_string(v); }

// The most output rows of n channels a buffer set holds, 0 if not even one.
int64_t max_rows(const BufferBudget& b, const ConvLayer& l, const OperandMatrices& o,
                 int64_t weight_bytes, int64_t n) {
  const int64_t row_in = mul(l.ifmap_w, l.channels);  // one ifmap row
  const int64_t row_out = mul(o.ofmap_w, n);          // one output row
  // r output rows read (r - 1)·stride + filter_h ifmap rows.
  if (!b.unified) {
    if (weight_bytes > b.weight) return 0;
    const int64_t in_rows = b.input / row_in;
    if (in_rows < l.filter_h) return 0;
    return std::min((in_rows - l.filter_h) / l.stride_h + 1, b.output / row_out);
  }
  // (r - 1)·s·row_in + R·row_in + weight + r·row_out <= total
  const int64_t fixed = add(add(mul(l.filter_h - l.stride_h, row_in), weight_bytes), 0);
  if (fixed >= b.total) return 0;
  return (b.total - fixed) / add(mul(l.stride_h, row_in), row_out);
}

struct Candidate {
  int64_t n_tile = 0, n_blocks = 0, row_tile = 0, row_blocks = 0;
  bool channels_outer = true;
  int64_t compute = 0;  // Σ demand lines
  int64_t bytes = 0;
  int64_t tiles = 0;
};

bool better(const Candidate& a, const Candidate& b) {
  return std::tie(a.bytes, a.compute, a.tiles) < std::tie(b.bytes, b.compute, b.tiles);
}

}  // namespace

BufferBudget buffer_budget(const SramSpec& sram) {
  BufferBudget b;
  b.unified = sram.unified();
  if (b.unified) {
    b.total = sram.unified_bytes / 2;
  } else {
    b.input = sram.input_bytes / 2;
    b.weight = sram.weight_bytes / 2;
    b.output = sram.output_bytes / 2;
  }
  return b;
}

ConvTile conv_tile(const ConvTiling& t, int64_t group, int64_t n_block, int64_t row_block) {
  const ConvLayer& l = t.layer;
  const OperandMatrices& o = t.operands;
  ConvTile c;
  c.group = group;
  c.n_block = n_block;
  c.row_block = row_block;
  c.n0 = n_block * t.n_tile;
  c.n1 = std::min(o.n, c.n0 + t.n_tile);
  c.r0 = row_block * t.row_tile;
  c.r1 = std::min(o.ofmap_h, c.r0 + t.row_tile);
  const int64_t n = c.n1 - c.n0;
  const int64_t rows = c.r1 - c.r0;
  c.in_r0 = c.r0 * l.stride_h;
  c.in_r1 = std::min(l.ifmap_h, (c.r1 - 1) * l.stride_h + l.filter_h);
  c.input_bytes = mul(mul(c.in_r1 - c.in_r0, l.ifmap_w), l.channels);
  c.weight_bytes = mul(n, add(o.k, t.extra_per_channel));
  c.output_bytes = mul(mul(rows, o.ofmap_w), n);
  if (t.channels_outer) {
    c.load_weight = row_block == 0;
    c.load_input = t.row_blocks > 1 || n_block == 0;
  } else {
    c.load_input = n_block == 0;
    c.load_weight = t.n_blocks > 1 || row_block == 0;
  }
  c.sub_layer = l;
  const int64_t in_rows = c.in_r1 - c.in_r0;
  c.sub_layer.ifmap_h = in_rows >= l.filter_h ? in_rows : (rows - 1) * l.stride_h + l.filter_h;
  c.sub_layer.num_filters = n;
  return c;
}

void for_each_conv_tile(const ConvTiling& t, const std::function<bool(const ConvTile&)>& visit) {
  const int64_t outer = t.channels_outer ? t.n_blocks : t.row_blocks;
  const int64_t inner = t.channels_outer ? t.row_blocks : t.n_blocks;
  for (int64_t g = 0; g < t.groups; ++g) {
    for (int64_t i = 0; i < outer; ++i) {
      for (int64_t j = 0; j < inner; ++j) {
        const ConvTile c = t.channels_outer ? conv_tile(t, g, i, j) : conv_tile(t, g, j, i);
        if (!visit(c)) return;
      }
    }
  }
}

ConvTiling tile_conv(const ConvLayer& layer, int64_t groups, int64_t extra_per_channel,
                     const CoreSpec& core) {
  if (groups < 1)
    throw std::invalid_argument("failed to tile op with count " + str(groups) +
                                ": must be at least 1");
  if (extra_per_channel < 0) {
    throw std::invalid_argument("failed to tile op with " + str(extra_per_channel) +
                                " extra weight bytes per channel: must not be negative");
  }
  ConvTiling t;
  t.layer = layer;
  t.operands = operand_matrices(layer);  // validates the layer
  t.groups = groups;
  t.extra_per_channel = extra_per_channel;
  const OperandMatrices& o = t.operands;
  const BufferBudget b = buffer_budget(core.sram);
  const int64_t per_channel = add(o.k, extra_per_channel);
  const int64_t row_in = mul(layer.ifmap_w, layer.channels);

  // Stall-free compute of the tile kinds a candidate has, cached by shape.
  std::map<std::pair<int64_t, int64_t>, int64_t> lines_cache;
  auto lines = [&](int64_t rows, int64_t n) {
    auto [it, fresh] = lines_cache.try_emplace({rows, n}, 0);
    if (fresh) {
      ConvLayer sub = layer;
      sub.ifmap_h = (rows - 1) * layer.stride_h + layer.filter_h;
      sub.num_filters = n;
      // Demand lines, not SCALE-Sim's index of the last one: its -1 would
      // otherwise reward cutting a layer into more tiles.
      it->second = simulate_compute(core.array, sub).cycles + 1;
    }
    return it->second;
  };

  Candidate best;
  bool found = false;
  const int64_t cols = core.array.cols;
  for (int64_t n = o.n;;) {
    const int64_t weight = mul(n, per_channel);
    const int64_t r_max = max_rows(b, layer, o, weight, n);
    if (r_max >= 1) {
      Candidate c;
      c.n_tile = n;
      c.n_blocks = ceil_div(o.n, n);
      c.row_blocks = ceil_div(o.ofmap_h, std::min(r_max, o.ofmap_h));
      c.row_tile = ceil_div(o.ofmap_h, c.row_blocks);
      c.tiles = mul(c.n_blocks, c.row_blocks);
      if (c.tiles == 1) {  // the whole layer fits: one tile, SCALE-Sim's cycles
        best = c;
        found = true;
        break;
      }
      const int64_t n_last = o.n - (c.n_blocks - 1) * n;
      const int64_t r_last = o.ofmap_h - (c.row_blocks - 1) * c.row_tile;
      int64_t compute = 0;
      for (const auto& [rows, rc] :
           {std::pair{c.row_tile, c.row_blocks - 1}, std::pair{r_last, int64_t{1}}}) {
        compute = add(compute, mul(mul(lines(rows, n), c.n_blocks - 1), rc));
        compute = add(compute, mul(lines(rows, n_last), rc));
      }
      compute = mul(compute, groups);
      // Input bytes of one pass over the row blocks, halos included.
      const int64_t last_in_rows =
          std::min(layer.ifmap_h, (o.ofmap_h - 1) * layer.stride_h + layer.filter_h) -
          (o.ofmap_h - r_last) * layer.stride_h;
      const int64_t pass_in =
          mul(add(mul(c.row_blocks - 1, (c.row_tile - 1) * layer.stride_h + layer.filter_h),
                  last_in_rows),
              row_in);
      const int64_t weights = mul(o.n, per_channel);
      const int64_t outputs = mul(o.m, o.n);
      for (const bool channels_outer : {true, false}) {
        Candidate d = c;
        d.channels_outer = channels_outer;
        const int64_t in = channels_outer && c.row_blocks > 1 ? mul(pass_in, c.n_blocks) : pass_in;
        const int64_t w = !channels_outer && c.n_blocks > 1 ? mul(weights, c.row_blocks) : weights;
        d.bytes = mul(add(add(in, w), outputs), groups);
        d.compute = compute;
        if (!found || better(d, best)) {
          best = d;
          found = true;
        }
      }
    }
    if (n == 1) break;
    const int64_t next = n > cols ? round_up(ceil_div(n, 2), cols) : ceil_div(n, 2);
    n = std::min(next, n - 1);
  }
  if (!found) {
    const int64_t in_need = mul(layer.filter_h, row_in);
    throw std::invalid_argument(
        "failed to tile op: one output row of one channel needs " + str(in_need) +
        " input bytes (" + str(layer.filter_h) + " ifmap rows of " + str(row_in) + ") and " +
        str(per_channel) + " weight bytes, more than one buffer set holds (" +
        (b.unified ? str(b.total) + " bytes, half the unified SRAM"
                   : str(b.input) + " input, " + str(b.weight) + " weight, " + str(b.output) +
                         " output bytes, half of each SRAM") +
        ")");
  }
  t.n_tile = best.n_tile;
  t.n_blocks = best.n_blocks;
  t.row_tile = best.row_tile;
  t.row_blocks = best.row_blocks;
  t.channels_outer = best.channels_outer;
  const ConvTile first = conv_tile(t, 0, 0, 0);  // the largest tile of every operand
  t.input_tile_bytes = first.input_bytes;
  t.weight_tile_bytes = first.weight_bytes;
  t.output_tile_bytes = first.output_bytes;
  return t;
}

VectorTiling tile_vector(int64_t elements, int64_t input_per_element, int64_t output_per_element,
                         int64_t table_bytes, int64_t lanes, const SramSpec& sram) {
  if (elements < 1 || input_per_element < 0 || output_per_element < 0 || table_bytes < 0 ||
      lanes < 1) {
    throw std::invalid_argument("failed to tile vector op with " + str(elements) + " elements, " +
                                str(input_per_element) + "/" + str(output_per_element) +
                                " bytes in/out per element, " + str(table_bytes) +
                                " table bytes on " + str(lanes) + " lanes: sizes must be positive");
  }
  VectorTiling v;
  v.elements = elements;
  v.input_per_element = input_per_element;
  v.output_per_element = output_per_element;
  v.table_bytes = table_bytes;
  v.lanes = lanes;
  const BufferBudget b = buffer_budget(sram);
  int64_t fit = std::numeric_limits<int64_t>::max();
  bool table_fits = true;
  if (b.unified) {
    table_fits = table_bytes < b.total;
    const int64_t per = add(input_per_element, output_per_element);
    if (per > 0) fit = (b.total - table_bytes) / per;
  } else {
    table_fits = table_bytes <= b.weight;
    if (input_per_element > 0) fit = std::min(fit, b.input / input_per_element);
    if (output_per_element > 0) fit = std::min(fit, b.output / output_per_element);
  }
  if (!table_fits || fit < 1) {
    throw std::invalid_argument("failed to tile vector op: one element needs " +
                                str(input_per_element) + " input and " + str(output_per_element) +
                                " output bytes beside a " + str(table_bytes) +
                                "-byte table, more than one buffer set holds");
  }
  if (fit >= elements) {
    v.tile_elements = elements;
  } else {
    v.tile_elements = fit >= lanes ? fit / lanes * lanes : fit;
  }
  v.tiles = ceil_div(elements, v.tile_elements);
  return v;
}

}  // namespace eulernpu::npu_sim
