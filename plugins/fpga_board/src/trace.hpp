// The PL trace: the engine tiles a run executed, with their results and
// cycle counts, for co-simulating the RTL (docs/backends/fpga_board.md,
// "Co-simulation"). `run --backend-option pl_trace=FILE` writes it;
// tests/fpga/engine_tb.cpp replays it on rtl/engine_core.v under Verilator.
//
// Little-endian. Header: "ENPTRACE", then int32 version (1), PP, ICP, OCP,
// depth. Then per tile: int32 layer (the engine op's index in the run),
// int32 steps, uint8 first, uint8 last, two zero bytes, int32 x_zero_point,
// y_zero_point, qmin, qmax, int64 cycles, then steps×PP×ICP input bytes,
// steps×OCP×ICP weight bytes, OCP int32 each of Bias, M and S, and, when
// last, PP×OCP output bytes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "engine_core.hpp"

namespace eulernpu::fpga_board {

inline constexpr char kTraceMagic[8] = {'E', 'N', 'P', 'T', 'R', 'A', 'C', 'E'};
inline constexpr int32_t kTraceVersion = 1;

// Writes to `path` + ".tmp" and renames on commit(), so a failed run
// leaves no partial trace. At most `tiles_per_layer` tiles of each layer.
class TraceWriter {
 public:
  TraceWriter(const std::string& path, const EngineSize& size, int64_t tiles_per_layer);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void begin_layer() {
    ++layer_;
    written_ = 0;
  }
  void tile(const TileJob& job, std::span<const int8_t> y, int64_t cycles);
  void commit();

 private:
  void put(const void* data, size_t bytes);
  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t per_layer_;
  int32_t layer_ = -1;
  int64_t written_ = 0;
};

}  // namespace eulernpu::fpga_board
