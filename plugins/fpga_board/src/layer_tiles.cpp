#include "layer_tiles.hpp"

#include <algorithm>
#include <vector>

namespace eulernpu::fpga_board {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One tile of a layer: a block of output lanes × a block of output pixels ×
// a range of the reduction steps.
struct Tile {
  int64_t batch = 0;
  int64_t group = 0;   // dense: the conv group; depthwise: unused
  int64_t lane0 = 0;   // first output channel of the block (global index)
  int64_t lanes = 0;   // real output channels in the block, <= OCP
  int64_t pixel0 = 0;  // first output pixel (row-major over out_height × out_width)
  int64_t pixels = 0;  // real pixels, <= PP
  int64_t step0 = 0, steps = 0;
  bool first = true, last = true;
};

// A dense (or grouped) layer's reduction: every kernel tap, and at each tap
// the group's input channels ICP at a time. Depthwise: every tap once.
int64_t channel_chunks(const EngineSize& s, const LayerGeometry& g) {
  return g.depthwise() ? 1 : ceil_div(g.channels / g.group, s.icp);
}

int64_t lane_width(const EngineSize& s, const LayerGeometry& g) {
  return g.depthwise() ? std::min(s.icp, s.ocp) : s.ocp;
}

// The engine's loop nest, outermost first: batch, group, output-lane block
// (its weights stay in the weight buffer), pixel block, reduction chunk of
// at most `depth` steps (the accumulators carry between chunks).
template <typename Fn>
void for_each_tile(const EngineSize& s, const LayerGeometry& g, Fn&& fn) {
  const int64_t groups = g.depthwise() ? 1 : g.group;
  const int64_t per_group = g.depthwise() ? g.out_channels : g.out_channels / g.group;
  const int64_t lanes = lane_width(s, g);
  const int64_t pixels = g.out_height * g.out_width;
  const int64_t steps = g.kernel_h * g.kernel_w * channel_chunks(s, g);
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t gr = 0; gr < groups; ++gr) {
      for (int64_t l0 = 0; l0 < per_group; l0 += lanes) {
        for (int64_t p0 = 0; p0 < pixels; p0 += s.pp) {
          for (int64_t s0 = 0; s0 < steps; s0 += s.depth) {
            Tile t;
            t.batch = b;
            t.group = gr;
            t.lane0 = gr * per_group + l0;
            t.lanes = std::min(lanes, per_group - l0);
            t.pixel0 = p0;
            t.pixels = std::min(s.pp, pixels - p0);
            t.step0 = s0;
            t.steps = std::min(s.depth, steps - s0);
            t.first = s0 == 0;
            t.last = s0 + t.steps == steps;
            fn(t);
          }
        }
      }
    }
  }
}

// The input value one multiplier lane reads: channel `c` (global) at tap
// (ky, kx) of output pixel `pixel`; x_zero_point in the padding, which
// contributes 0.
int8_t input_at(const LayerGeometry& g, const int8_t* x, int64_t b, int64_t c, int64_t pixel,
                int64_t ky, int64_t kx) {
  const int64_t oy = pixel / g.out_width, ox = pixel % g.out_width;
  const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
  const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
  if (iy < 0 || iy >= g.height || ix < 0 || ix >= g.width) {
    return static_cast<int8_t>(g.x_zero_point);
  }
  return x[b * g.x_batch + c * g.x_channel + (iy * g.width + ix) * g.x_pixel];
}

}  // namespace

LayerStats layer_schedule(const EngineSize& size, const LayerGeometry& g) {
  LayerStats st;
  st.macs = g.macs();
  for_each_tile(size, g, [&](const Tile& t) {
    ++st.tiles;
    st.cycles += tile_cycles(size, t.steps, t.last);
  });
  return st;
}

LayerStats run_layer(EngineCore& core, const LayerGeometry& g, const int8_t* x, const int8_t* w,
                     const int32_t* bias, const int32_t* mult, const int32_t* shift, int8_t* y,
                     const TileObserver& observe) {
  const EngineSize& s = core.size();
  const int64_t pp = s.pp, icp = s.icp, ocp = s.ocp;
  const int64_t cg = g.channels / g.group;
  const int64_t taps = g.kernel_h * g.kernel_w;
  const int64_t chunks = channel_chunks(s, g);
  const bool dw = g.depthwise();
  std::vector<int8_t> xbuf, wbuf, out(static_cast<size_t>(pp * ocp));
  std::vector<int32_t> b(static_cast<size_t>(ocp)), m(static_cast<size_t>(ocp)),
      sh(static_cast<size_t>(ocp));
  LayerStats st;
  st.macs = g.macs();
  for_each_tile(s, g, [&](const Tile& t) {
    xbuf.assign(static_cast<size_t>(t.steps * pp * icp), static_cast<int8_t>(g.x_zero_point));
    wbuf.assign(static_cast<size_t>(t.steps * ocp * icp), 0);
    for (int64_t si = 0; si < t.steps; ++si) {
      const int64_t step = t.step0 + si, tap = step / chunks, chunk = step % chunks;
      const int64_t ky = tap / g.kernel_w, kx = tap % g.kernel_w;
      int8_t* xs = xbuf.data() + si * pp * icp;
      int8_t* ws = wbuf.data() + si * ocp * icp;
      if (dw) {
        // Lane i reads channel lane0 + i; weight word o has its only
        // non-zero on the diagonal, so output lane o sums channel o alone.
        for (int64_t p = 0; p < t.pixels; ++p) {
          for (int64_t i = 0; i < t.lanes; ++i) {
            xs[p * icp + i] = input_at(g, x, t.batch, t.lane0 + i, t.pixel0 + p, ky, kx);
          }
        }
        for (int64_t o = 0; o < t.lanes; ++o) ws[o * icp + o] = w[(t.lane0 + o) * taps + tap];
        continue;
      }
      const int64_t c0 = chunk * icp, cn = std::min(icp, cg - c0);
      for (int64_t p = 0; p < t.pixels; ++p) {
        for (int64_t i = 0; i < cn; ++i) {
          xs[p * icp + i] = input_at(g, x, t.batch, t.group * cg + c0 + i, t.pixel0 + p, ky, kx);
        }
      }
      for (int64_t o = 0; o < t.lanes; ++o) {
        for (int64_t i = 0; i < cn; ++i) {
          ws[o * icp + i] = w[((t.lane0 + o) * cg + c0 + i) * taps + tap];
        }
      }
    }
    // Lanes past the layer's channels: zero weights, and a multiplier of 0.
    for (int64_t o = 0; o < ocp; ++o) {
      const bool real = o < t.lanes;
      b[static_cast<size_t>(o)] = real ? bias[t.lane0 + o] : 0;
      m[static_cast<size_t>(o)] = real ? mult[t.lane0 + o] : 0;
      sh[static_cast<size_t>(o)] = real ? shift[t.lane0 + o] : 1;
    }
    TileJob job;
    job.steps = t.steps;
    job.first = t.first;
    job.last = t.last;
    job.x_zero_point = g.x_zero_point;
    job.y_zero_point = g.y_zero_point;
    job.qmin = g.qmin;
    job.qmax = g.qmax;
    job.x = xbuf;
    job.w = wbuf;
    job.bias = b;
    job.mult = m;
    job.shift = sh;
    ++st.tiles;
    const int64_t cycles = core.run(job, out);
    st.cycles += cycles;
    if (observe) observe(job, out, cycles);
    if (!t.last) return;
    for (int64_t p = 0; p < t.pixels; ++p) {
      for (int64_t o = 0; o < t.lanes; ++o) {
        y[t.batch * g.y_batch + (t.lane0 + o) * g.y_channel + (t.pixel0 + p) * g.y_pixel] =
            out[static_cast<size_t>(p * ocp + o)];
      }
    }
  });
  return st;
}

}  // namespace eulernpu::fpga_board
