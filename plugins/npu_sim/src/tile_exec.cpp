#include "tile_exec.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "eulernpu/kernels/conv.hpp"
#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "eulernpu/sdk/json_value.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::npu_sim {
namespace {

using nlohmann::json;

[[noreturn]] void corrupt(const std::string& why) {
  sdk::errors::artifact_corrupt("plan.json: " + why, "npu_sim");
}

int64_t field(const json& tiling, const char* key, const std::string& node) {
  const auto it = tiling.find(key);
  if (it == tiling.end() || !it->is_number_integer()) {
    corrupt("op '" + node + "' has no integer tiling." + key);
  }
  return it->get<int64_t>();
}

// Blocks of `tile` over [0, extent): every index in exactly one block,
// none empty, as tile_conv balances them.
void check_blocks(int64_t tile, int64_t blocks, int64_t extent, const std::string& what,
                  const std::string& node) {
  if (tile <= 0 || blocks <= 0 || tile * blocks < extent || (blocks - 1) * tile >= extent) {
    corrupt("op '" + node + "': " + std::to_string(blocks) + " " + what + " blocks of " +
            std::to_string(tile) + " do not cover its " + std::to_string(extent) + " " + what);
  }
}

// One core's share of a group: output channels [n0, n1) × rows [r0, r1).
struct Slice {
  int64_t n0, n1, r0, r1;
};

std::vector<Slice> core_slices(const json& tiling, int64_t n, int64_t rows,
                               const std::string& node) {
  const std::string split = sdk::value_or(tiling, "split", std::string());
  if (split != "channels" && split != "rows") return {{0, n, 0, rows}};
  const int64_t extent = split == "channels" ? n : rows;
  const json& slices = tiling.contains("slices") ? tiling["slices"] : json::array();
  std::vector<Slice> out;
  int64_t next = 0;
  for (const json& s : slices) {
    const json range = s.is_object() && s.contains("range") ? s["range"] : json();
    if (!range.is_array() || range.size() != 2 || !range[0].is_number_integer() ||
        !range[1].is_number_integer() || range[0].get<int64_t>() != next ||
        range[1].get<int64_t>() <= next) {
      corrupt("op '" + node + "': the cores' slices do not tile its " + split);
    }
    next = range[1].get<int64_t>();
    out.push_back(split == "channels" ? Slice{range[0].get<int64_t>(), next, 0, rows}
                                      : Slice{0, n, range[0].get<int64_t>(), next});
  }
  if (next != extent) corrupt("op '" + node + "': the cores' slices do not cover its " + split);
  return out;
}

// What a whole-K conv tile needs of its op.
struct TileGemm {
  const kit::Buffer& x;
  const int8_t* w;
  const int32_t *bias, *mult, *shift;
  int8_t x_zp;
  int32_t y_zp, qmin, qmax;
  int64_t b, g, group, n, c, h, width, kh, kw, sh, sw, pt, pl, oh, ow;
};

struct TileScratch {
  std::vector<int8_t> cols, out;
  std::vector<sdk::qmath::FixedMultiplier> m;
};

// Output channels [n0, n0+tn) × rows [r0, r0+tr) × columns [c0, c0+tc):
// the tile's im2col (padding taps = x_zero_point; the reference kernels'
// im2col_box) through qgemm_int8, then
// the real outputs stored.
void run_whole_k_tile(const TileGemm& t, int64_t n0, int64_t tn, int64_t r0, int64_t tr, int64_t c0,
                      int64_t tc, int8_t* y, TileScratch& s) {
  const int64_t depth = t.c * t.kh * t.kw, positions = tr * tc;
  s.cols.resize(static_cast<size_t>(depth * positions));
  kernels::ConvGeometry g;
  g.in = {1, t.h, t.width};
  g.kernel = {1, t.kh, t.kw};
  g.stride = {1, t.sh, t.sw};
  g.pad = {0, t.pt, t.pl};
  kernels::im2col_box(t.x.as<int8_t>() + (t.b * t.group + t.g) * t.c * t.h * t.width, g, t.c,
                      {0, r0, c0}, {1, tr, tc}, t.x_zp, s.cols.data());
  const int64_t oc0 = t.g * t.n + n0;
  s.m.resize(static_cast<size_t>(tn));
  for (int64_t o = 0; o < tn; ++o) {
    s.m[static_cast<size_t>(o)] = {t.mult[oc0 + o], t.shift[oc0 + o]};
  }
  s.out.resize(static_cast<size_t>(tn * positions));
  kernels::qgemm_int8(kernels::QGemmShape{tn, depth, positions}, t.w + oc0 * depth, s.cols.data(),
                      t.bias + oc0, s.m.data(),
                      kernels::QGemmOutput{t.x_zp, t.y_zp, t.qmin, t.qmax}, s.out.data());
  for (int64_t o = 0; o < tn; ++o) {
    int8_t* dst = y + (t.b * t.group * t.n + oc0 + o) * t.oh * t.ow;
    for (int64_t r = 0; r < std::min(tr, t.oh - r0); ++r) {
      for (int64_t q = 0; q < std::min(tc, t.ow - c0); ++q) {
        dst[(r0 + r) * t.ow + c0 + q] = s.out[static_cast<size_t>((o * tr + r) * tc + q)];
      }
    }
  }
}

// QConv (2-D, no dilation: the ops graph_ops plans as convs) over the
// planned tiles. Each tile copies its input rows and columns (halo
// included, padding taps = x_zero_point) and its weight slice into tile
// buffers, as DMA fills SRAM, and accumulates int32 partial sums over the
// K slices; the last slice adds the bias, requantizes and stores.
void run_conv_tiles(const json& tiling, const std::string& node, const kit::KernelContext& ctx) {
  const kit::Buffer &xb = ctx.inputs[0], &wb = ctx.inputs[1];
  const kit::Buffer& yb = ctx.outputs[0];
  if (xb.shape.size() != 4 || wb.shape.size() != 4 || yb.shape.size() != 4) {
    corrupt("op '" + node + "' is planned as a 2-D conv but its tensors are not 4-D");
  }
  const int64_t group = std::max<int64_t>(ctx.attr_int("group", 1), 1);
  const int64_t batch = xb.shape[0], h = xb.shape[2], w = xb.shape[3];
  const int64_t n = yb.shape[1] / group, c = xb.shape[1] / group;
  const int64_t oh = yb.shape[2], ow = yb.shape[3];
  const int64_t kh = wb.shape[2], kw = wb.shape[3];
  const std::vector<int64_t> strides = ctx.attr_ints("strides", {1, 1});
  const std::vector<int64_t> pads = ctx.attr_ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || pads.size() != 4) corrupt("op '" + node + "' is not a 2-D conv");
  const int64_t sh = strides[0], sw = strides[1], pt = pads[0], pl = pads[1];
  if (sh <= 0 || sw <= 0) corrupt("op '" + node + "' has a non-positive stride");
  // The planner tiles SCALE-Sim's output extent, ceil((padded - R) / s) + 1
  // (systolic.cpp): one row or column more than the real output when the
  // last window runs past the padded edge. Tiles cover that extent; only
  // the real outputs are stored.
  const int64_t ph = (h + pads[0] + pads[2] - kh + 2 * sh - 1) / sh;
  const int64_t pw = (w + pads[1] + pads[3] - kw + 2 * sw - 1) / sw;
  if (ph < oh || pw < ow) corrupt("op '" + node + "' does not match its planned output");

  if (field(tiling, "groups", node) != batch * group) {
    corrupt("op '" + node + "': its tiling has " + std::to_string(field(tiling, "groups", node)) +
            " groups, the op " + std::to_string(batch * group));
  }
  const int64_t n_tile = field(tiling, "n_tile", node), n_blocks = field(tiling, "n_blocks", node);
  const int64_t row_tile = field(tiling, "row_tile", node);
  const int64_t row_blocks = field(tiling, "row_blocks", node);
  const int64_t col_tile = field(tiling, "col_tile", node);
  const int64_t col_blocks = field(tiling, "col_blocks", node);
  const int64_t k_tile = field(tiling, "k_tile", node), k_blocks = field(tiling, "k_blocks", node);
  const std::vector<Slice> slices = core_slices(tiling, n, ph, node);
  for (const Slice& s : slices) {
    check_blocks(n_tile, n_blocks, s.n1 - s.n0, "output channels", node);
    check_blocks(row_tile, row_blocks, s.r1 - s.r0, "output rows", node);
  }
  check_blocks(col_tile, col_blocks, pw, "output columns", node);
  check_blocks(k_tile, k_blocks, c, "input channels", node);

  const auto* x = xb.as<int8_t>();
  const auto* wt = wb.as<int8_t>();
  const auto* bias = ctx.inputs[2].as<int32_t>();
  const auto* mult = ctx.inputs[3].as<int32_t>();
  const auto* shift = ctx.inputs[4].as<int32_t>();
  auto* y = yb.as<int8_t>();
  const auto x_zp = static_cast<int8_t>(ctx.attr_int("x_zero_point", 0));
  const auto y_zp = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  const auto qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  const auto qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));

  std::vector<int8_t> in_tile, w_tile;
  std::vector<int32_t> acc;
  TileScratch scratch;
  for (int64_t gi = 0; gi < batch * group; ++gi) {
    const int64_t b = gi / group, g = gi % group;
    for (const Slice& s : slices) {
      for (int64_t nb = 0; nb < n_blocks; ++nb) {
        const int64_t n0 = s.n0 + nb * n_tile, n1 = std::min(s.n1, n0 + n_tile);
        for (int64_t rb = 0; rb < row_blocks; ++rb) {
          const int64_t r0 = s.r0 + rb * row_tile, r1 = std::min(s.r1, r0 + row_tile);
          for (int64_t cb = 0; cb < col_blocks; ++cb) {
            const int64_t c0 = cb * col_tile, c1 = std::min(pw, c0 + col_tile);
            const int64_t tn = n1 - n0, tr = r1 - r0, tc = c1 - c0;
            // Rows and columns of the padded ifmap the tile reads.
            const int64_t ir0 = r0 * sh, irs = (tr - 1) * sh + kh;
            const int64_t ic0 = c0 * sw, ics = (tc - 1) * sw + kw;
            if (k_blocks == 1) {
              // A tile over every input channel is one int8 GEMM: its input
              // and weights fit the SRAM whole, so the MACs run as cpu_ref's
              // (VNNI where the CPU has it) and requantize in the same step.
              run_whole_k_tile(
                  TileGemm{xb, wt, bias, mult, shift, x_zp, y_zp, qmin, qmax, b,  g,  group,
                           n,  c,  h,    w,    kh,    kw,   sh,   sw,   pt,   pl, oh, ow},
                  n0, tn, r0, tr, c0, tc, y, scratch);
              continue;
            }
            acc.assign(static_cast<size_t>(tn * tr * tc), 0);
            for (int64_t kb = 0; kb < k_blocks; ++kb) {
              const int64_t k0 = kb * k_tile, k1 = std::min(c, k0 + k_tile), tk = k1 - k0;
              in_tile.assign(static_cast<size_t>(tk * irs * ics), x_zp);
              for (int64_t k = 0; k < tk; ++k) {
                const int8_t* plane = x + ((b * group + g) * c + k0 + k) * h * w;
                for (int64_t i = 0; i < irs; ++i) {
                  const int64_t yy = ir0 + i - pt;
                  if (yy < 0 || yy >= h) continue;
                  for (int64_t j = 0; j < ics; ++j) {
                    const int64_t xx = ic0 + j - pl;
                    if (xx >= 0 && xx < w) {
                      in_tile[static_cast<size_t>((k * irs + i) * ics + j)] = plane[yy * w + xx];
                    }
                  }
                }
              }
              w_tile.resize(static_cast<size_t>(tn * tk * kh * kw));
              for (int64_t o = 0; o < tn; ++o) {
                const int8_t* src = wt + ((g * n + n0 + o) * c + k0) * kh * kw;
                std::copy_n(src, tk * kh * kw, w_tile.begin() + o * tk * kh * kw);
              }
              for (int64_t o = 0; o < tn; ++o) {
                for (int64_t r = 0; r < tr; ++r) {
                  for (int64_t q = 0; q < tc; ++q) {
                    int32_t sum = 0;
                    for (int64_t k = 0; k < tk; ++k) {
                      for (int64_t u = 0; u < kh; ++u) {
                        const int8_t* in = in_tile.data() + (k * irs + r * sh + u) * ics + q * sw;
                        const int8_t* wr = w_tile.data() + ((o * tk + k) * kh + u) * kw;
                        for (int64_t v = 0; v < kw; ++v) {
                          sum += (int32_t{in[v]} - x_zp) * int32_t{wr[v]};
                        }
                      }
                    }
                    acc[static_cast<size_t>((o * tr + r) * tc + q)] += sum;
                  }
                }
              }
            }
            for (int64_t o = 0; o < tn; ++o) {
              const int64_t oc = g * n + n0 + o;
              const sdk::qmath::FixedMultiplier m{mult[oc], shift[oc]};
              int8_t* dst = y + (b * group * n + oc) * oh * ow;
              for (int64_t r = 0; r < std::min(tr, oh - r0); ++r) {
                for (int64_t q = 0; q < std::min(tc, ow - c0); ++q) {
                  const int32_t a = acc[static_cast<size_t>((o * tr + r) * tc + q)] + bias[oc];
                  dst[(r0 + r) * ow + c0 + q] =
                      static_cast<int8_t>(sdk::qmath::requantize(a, m, y_zp, qmin, qmax));
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

std::map<std::string, json> planned_ops(const json& plan) {
  if (!plan.contains("ops") || !plan["ops"].is_array()) corrupt("no op list");
  std::map<std::string, json> out;
  for (const json& op : plan["ops"]) {
    if (!op.is_object() || !op.contains("node") || !op["node"].is_string()) {
      corrupt("an op has no node name");
    }
    out[op["node"].get<std::string>()] = op;
  }
  return out;
}

kit::NodeRunner tiled_runner(std::map<std::string, json> ops) {
  // The runner owns the plan's ops: a session keeps it for many runs.
  return [ops = std::move(ops)](const kit::LoweredNode& node, const kit::KernelContext& ctx) {
    if (node.op != "QConv") return false;
    const auto it = ops.find(node.name);
    if (it == ops.end() || !it->second.contains("tiling")) return false;
    const json& tiling = it->second["tiling"];
    // QConvs planned as their im2col GEMM (dilated, not 2-D) run in the
    // reference kernel.
    if (sdk::value_or(tiling, "kind", std::string()) != "conv") return false;
    run_conv_tiles(tiling, node.name, ctx);
    return true;
  };
}

}  // namespace eulernpu::npu_sim
