#include "tiling.hpp"

#include "checked_int.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace eulernpu::npu_sim {
namespace {

using std::int64_t;

int64_t tile_mul(int64_t a, int64_t b) { return checked_mul(a, b, "failed to tile op", "a size"); }
int64_t tile_add(int64_t a, int64_t b) { return checked_add(a, b, "failed to tile op", "a size"); }
int64_t round_up(int64_t a, int64_t b) { return tile_mul(ceil_div(a, b), b); }

std::string tile_str(int64_t v) { return std::to_string(v); }

// `count` blocks of `tile` along an extent, the last possibly shorter.
struct Blocks {
  int64_t tile = 0, count = 0;
};

// The fewest blocks of at most `max_tile`, then the smallest tile giving
// that many: blocks differ by as little as the extent allows.
Blocks balance(int64_t extent, int64_t max_tile) {
  Blocks b;
  b.count = ceil_div(extent, std::min(max_tile, extent));
  b.tile = ceil_div(extent, b.count);
  b.count = ceil_div(extent, b.tile);
  return b;
}

// One axis of the ifmap (rows or columns): `out` outputs, each reading
// `filter` inputs from `stride` apart, from an ifmap `in` wide.
struct Axis {
  int64_t out = 0, in = 0, filter = 0, stride = 0;
  // Inputs read by the outputs [o0, o1): halo included, clipped at the edge
  // (the last window may run past it: SCALE-Sim's ceil()).
  int64_t span(int64_t o0, int64_t o1) const {
    return std::min(in, (o1 - 1) * stride + filter) - o0 * stride;
  }
  // Σ span over the blocks of `tile`.
  int64_t read(int64_t tile, int64_t blocks) const {
    return (blocks - 1) * span(0, tile) + span((blocks - 1) * tile, out);
  }
};

// The most output rows of `cols` columns, n filters and k input channels a
// buffer set holds beside `weight` bytes, with `acc` bytes per output
// element; 0 if not even one.
int64_t max_rows(const BufferBudget& b, const Axis& rows, const Axis& columns, int64_t cols,
                 int64_t k, int64_t n, int64_t acc, int64_t weight) {
  const int64_t row_in = tile_mul(columns.span(0, cols), k);  // one ifmap row of the tile
  const int64_t row_out = tile_mul(tile_mul(cols, n), acc);   // one output row
  const int64_t all_in = rows.span(0, rows.out);              // ifmap rows all output rows read
  if (!b.unified) {
    if (weight > b.weight) return 0;
    const int64_t in_rows = b.input / row_in;
    int64_t r = rows.out;
    if (in_rows < all_in) r = in_rows < rows.filter ? 0 : (in_rows - rows.filter) / rows.stride + 1;
    return std::min(r, b.output / row_out);
  }
  if (tile_add(tile_add(tile_mul(all_in, row_in), weight), tile_mul(rows.out, row_out)) <= b.total)
    return rows.out;
  // (r - 1)·s·row_in + R·row_in + weight + r·row_out <= total
  const int64_t fixed = tile_add(tile_mul(rows.filter - rows.stride, row_in), weight);
  if (fixed >= b.total) return 0;
  return (b.total - fixed) / tile_add(tile_mul(rows.stride, row_in), row_out);
}

// The next smaller candidate of a halving sequence: ceil(v / 2), at most v - 1.
int64_t halve(int64_t v) { return std::min(ceil_div(v, 2), v - 1); }

// A GEMM as SCALE-Sim loads it (ifmap M × K, filter 1 × K, 1 channel) is
// tiled as the 1 × 1 conv over an M × 1 ifmap with K channels: the same
// operand matrices, hence the same cycles, and K becomes a channel axis
// that slices like any conv's input channels.
ConvLayer tiling_layer(const ConvLayer& l) {
  if (l.filter_h == 1 && l.channels == 1 && l.filter_w == l.ifmap_w) {
    return ConvLayer{l.ifmap_h, 1, 1, 1, l.filter_w, l.num_filters, l.stride_h, 1};
  }
  return l;
}

struct Candidate {
  int64_t n_tile = 0, n_blocks = 0, row_tile = 0, row_blocks = 0;
  int64_t col_tile = 0, col_blocks = 0, k_tile = 0, k_blocks = 0;
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

ConvTile conv_tile(const ConvTiling& t, int64_t group, int64_t n_block, int64_t row_block,
                   int64_t col_block, int64_t k_block) {
  const ConvLayer& l = t.layer;
  const OperandMatrices& o = t.operands;
  ConvTile c;
  c.group = group;
  c.n_block = n_block;
  c.row_block = row_block;
  c.col_block = col_block;
  c.k_block = k_block;
  c.n0 = n_block * t.n_tile;
  c.n1 = std::min(o.n, c.n0 + t.n_tile);
  c.r0 = row_block * t.row_tile;
  c.r1 = std::min(o.ofmap_h, c.r0 + t.row_tile);
  c.c0 = col_block * t.col_tile;
  c.c1 = std::min(o.ofmap_w, c.c0 + t.col_tile);
  c.k0 = k_block * t.k_tile;
  c.k1 = std::min(l.channels, c.k0 + t.k_tile);
  const int64_t n = c.n1 - c.n0;
  const int64_t rows = c.r1 - c.r0;
  const int64_t cols = c.c1 - c.c0;
  const int64_t k = c.k1 - c.k0;
  c.in_r0 = c.r0 * l.stride_h;
  c.in_r1 = std::min(l.ifmap_h, (c.r1 - 1) * l.stride_h + l.filter_h);
  c.in_c0 = c.c0 * l.stride_w;
  c.in_c1 = std::min(l.ifmap_w, (c.c1 - 1) * l.stride_w + l.filter_w);
  const bool last_slice = k_block == t.k_blocks - 1;
  c.input_bytes = tile_mul(tile_mul(c.in_r1 - c.in_r0, c.in_c1 - c.in_c0), k);
  c.weight_bytes = tile_mul(n, tile_add(tile_mul(tile_mul(l.filter_h, l.filter_w), k),
                                        last_slice ? t.extra_per_channel : 0));
  c.output_bytes = tile_mul(tile_mul(rows, cols), n);
  c.output_buffer_bytes = t.k_blocks > 1 ? tile_mul(c.output_bytes, 4) : c.output_bytes;
  c.store_output = last_slice;
  const int64_t spatial = row_block * t.col_blocks + col_block;
  if (t.k_blocks > 1) {  // every slice brings other input channels and weights
    c.load_input = c.load_weight = true;
  } else if (t.channels_outer) {
    c.load_weight = spatial == 0;
    c.load_input = t.spatial_blocks() > 1 || n_block == 0;
  } else {
    c.load_input = n_block == 0;
    c.load_weight = t.n_blocks > 1 || spatial == 0;
  }
  c.sub_layer = l;
  c.sub_layer.ifmap_h = (rows - 1) * l.stride_h + l.filter_h;
  c.sub_layer.ifmap_w = (cols - 1) * l.stride_w + l.filter_w;
  c.sub_layer.channels = k;
  c.sub_layer.num_filters = n;
  return c;
}

void for_each_conv_tile(const ConvTiling& t, const std::function<bool(const ConvTile&)>& visit) {
  const int64_t spatial = t.spatial_blocks();
  const int64_t outer = t.channels_outer ? t.n_blocks : spatial;
  const int64_t inner = t.channels_outer ? spatial : t.n_blocks;
  for (int64_t g = 0; g < t.groups; ++g) {
    for (int64_t i = 0; i < outer; ++i) {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t n_block = t.channels_outer ? i : j;
        const int64_t s = t.channels_outer ? j : i;
        for (int64_t kb = 0; kb < t.k_blocks; ++kb) {
          if (!visit(conv_tile(t, g, n_block, s / t.col_blocks, s % t.col_blocks, kb))) return;
        }
      }
    }
  }
}

ConvTiling tile_conv(const ConvLayer& layer, int64_t groups, int64_t extra_per_channel,
                     const CoreSpec& core) {
  if (groups < 1)
    throw std::invalid_argument("failed to tile op with count " + tile_str(groups) +
                                ": must be at least 1");
  if (extra_per_channel < 0) {
    throw std::invalid_argument("failed to tile op with " + tile_str(extra_per_channel) +
                                " extra weight bytes per channel: must not be negative");
  }
  operand_matrices(layer);  // validates the layer as given
  ConvTiling t;
  t.layer = tiling_layer(layer);
  t.operands = operand_matrices(t.layer);
  t.groups = groups;
  t.extra_per_channel = extra_per_channel;
  const ConvLayer& l = t.layer;
  const OperandMatrices& o = t.operands;
  const BufferBudget b = buffer_budget(core.sram);
  const int64_t window = tile_mul(l.filter_h, l.filter_w);  // weight bytes per filter and channel
  const Axis rows{o.ofmap_h, l.ifmap_h, l.filter_h, l.stride_h};
  const Axis columns{o.ofmap_w, l.ifmap_w, l.filter_w, l.stride_w};

  // Stall-free compute of a tile shape, cached: a candidate has at most 16
  // shapes (full or last block on each of four axes).
  std::map<std::array<int64_t, 4>, int64_t> lines_cache;
  auto lines = [&](int64_t r, int64_t c, int64_t n, int64_t k) {
    auto [it, fresh] = lines_cache.try_emplace({r, c, n, k}, 0);
    if (fresh) {
      ConvLayer sub = l;
      sub.ifmap_h = (r - 1) * l.stride_h + l.filter_h;
      sub.ifmap_w = (c - 1) * l.stride_w + l.filter_w;
      sub.channels = k;
      sub.num_filters = n;
      // Demand lines, not SCALE-Sim's index of the last one: its -1 would
      // otherwise reward cutting a layer into more tiles.
      it->second = simulate_compute(core.array, sub).cycles + 1;
    }
    return it->second;
  };
  // (size, count) of the full blocks and the last one along an axis.
  auto kinds = [](int64_t extent, const Blocks& bl) {
    return std::array<std::pair<int64_t, int64_t>, 2>{
        std::pair{bl.tile, bl.count - 1}, std::pair{extent - (bl.count - 1) * bl.tile, int64_t{1}}};
  };

  const int64_t weights = tile_mul(o.n, tile_add(o.k, extra_per_channel));
  const int64_t outputs = tile_mul(o.m, o.n);
  Candidate best;
  bool found = false;
  bool whole = false;
  const int64_t array_cols = core.array.cols;
  for (int64_t n = o.n; !whole;) {
    const Blocks nb = balance(o.n, n);
    for (int64_t kk = l.channels; !whole;) {
      const Blocks kb = balance(l.channels, kk);
      const int64_t acc = kb.count > 1 ? 4 : 1;  // int32 partial sums while K is sliced
      const int64_t weight =
          tile_mul(nb.tile, tile_add(tile_mul(window, kb.tile), extra_per_channel));
      for (int64_t cols = o.ofmap_w; !whole;) {
        const Blocks cb = balance(o.ofmap_w, cols);
        const int64_t r_max = max_rows(b, rows, columns, cb.tile, kb.tile, nb.tile, acc, weight);
        if (r_max >= 1) {
          const Blocks rb = balance(o.ofmap_h, r_max);
          Candidate c;
          c.n_tile = nb.tile;
          c.n_blocks = nb.count;
          c.row_tile = rb.tile;
          c.row_blocks = rb.count;
          c.col_tile = cb.tile;
          c.col_blocks = cb.count;
          c.k_tile = kb.tile;
          c.k_blocks = kb.count;
          const int64_t spatial = tile_mul(rb.count, cb.count);
          c.tiles = tile_mul(tile_mul(nb.count, spatial), kb.count);
          if (c.tiles == 1) {  // the whole layer fits: one tile, SCALE-Sim's cycles
            best = c;
            found = whole = true;
            break;
          }
          // Σ demand lines over the tile shapes; only needed (and so only
          // computed) when the candidate ties or beats the best on bytes.
          int64_t compute = -1;
          auto lines_sum = [&] {
            int64_t sum = 0;
            for (const auto& [r, rn] : kinds(o.ofmap_h, rb)) {
              for (const auto& [w, wn] : kinds(o.ofmap_w, cb)) {
                for (const auto& [f, fn] : kinds(o.n, nb)) {
                  for (const auto& [k, kn] : kinds(l.channels, kb)) {
                    const int64_t count = rn * wn * fn * kn;
                    if (count > 0) sum = tile_add(sum, tile_mul(lines(r, w, f, k), count));
                  }
                }
              }
            }
            return tile_mul(sum, groups);
          };
          // Input bytes of one pass over the spatial blocks, halos included.
          const int64_t pass_in = tile_mul(
              tile_mul(rows.read(rb.tile, rb.count), columns.read(cb.tile, cb.count)), l.channels);
          for (const bool channels_outer : {true, false}) {
            if (kb.count > 1 && !channels_outer) break;  // nothing resident: the orders tie
            Candidate d = c;
            d.channels_outer = channels_outer;
            const bool reload_in = kb.count > 1 || (channels_outer && spatial > 1);
            const bool reload_w = kb.count > 1 || (!channels_outer && nb.count > 1);
            const int64_t in = reload_in ? tile_mul(pass_in, nb.count) : pass_in;
            const int64_t w = reload_w ? tile_mul(weights, spatial) : weights;
            d.bytes = tile_mul(tile_add(tile_add(in, w), outputs), groups);
            if (found && d.bytes > best.bytes) continue;
            if (compute < 0) compute = lines_sum();
            d.compute = compute;
            if (!found || better(d, best)) {
              best = d;
              found = true;
            }
          }
          // Narrower column tiles would only add halo and tiles.
          if (rb.count == 1 && cb.count == 1) break;
        }
        if (cols == 1) break;
        cols = halve(cols);
      }
      if (kk == 1) break;
      kk = halve(kk);
    }
    if (n == 1) break;
    const int64_t next = n > array_cols ? round_up(ceil_div(n, 2), array_cols) : ceil_div(n, 2);
    n = std::min(next, n - 1);
  }
  if (!found) {
    const int64_t acc = l.channels > 1 ? 4 : 1;
    throw std::invalid_argument(
        "failed to tile op: one output pixel of one channel over one input channel needs " +
        tile_str(window) + " input bytes (a " + tile_str(l.filter_h) + "x" + tile_str(l.filter_w) +
        " window), " + tile_str(tile_add(window, extra_per_channel)) + " weight bytes and " +
        tile_str(acc) + " output bytes, more than one buffer set holds (" +
        (b.unified ? tile_str(b.total) + " bytes, half the unified SRAM"
                   : tile_str(b.input) + " input, " + tile_str(b.weight) + " weight, " +
                         tile_str(b.output) + " output bytes, half of each SRAM") +
        ")");
  }
  t.n_tile = best.n_tile;
  t.n_blocks = best.n_blocks;
  t.row_tile = best.row_tile;
  t.row_blocks = best.row_blocks;
  t.col_tile = best.col_tile;
  t.col_blocks = best.col_blocks;
  t.k_tile = best.k_tile;
  t.k_blocks = best.k_blocks;
  t.channels_outer = best.channels_outer;
  // The first tile is the largest of every operand but the weights, whose
  // last K slice adds the per-channel extra bytes.
  const ConvTile first = conv_tile(t, 0, 0, 0, 0, 0);
  const ConvTile last_slice = conv_tile(t, 0, 0, 0, 0, t.k_blocks - 1);
  t.input_tile_bytes = first.input_bytes;
  t.weight_tile_bytes = std::max(first.weight_bytes, last_slice.weight_bytes);
  t.output_tile_bytes = first.output_buffer_bytes;
  return t;
}

VectorTiling tile_vector(int64_t elements, int64_t input_per_element, int64_t output_per_element,
                         int64_t table_bytes, int64_t lanes, const SramSpec& sram) {
  if (elements < 1 || input_per_element < 0 || output_per_element < 0 || table_bytes < 0 ||
      lanes < 1) {
    throw std::invalid_argument("failed to tile vector op with " + tile_str(elements) +
                                " elements, " + tile_str(input_per_element) + "/" +
                                tile_str(output_per_element) + " bytes in/out per element, " +
                                tile_str(table_bytes) + " table bytes on " + tile_str(lanes) +
                                " lanes: sizes must be positive");
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
    const int64_t per = tile_add(input_per_element, output_per_element);
    if (per > 0) fit = (b.total - table_bytes) / per;
  } else {
    table_fits = table_bytes <= b.weight;
    if (input_per_element > 0) fit = std::min(fit, b.input / input_per_element);
    if (output_per_element > 0) fit = std::min(fit, b.output / output_per_element);
  }
  if (!table_fits || fit < 1) {
    throw std::invalid_argument(
        "failed to tile vector op: one element needs " + tile_str(input_per_element) +
        " input and " + tile_str(output_per_element) + " output bytes beside a " +
        tile_str(table_bytes) + "-byte table, more than one buffer set holds");
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
