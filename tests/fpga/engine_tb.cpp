// Replays a PL trace (plugins/fpga_board/src/trace.hpp) on the RTL engine
// core under Verilator: every tile's buffers and parameters are loaded as
// the DMA would, `start` is pulsed, the rising edges until `done` are
// counted, and the output buffer is read back. Each tile must take the
// cycles the C++ model counted and, when it requantizes, give its bytes.
//
//   engine_tb TRACE        (built by tests/fpga/rtl_cosim.py for the
//                           trace's PP, ICP, OCP and depth)
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "Vengine_core.h"
#include "verilated.h"

namespace {

struct Reader {
  std::ifstream in;
  bool get(void* p, size_t n) {
    in.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    return static_cast<size_t>(in.gcount()) == n;
  }
  int32_t i32() {
    int32_t v = 0;
    if (!get(&v, sizeof v)) throw std::runtime_error("truncated trace");
    return v;
  }
};

// Verilator packs a port wider than 64 bits into 32-bit words.
template <typename Port>
void set_bytes(Port& port, const int8_t* bytes, size_t n) {
  static_assert(sizeof(port[0]) == 4);
  std::memset(&port[0], 0, sizeof(Port));
  std::memcpy(&port[0], bytes, n);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: engine_tb TRACE\n");
    return 2;
  }
  Reader r;
  r.in.open(argv[1], std::ios::binary);
  char magic[8];
  if (!r.in || !r.get(magic, 8) || std::memcmp(magic, "ENPTRACE", 8) != 0 || r.i32() != 1) {
    std::fprintf(stderr, "%s: not a version-1 PL trace\n", argv[1]);
    return 2;
  }
  const int pp = r.i32(), icp = r.i32(), ocp = r.i32(), depth = r.i32();
  if (pp != PP || icp != ICP || ocp != OCP || depth != DEPTH) {
    std::fprintf(stderr, "trace is for %dx%dx%d depth %d, this bench for %dx%dx%d depth %d\n", pp,
                 icp, ocp, depth, PP, ICP, OCP, DEPTH);
    return 2;
  }
  auto ctx = std::make_unique<VerilatedContext>();
  auto dut = std::make_unique<Vengine_core>(ctx.get());
  auto edge = [&] {
    dut->clk = 0;
    dut->eval();
    dut->clk = 1;
    dut->eval();
  };
  dut->rst = 1;
  dut->start = 0;
  dut->xbuf_we = 0;
  dut->wbuf_we = 0;
  edge();
  dut->rst = 0;
  edge();

  int64_t tiles = 0, outputs = 0, failures = 0, cycles_total = 0;
  std::vector<int8_t> x, w, y;
  for (;;) {
    int32_t head[2];
    if (!r.get(head, sizeof head)) break;  // end of trace
    const int32_t layer = head[0], steps = head[1];
    uint8_t flags[4];
    int32_t q[4];
    int64_t want_cycles = 0;
    if (steps < 1 || steps > DEPTH || !r.get(flags, 4) || !r.get(q, sizeof q) ||
        !r.get(&want_cycles, sizeof want_cycles)) {
      std::fprintf(stderr, "tile %lld: malformed record\n", static_cast<long long>(tiles));
      return 2;
    }
    x.resize(static_cast<size_t>(steps) * PP * ICP);
    w.resize(static_cast<size_t>(steps) * OCP * ICP);
    int32_t bias[OCP], mult[OCP], shift[OCP];
    if (!r.get(x.data(), x.size()) || !r.get(w.data(), w.size()) || !r.get(bias, sizeof bias) ||
        !r.get(mult, sizeof mult) || !r.get(shift, sizeof shift)) {
      std::fprintf(stderr, "tile %lld: truncated\n", static_cast<long long>(tiles));
      return 2;
    }
    const bool last = flags[1] != 0;
    y.resize(static_cast<size_t>(PP) * OCP);
    if (last && !r.get(y.data(), y.size())) {
      std::fprintf(stderr, "tile %lld: truncated output\n", static_cast<long long>(tiles));
      return 2;
    }
    // The DMA side: one word per step into each buffer.
    for (int s = 0; s < steps; ++s) {
      dut->xbuf_we = 1;
      dut->xbuf_addr = static_cast<uint32_t>(s);
      set_bytes(dut->xbuf_data, x.data() + static_cast<size_t>(s) * PP * ICP, PP * ICP);
      dut->wbuf_we = 1;
      dut->wbuf_addr = static_cast<uint32_t>(s);
      set_bytes(dut->wbuf_data, w.data() + static_cast<size_t>(s) * OCP * ICP, OCP * ICP);
      edge();
    }
    dut->xbuf_we = 0;
    dut->wbuf_we = 0;
    std::memset(&dut->bias[0], 0, sizeof(dut->bias));
    std::memset(&dut->mult[0], 0, sizeof(dut->mult));
    std::memcpy(&dut->bias[0], bias, sizeof bias);
    std::memcpy(&dut->mult[0], mult, sizeof mult);
    // S: 6 bits per lane.
    std::vector<uint32_t> sh((OCP * 6 + 31) / 32, 0);
    for (int o = 0; o < OCP; ++o) {
      for (int b = 0; b < 6; ++b) {
        if ((shift[o] >> b) & 1) sh[(o * 6 + b) / 32] |= 1u << ((o * 6 + b) % 32);
      }
    }
#if OCP * 6 <= 64  // a 64-bit port, else an array of 32-bit words
    dut->shift = sh[0] | (sh.size() > 1 ? static_cast<uint64_t>(sh[1]) << 32 : 0);
#else
    std::memcpy(&dut->shift[0], sh.data(), sh.size() * 4);
#endif
    dut->x_zp = static_cast<uint8_t>(q[0]);
    dut->y_zp = static_cast<uint8_t>(q[1]);
    dut->qmin = static_cast<uint8_t>(q[2]);
    dut->qmax = static_cast<uint8_t>(q[3]);
    dut->steps = static_cast<uint32_t>(steps);
    dut->first = flags[0];
    dut->last = flags[1];
    dut->start = 1;
    edge();  // the edge that samples start
    dut->start = 0;
    int64_t cycles = 0;
    while (!dut->done) {
      edge();
      if (++cycles > int64_t{DEPTH} + PP + 64) break;
    }
    cycles_total += cycles;
    if (cycles != want_cycles) {
      ++failures;
      std::fprintf(stderr, "layer %d tile %lld: %lld cycles, the model says %lld\n", layer,
                   static_cast<long long>(tiles), static_cast<long long>(cycles),
                   static_cast<long long>(want_cycles));
    }
    if (last) {
      for (int p = 0; p < PP; ++p) {
        dut->obuf_addr = static_cast<uint8_t>(p);
        dut->eval();
        for (int o = 0; o < OCP; ++o) {
          const auto got =
              static_cast<int8_t>((reinterpret_cast<const uint8_t*>(&dut->obuf_data))[o]);
          const int8_t want = y[static_cast<size_t>(p * OCP + o)];
          if (got != want && failures < 20) {
            std::fprintf(stderr, "layer %d tile %lld pixel %d lane %d: RTL %d, model %d\n", layer,
                         static_cast<long long>(tiles), p, o, got, want);
          }
          failures += got != want;
        }
      }
      ++outputs;
    }
    ++tiles;
  }
  dut->final();
  std::printf("%lld tiles (%lld requantized), %lld cycles: %s\n", static_cast<long long>(tiles),
              static_cast<long long>(outputs), static_cast<long long>(cycles_total),
              failures == 0 ? "RTL matches the model" : "MISMATCH");
  return failures == 0 && tiles > 0 ? 0 : 1;
}
