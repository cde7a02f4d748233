#include "engine_core.hpp"

#include <stdexcept>

#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::fpga_board {

int64_t tile_cycles(const EngineSize& size, int64_t steps, bool last) {
  return steps + kMacLatency + (last ? size.pp + kRequantLatency : 0);
}

EngineCore::EngineCore(const EngineSize& size)
    : size_(size), acc_(static_cast<size_t>(size.pp * size.ocp), 0) {}

int64_t EngineCore::run(const TileJob& job, std::span<int8_t> y) {
  const int64_t pp = size_.pp, icp = size_.icp, ocp = size_.ocp;
  // The layer loops build every job; a wrong one is a bug, not bad input.
  if (job.steps < 1 || job.steps > size_.depth ||
      job.x.size() != static_cast<size_t>(job.steps * pp * icp) ||
      job.w.size() != static_cast<size_t>(job.steps * ocp * icp) ||
      job.bias.size() != static_cast<size_t>(ocp) || job.mult.size() != static_cast<size_t>(ocp) ||
      job.shift.size() != static_cast<size_t>(ocp) ||
      (job.last && y.size() != static_cast<size_t>(pp * ocp))) {
    throw std::logic_error("fpga_board engine: tile job does not match the engine size");
  }
  if (job.first) {
    for (int64_t p = 0; p < pp; ++p) {
      for (int64_t o = 0; o < ocp; ++o) {
        acc_[static_cast<size_t>(p * ocp + o)] = static_cast<uint32_t>(job.bias[o]);
      }
    }
  }
  for (int64_t s = 0; s < job.steps; ++s) {
    const int8_t* xs = job.x.data() + s * pp * icp;
    const int8_t* ws = job.w.data() + s * ocp * icp;
    for (int64_t p = 0; p < pp; ++p) {
      for (int64_t o = 0; o < ocp; ++o) {
        // Each product fits in 16 bits and a step's ICP of them in 32; the
        // running sum wraps modulo 2^32 like the RTL's 32-bit adders.
        int32_t dot = 0;
        for (int64_t i = 0; i < icp; ++i) {
          dot += (int32_t{xs[p * icp + i]} - job.x_zero_point) * int32_t{ws[o * icp + i]};
        }
        acc_[static_cast<size_t>(p * ocp + o)] += static_cast<uint32_t>(dot);
      }
    }
  }
  if (job.last) {
    for (int64_t p = 0; p < pp; ++p) {
      for (int64_t o = 0; o < ocp; ++o) {
        const auto acc = static_cast<int32_t>(acc_[static_cast<size_t>(p * ocp + o)]);
        y[static_cast<size_t>(p * ocp + o)] = static_cast<int8_t>(sdk::qmath::requantize(
            acc, {job.mult[o], job.shift[o]}, job.y_zero_point, job.qmin, job.qmax));
      }
    }
  }
  return tile_cycles(size_, job.steps, job.last);
}

}  // namespace eulernpu::fpga_board
