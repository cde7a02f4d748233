// The npu_sim planner: SCALE-Sim's public vectors through plan_graph, the
// closed-form tile pipeline against its expanded sum, stalls against DRAM
// bandwidth, the roofline bound on random layers and a ResNet-50 list,
// tiling invariants, core modes, a case computed by hand, bad input and
// deterministic JSON.
#include "planner.hpp"
#include "scalesim_vectors.hpp"
#include "throw_message.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "pipeline.hpp"
#include "tiling.hpp"

namespace eulernpu::npu_sim {
namespace {

using namespace test;  // the public vectors
using eulernpu::test::message_of;

using std::int64_t;

constexpr double kUnlimited = 0;  // dram_bytes_per_cycle <= 0: no DRAM limit

DeviceSpec device(int64_t rows, int64_t cols, Dataflow df, double bandwidth, int64_t clusters = 1,
                  int64_t cores_per_cluster = 1, int64_t sram = 256 * 1024) {
  DeviceSpec d;
  d.name = "test";
  d.clusters = clusters;
  d.cores_per_cluster = cores_per_cluster;
  d.core.array = SystolicArray{rows, cols, df, 1};
  d.core.sram.input_bytes = d.core.sram.weight_bytes = d.core.sram.output_bytes = sram;
  d.dram_bytes_per_cycle = bandwidth;
  d.clock_mhz = 1000;
  d.sync_cycles = 100;
  d.link_bytes_per_cycle = 64;
  d.core_modes = {"single", "multi", "global4", "global8"};
  return d;
}

// A conv whose pre-padded ifmap gives exactly `out` × `out` outputs under
// SCALE-Sim's ceil(): (out - 1)·stride + filter rows and columns.
OpDesc conv_op(const std::string& name, int64_t out, int64_t k, int64_t c, int64_t f,
               int64_t stride, int64_t count = 1) {
  OpDesc op;
  op.node = name;
  op.op_type = "QConv";
  op.kind = OpDesc::Kind::kConv;
  const int64_t in = (out - 1) * stride + k;
  op.conv = conv(in, in, k, k, c, f, stride);
  op.count = count;
  op.input_bytes = in * in * c * count;
  op.weight_bytes = (k * k * c * f + 9 * f) * count;  // + int32 bias, int32 multiplier, shift
  op.output_bytes = out * out * f * count;
  return op;
}

OpDesc gemm_op(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t count = 1) {
  OpDesc op;
  op.node = name;
  op.op_type = "QGemm";
  op.kind = OpDesc::Kind::kGemm;
  op.gemm = Gemm{m, n, k};
  op.count = count;
  op.input_bytes = m * k * count;
  op.weight_bytes = (k * n + 9 * n) * count;
  op.output_bytes = m * n * count;
  return op;
}

OpDesc vector_op(const std::string& name, int64_t elements, int64_t in_bytes, int64_t table = 0) {
  OpDesc op;
  op.node = name;
  op.op_type = "QAdd";
  op.kind = OpDesc::Kind::kVector;
  op.elements = elements;
  op.input_bytes = in_bytes;
  op.output_bytes = elements;
  op.weight_bytes = table;
  return op;
}

OpDesc move_op(const std::string& name, int64_t elements) {
  OpDesc op;
  op.node = name;
  op.op_type = "Transpose";
  op.kind = OpDesc::Kind::kMove;
  op.elements = elements;
  op.input_bytes = op.output_bytes = elements;
  return op;
}

// ResNet-50 v1.5 at 224 × 224 from its real layer shapes: stride 2 in the
// first 3 × 3 conv of stages 2-4; 1 × 1 stride-2 projections as GEMMs
// (SCALE-Sim rejects a stride larger than the filter).
std::vector<OpDesc> resnet50() {
  std::vector<OpDesc> ops;
  ops.push_back(conv_op("conv1", 112, 7, 3, 64, 2));
  ops.push_back(vector_op("maxpool", 56 * 56 * 64, 112 * 112 * 64));
  const int64_t blocks[] = {3, 4, 6, 3};
  const int64_t widths[] = {64, 128, 256, 512};
  int64_t in_ch = 64;
  int64_t size = 56;
  for (int s = 0; s < 4; ++s) {
    const int64_t w = widths[s];
    for (int64_t b = 0; b < blocks[s]; ++b) {
      std::string name = "s";
      name += std::to_string(s + 1);
      name += "b";
      name += std::to_string(b + 1);
      const int64_t stride = (b == 0 && s > 0) ? 2 : 1;
      const int64_t in_size = size;
      const int64_t out = in_size / stride;
      ops.push_back(conv_op(name + ".conv1", in_size, 1, in_ch, w, 1));
      ops.push_back(conv_op(name + ".conv2", out, 3, w, w, stride));
      ops.push_back(conv_op(name + ".conv3", out, 1, w, 4 * w, 1));
      if (b == 0) {
        if (stride == 1) {
          ops.push_back(conv_op(name + ".proj", out, 1, in_ch, 4 * w, 1));
        } else {
          ops.push_back(gemm_op(name + ".proj", out * out, 4 * w, in_ch));
        }
      }
      ops.push_back(vector_op(name + ".add", out * out * 4 * w, 2 * out * out * 4 * w));
      in_ch = 4 * w;
      size = out;
    }
  }
  ops.push_back(vector_op("avgpool", 2048, 7 * 7 * 2048));
  ops.push_back(move_op("flatten", 2048));
  ops.push_back(gemm_op("fc", 1, 1000, 2048));
  return ops;
}

// --- SCALE-Sim's public vectors: 32×32 array, 256 KB per SRAM ---------------

class PlannerScaleSimTest : public ::testing::TestWithParam<PublicCase> {};

TEST_P(PlannerScaleSimTest, WholeLayerGivesScaleSimCyclesWithoutStalls) {
  const PublicCase& c = GetParam();
  OpDesc op;
  op.node = c.name;
  op.op_type = "QConv";
  op.kind = OpDesc::Kind::kConv;
  op.conv = c.layer;
  const GraphPlan plan =
      plan_graph({op}, device(32, 32, c.dataflow, kUnlimited), CoreMode::kSingle);
  ASSERT_EQ(plan.ops.size(), 1u);
  const OpPlan& p = plan.ops[0];
  EXPECT_EQ(p.tile_count, 1);
  EXPECT_EQ(p.compute_cycles, c.cycles);
  EXPECT_EQ(p.stall_cycles, 0);
  EXPECT_EQ(p.sync_cycles, 0);
  EXPECT_EQ(p.total_cycles, c.cycles);
  EXPECT_EQ(plan.total_cycles, c.cycles);
  EXPECT_EQ(p.macs, simulate_compute(SystolicArray{32, 32, c.dataflow, 1}, c.layer).macs);
}

INSTANTIATE_TEST_SUITE_P(PublicVectors, PlannerScaleSimTest,
                         ::testing::ValuesIn(test::public_cases()),
                         [](const auto& test_case) { return std::string(test_case.param.name); });

// --- The pipeline's closed form against its expanded sum -------------------

// total = load_0 + Σ max(compute_i, load_{i+1} + store_{i-1}) + store_last
int64_t expanded_total(const std::vector<TileCost>& tiles) {
  if (tiles.empty()) return 0;
  int64_t total = tiles.front().load + tiles.back().store;
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const int64_t next = i + 1 < tiles.size() ? tiles[i + 1].load : 0;
    const int64_t prev = i > 0 ? tiles[i - 1].store : 0;
    total += std::max(tiles[i].compute, next + prev);
  }
  return total;
}

void expand(const std::vector<Part>& parts, std::vector<TileCost>& out) {
  for (const Part& p : parts) {
    for (int64_t r = 0; r < p.repeat; ++r) {
      if (p.leaf) {
        out.push_back(p.tile);
      } else {
        expand(p.parts, out);
      }
    }
  }
}

TEST(PipelineTest, ClosedFormMatchesExpandedSequence) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto tile = [&] {
    TileCost t;
    t.load = pick(0, 50);
    t.compute = pick(0, 50);
    t.store = pick(0, 50);
    t.load_bytes = t.load * 3;
    t.store_bytes = t.store * 2;
    return t;
  };
  for (int trial = 0; trial < 300; ++trial) {
    Seq root;
    const int64_t outer = pick(1, 4);
    for (int64_t o = 0; o < outer; ++o) {
      Seq block;
      const int64_t inner = pick(1, 3);
      for (int64_t i = 0; i < inner; ++i) block.add_tile(tile(), pick(1, 4));
      if (pick(0, 1) == 0) {
        Seq nested;
        nested.add_seq(block, pick(1, 3));
        nested.add_tile(tile(), 1);
        root.add_seq(nested, pick(1, 3));
      } else {
        root.add_seq(block, pick(1, 5));
      }
    }
    std::vector<TileCost> flat;
    expand(root.parts, flat);
    const PipelineResult r = run_pipeline(root);
    ASSERT_EQ(r.total, expanded_total(flat)) << "trial " << trial;
    ASSERT_EQ(r.tiles, static_cast<int64_t>(flat.size()));
    int64_t compute = 0, dma = 0, lb = 0, sb = 0;
    for (const TileCost& t : flat) {
      compute += t.compute;
      dma += t.load + t.store;
      lb += t.load_bytes;
      sb += t.store_bytes;
    }
    EXPECT_EQ(r.compute, compute);
    EXPECT_EQ(r.dma, dma);
    EXPECT_EQ(r.load_bytes, lb);
    EXPECT_EQ(r.store_bytes, sb);
    EXPECT_GE(r.total, std::max(compute, dma));
  }
}

TEST(PipelineTest, DmaRateRoundsUpAndUnlimitedIsFree) {
  EXPECT_EQ(DmaRate{8}.cycles(17), 3);
  EXPECT_EQ(DmaRate{8}.cycles(16), 2);
  EXPECT_EQ(DmaRate{0.5}.cycles(3), 6);
  EXPECT_EQ(DmaRate{0}.cycles(1000), 0);
  EXPECT_EQ(DmaRate{-1}.cycles(1000), 0);
  EXPECT_EQ(DmaRate{std::numeric_limits<double>::infinity()}.cycles(1000), 0);
}

// --- A case by hand --------------------------------------------------------

// GEMM M = 64, N = 64, K = 32 on an 8 × 8 os array; 2 KB input, weight and
// output SRAMs, so a buffer set has 1024 bytes of each.
//   The weights (32 · 64 = 2048 B) do not fit: n_tile 64 is out; the next
//   candidate, round_up(32, 8) = 32 channels, is 1024 B. Rows: 1024 / 32 =
//   32 input rows and 1024 / 32 = 32 output rows fit → 2 row blocks of 32.
//   n_tile 16 and 8 move as many bytes and compute as long but have more
//   tiles, so: 2 channel blocks × 2 row blocks, channels outer.
//   Each tile is a GEMM 32 × 32 × 32: folds 4 · 4 = 16, 32 + 8 + 8 - 2 = 46
//   lines each, 16 · 46 - 1 = 735 cycles.
//   Loads: tile 0 and 2 read input + weights 1024 + 1024 B, tiles 1 and 3
//   the input only (their weights are resident). Stores 32 · 32 = 1024 B.
//   At 8 B/cycle: loads 256, 128, 256, 128; stores 128 each.
//   total = 256 + max(735, 128) + max(735, 256 + 128) + max(735, 128 + 128)
//           + max(735, 128) + 128 = 256 + 4 · 735 + 128 = 3324; stall 384.
//   At 1 B/cycle: loads 2048, 1024, 2048, 1024; stores 1024 each:
//   2048 + max(735, 1024) + max(735, 2048 + 1024) + max(735, 1024 + 1024)
//   + max(735, 1024) + 1024 = 10240, the bytes moved: DRAM bound.
TEST(PlannerTest, HandComputedSmallGemm) {
  OpDesc op;
  op.node = "fc";
  op.op_type = "QGemm";
  op.kind = OpDesc::Kind::kGemm;
  op.gemm = Gemm{64, 64, 32};
  op.weight_bytes = 32 * 64;
  DeviceSpec d = device(8, 8, kOs, 8, 1, 1, 2048);
  GraphPlan plan = plan_graph({op}, d, CoreMode::kSingle);
  const OpPlan& p = plan.ops[0];
  EXPECT_EQ(p.tile_count, 4);
  EXPECT_EQ(p.tiling["n_tile"], 32);
  EXPECT_EQ(p.tiling["row_tile"], 32);
  EXPECT_EQ(p.tiling["loop_order"], "channels_outer");
  EXPECT_EQ(p.compute_cycles, 4 * 735);
  EXPECT_EQ(p.total_cycles, 3324);
  EXPECT_EQ(p.stall_cycles, 384);
  EXPECT_EQ(p.dram_read_bytes, 2048 + 1024 + 2048 + 1024);
  EXPECT_EQ(p.dram_write_bytes, 4096);
  EXPECT_EQ(p.macs, 64 * 64 * 32);
  EXPECT_EQ(p.roofline_cycles, 2048);  // max(131072 / 64, 10240 / 8)
  EXPECT_EQ(p.peak_sram_bytes, 6 * 1024);

  d.dram_bytes_per_cycle = 1;
  plan = plan_graph({op}, d, CoreMode::kSingle);
  EXPECT_EQ(plan.ops[0].total_cycles, 10240);
  EXPECT_EQ(plan.ops[0].roofline_cycles, 10240);
}

// 1000 elements of an Add (2 input bytes each) on 32 lanes, 16 B/cycle,
// everything fits: one tile. compute = ceil(1000 / 32) = 32; load 2000 B =
// 125 cycles, store 1000 B = 63 cycles (62.5 rounded up); total =
// 125 + 32 + 63 = 220. A move of 1000 elements: 63 + 63 = 126.
TEST(PlannerTest, HandComputedVectorAndMove) {
  const GraphPlan plan = plan_graph({vector_op("add", 1000, 2000), move_op("t", 1000)},
                                    device(32, 32, kOs, 16), CoreMode::kSingle);
  EXPECT_EQ(plan.ops[0].compute_cycles, 32);
  EXPECT_EQ(plan.ops[0].total_cycles, 220);
  EXPECT_EQ(plan.ops[0].stall_cycles, 188);
  EXPECT_EQ(plan.ops[1].compute_cycles, 0);
  EXPECT_EQ(plan.ops[1].total_cycles, 126);
  EXPECT_EQ(plan.ops[1].peak_sram_bytes, 0);
  EXPECT_EQ(plan.total_cycles, 346);
}

// A conv whose one output row does not fit: ifmap 3 × 18 (pre-padded), 3 × 3
// filter, 8 channels, 8 filters, stride 1 → 1 × 16 outputs; 8 × 8 os array,
// SRAMs 512 / 2048 / 512 B (buffer sets of 256 / 1024 / 256), 8 B/cycle.
//   Weights 8 · (72 + 9) = 648 B fit. The whole row reads 3 · 18 · 8 = 432
//   input bytes > 256. Half a row, 8 output columns, reads columns [0, 10)
//   and [8, 18): 3 · 10 · 8 = 240 B each; DRAM bytes 2 · 240 + 648 + 128 =
//   1256. 4 columns read 4 · 3 · 6 · 8 = 576 input bytes (more halo); K
//   slices (4 channels: 4-byte partial sums, 8 columns) reload the weights
//   per column block; fewer filters reload the input per channel block:
//   all move more bytes. So 2 tiles, channels outer (weights resident).
//   Each tile is M = 8, K = 72, N = 8: one fold of 72 + 8 + 8 - 2 = 86 lines,
//   85 cycles. Loads 240 + 648 = 888 B (111 cycles), then 240 B (30); stores
//   64 B (8). total = 111 + max(85, 30) + max(85, 8) + 8 = 289; stall 119.
TEST(PlannerTest, HandComputedColumnSplit) {
  OpDesc op = conv_op("wide", 1, 3, 8, 8, 1);
  op.conv = conv(3, 18, 3, 3, 8, 8, 1);
  op.input_bytes = 3 * 18 * 8;
  op.output_bytes = 16 * 8;
  DeviceSpec d = device(8, 8, kOs, 8);
  d.core.sram = SramSpec{512, 2048, 512, 0};
  const OpPlan p = plan_graph({op}, d, CoreMode::kSingle).ops[0];
  EXPECT_EQ(p.tile_count, 2);
  EXPECT_EQ(p.tiling["col_tile"], 8);
  EXPECT_EQ(p.tiling["col_blocks"], 2);
  EXPECT_EQ(p.tiling["row_blocks"], 1);
  EXPECT_EQ(p.tiling["n_blocks"], 1);
  EXPECT_EQ(p.tiling["k_blocks"], 1);
  EXPECT_EQ(p.tiling["loop_order"], "channels_outer");
  EXPECT_EQ(p.tiles[1]["out_cols"], nlohmann::json::array({8, 16}));
  EXPECT_EQ(p.tiles[1]["in_cols"], nlohmann::json::array({8, 18}));
  EXPECT_EQ(p.tiles[1]["input_bytes"], 240);
  EXPECT_EQ(p.compute_cycles, 2 * 85);
  EXPECT_EQ(p.total_cycles, 289);
  EXPECT_EQ(p.stall_cycles, 119);
  EXPECT_EQ(p.dram_read_bytes, 888 + 240);
  EXPECT_EQ(p.dram_write_bytes, 128);
  EXPECT_EQ(p.peak_sram_bytes, 2 * (240 + 648 + 64));
}

// A GEMM whose one row's K does not fit: M = 4, N = 8, K = 512, 8 extra
// bytes per channel (weight_bytes 8 · 520); 8 × 8 os array, SRAMs
// 512 / 2048 / 512 B (sets of 256 / 1024 / 256), 8 B/cycle.
//   All 8 filters' weights fit for at most 64 channels (8 · (64 + 8) = 576;
//   128 needs 1088 > 1024), and 4 rows · 64 = 256 input bytes and the
//   4 · 8 int32 partial sums (128 B) fit: 8 K slices of 64, one spatial and
//   one channel block, so every byte moves once: 2048 + 4160 + 32. Slices
//   of 32 move as many bytes but compute 16 · 46 lines > 8 · 78; fewer
//   filters reload the input. Each slice is M = 4, K = 64, N = 8: 78 lines,
//   77 cycles, and loads 256 + 512 = 768 B (96 cycles); the last also loads
//   the 64 extra bytes (832 B, 104) and alone stores the 32 int8 outputs
//   (4). total = 96 + 6 · max(77, 96) + max(77, 104) + 77 + 4 = 857;
//   compute 8 · 77 = 616 (the sum of the slices' cycles), stall 241.
TEST(PlannerTest, HandComputedKSplit) {
  OpDesc op = gemm_op("long_k", 4, 8, 512);
  op.weight_bytes = 8 * (512 + 8);
  DeviceSpec d = device(8, 8, kOs, 8);
  d.core.sram = SramSpec{512, 2048, 512, 0};
  const OpPlan p = plan_graph({op}, d, CoreMode::kSingle).ops[0];
  EXPECT_EQ(p.tile_count, 8);
  EXPECT_EQ(p.tiling["k_tile"], 64);
  EXPECT_EQ(p.tiling["k_blocks"], 8);
  EXPECT_EQ(p.tiling["accumulator_bytes"], 4);
  EXPECT_EQ(p.tiling["n_blocks"], 1);
  EXPECT_EQ(p.tiling["row_blocks"], 1);
  EXPECT_EQ(p.tiles[7]["in_channels"], nlohmann::json::array({448, 512}));
  EXPECT_EQ(p.tiles[7]["weight_bytes"], 576);
  EXPECT_EQ(p.tiles[6]["output_bytes"], 0);
  EXPECT_EQ(p.tiles[7]["output_bytes"], 32);
  EXPECT_EQ(p.compute_cycles, 8 * 77);
  EXPECT_EQ(p.total_cycles, 857);
  EXPECT_EQ(p.stall_cycles, 241);
  EXPECT_EQ(p.dram_read_bytes, 7 * 768 + 832);
  EXPECT_EQ(p.dram_write_bytes, 32);
  EXPECT_EQ(p.peak_sram_bytes, 2 * (256 + 576 + 128));
}

// --- Bandwidth, stalls and the roofline ------------------------------------

TEST(PlannerTest, StallsFallAsBandwidthRisesAndVanishWhenUnlimited) {
  std::vector<OpDesc> ops = resnet50();
  ops.push_back(conv_op("big", 56, 3, 256, 512, 1));  // tiled even at 256 KB
  const double bandwidths[] = {0.25, 1, 2, 4, 8, 16, 32, 64, 256, 4096, kUnlimited};
  for (CoreMode mode :
       {CoreMode::kSingle, CoreMode::kMulti, CoreMode::kGlobal4, CoreMode::kGlobal8}) {
    std::vector<OpPlan> previous;
    for (double bw : bandwidths) {
      const GraphPlan plan = plan_graph(ops, device(32, 32, kOs, bw, 2, 4), mode);
      for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        const OpPlan& p = plan.ops[i];
        if (bw == kUnlimited) {
          EXPECT_EQ(p.stall_cycles, 0) << p.node;
        } else if (bw <= 64) {
          EXPECT_GT(p.stall_cycles, 0) << p.node << " at " << bw;  // the first load is exposed
        }
        if (!previous.empty()) {
          EXPECT_LE(p.stall_cycles, previous[i].stall_cycles) << p.node << " at " << bw;
          EXPECT_LE(p.total_cycles, previous[i].total_cycles) << p.node << " at " << bw;
          EXPECT_EQ(p.compute_cycles, previous[i].compute_cycles) << p.node;
        }
      }
      previous = plan.ops;
    }
  }
}

// The roofline checked from the op's own figures, independently of the
// planner's roofline_cycles: cores × rows × cols MACs and the unit's share
// of DRAM bandwidth per cycle.
void expect_roofline(const GraphPlan& plan, const DeviceSpec& d, const std::string& what) {
  const double pes = static_cast<double>(d.core.array.rows * d.core.array.cols);
  const double share = d.dram_bytes_per_cycle / static_cast<double>(plan.units);
  for (const OpPlan& p : plan.ops) {
    const double mac_bound = static_cast<double>(p.macs) / (pes * static_cast<double>(p.cores));
    const double bytes = static_cast<double>(p.dram_read_bytes + p.dram_write_bytes);
    const double dram_bound = d.dram_bytes_per_cycle > 0 ? bytes / share : 0.0;
    const double total = static_cast<double>(p.total_cycles);
    EXPECT_GE(total, mac_bound) << what << " " << p.node;
    EXPECT_GE(total, dram_bound) << what << " " << p.node;
    EXPECT_GE(p.total_cycles, p.roofline_cycles) << what << " " << p.node;
    EXPECT_EQ(p.total_cycles, p.compute_cycles + p.stall_cycles + p.sync_cycles) << p.node;
    EXPECT_GE(p.stall_cycles, 0) << p.node;
    EXPECT_LE(p.mac_utilization, 1.0) << p.node;
  }
}

// Every output element is stored by exactly one tile, after K slices that
// cover the input channels once in order; every tile fits its buffer set
// and the largest-tile sizes; the tiles' sub-layers have the tile's M, N
// and K, and their MACs sum to the layer's.
void expect_tiling_invariants(const ConvTiling& t, const CoreSpec& core, const std::string& what) {
  const ConvLayer& l = t.layer;
  const OperandMatrices& o = t.operands;
  const BufferBudget b = buffer_budget(core.sram);
  std::vector<int> covered(static_cast<std::size_t>(t.groups * o.n * o.m), 0);
  int64_t count = 0;
  int64_t macs = 0;
  ConvTile previous;
  for_each_conv_tile(t, [&](const ConvTile& tile) {
    ++count;
    if (tile.k_block == 0) {
      EXPECT_EQ(tile.k0, 0) << what;
    } else {  // the next slice of the same outputs
      EXPECT_EQ(tile.k0, previous.k1) << what;
      EXPECT_EQ(std::tie(tile.group, tile.n0, tile.r0, tile.c0),
                std::tie(previous.group, previous.n0, previous.r0, previous.c0))
          << what;
    }
    EXPECT_EQ(tile.store_output, tile.k1 == l.channels) << what;
    if (tile.store_output) {
      for (int64_t n = tile.n0; n < tile.n1; ++n) {
        for (int64_t r = tile.r0; r < tile.r1; ++r) {
          for (int64_t col = tile.c0; col < tile.c1; ++col) {
            ++covered[static_cast<std::size_t>((tile.group * o.n + n) * o.m + r * o.ofmap_w + col)];
          }
        }
      }
    }
    // The input tile holds every ifmap row and column its windows read.
    EXPECT_EQ(tile.in_r0, tile.r0 * l.stride_h) << what;
    EXPECT_EQ(tile.in_r1, std::min(l.ifmap_h, (tile.r1 - 1) * l.stride_h + l.filter_h)) << what;
    EXPECT_EQ(tile.in_c0, tile.c0 * l.stride_w) << what;
    EXPECT_EQ(tile.in_c1, std::min(l.ifmap_w, (tile.c1 - 1) * l.stride_w + l.filter_w)) << what;
    const int64_t acc = t.k_blocks > 1 ? 4 : 1;  // int32 partial sums
    EXPECT_EQ(tile.output_buffer_bytes, tile.output_bytes * acc) << what;
    if (b.unified) {
      EXPECT_LE(tile.input_bytes + tile.weight_bytes + tile.output_buffer_bytes, b.total) << what;
    } else {
      EXPECT_LE(tile.input_bytes, b.input) << what;
      EXPECT_LE(tile.weight_bytes, b.weight) << what;
      EXPECT_LE(tile.output_buffer_bytes, b.output) << what;
    }
    EXPECT_LE(tile.input_bytes, t.input_tile_bytes) << what;
    EXPECT_LE(tile.weight_bytes, t.weight_tile_bytes) << what;
    EXPECT_LE(tile.output_buffer_bytes, t.output_tile_bytes) << what;
    const ComputeResult r = simulate_compute(core.array, tile.sub_layer);
    EXPECT_EQ(r.operands.m, (tile.r1 - tile.r0) * (tile.c1 - tile.c0)) << what;
    EXPECT_EQ(r.operands.n, tile.n1 - tile.n0) << what;
    EXPECT_EQ(r.operands.k, l.filter_h * l.filter_w * (tile.k1 - tile.k0)) << what;
    macs += r.macs;
    previous = tile;
    return true;
  });
  EXPECT_EQ(count, t.groups * t.tiles_per_group()) << what;
  EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](int v) { return v == 1; })) << what;
  EXPECT_EQ(macs, t.groups * o.m * o.n * o.k) << what;
}

TEST(PlannerTest, RooflineHoldsOnEveryResNet50Op) {
  for (CoreMode mode :
       {CoreMode::kSingle, CoreMode::kMulti, CoreMode::kGlobal4, CoreMode::kGlobal8}) {
    for (double bw : {1.0, 16.0, 128.0, kUnlimited}) {
      for (Dataflow df : {kOs, kWs, kIs}) {
        const DeviceSpec d = device(32, 32, df, bw, 2, 4);
        expect_roofline(plan_graph(resnet50(), d, mode), d,
                        std::string(core_mode_name(mode)) + " bw " + std::to_string(bw));
      }
    }
  }
}

// The shipped edge16 device's core: its 56 × 56 × 256 inputs have ifmap rows
// (14 336 B) larger than an input buffer (12 KiB), so they need column or
// K tiling.
DeviceSpec edge16_like(double bandwidth) {
  DeviceSpec d = device(16, 16, kOs, bandwidth);
  d.core.sram = SramSpec{24 * 1024, 24 * 1024, 16 * 1024, 0};
  d.core_modes = {"single"};
  return d;
}

TEST(PlannerTest, ResNet50PlansOnEdge16) {
  const std::vector<OpDesc> ops = resnet50();
  const DeviceSpec d = edge16_like(8);
  const GraphPlan plan = plan_graph(ops, d, CoreMode::kSingle);
  expect_roofline(plan, d, "edge16");
  bool columns = false, slices = false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpDesc& op = ops[i];
    const OpPlan& p = plan.ops[i];
    for (const auto& b : p.buffers) {  // separate SRAMs: each buffer within its own
      const std::string sram = b["sram"];
      const int64_t size = sram == "output" ? 16 * 1024 : 24 * 1024;
      EXPECT_LE(b["offset"].get<int64_t>() + b["bytes"].get<int64_t>(), size) << p.node;
    }
    if (op.kind != OpDesc::Kind::kConv && op.kind != OpDesc::Kind::kGemm) continue;
    const ConvLayer layer = op.kind == OpDesc::Kind::kGemm ? to_conv_layer(op.gemm) : op.conv;
    const ConvTiling t = tile_conv(layer, op.count, 9, d.core);
    expect_tiling_invariants(t, d.core, op.node);
    EXPECT_EQ(p.tile_count, t.groups * t.tiles_per_group()) << op.node;
    columns = columns || t.col_blocks > 1;
    slices = slices || t.k_blocks > 1;
  }
  EXPECT_TRUE(columns);
  EXPECT_TRUE(slices);

  std::vector<OpPlan> previous;
  for (double bw : {0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 1024.0, kUnlimited}) {
    const GraphPlan g = plan_graph(ops, edge16_like(bw), CoreMode::kSingle);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      const OpPlan& p = g.ops[i];
      if (bw == kUnlimited) {
        EXPECT_EQ(p.stall_cycles, 0) << p.node;
      }
      if (!previous.empty()) {
        EXPECT_LE(p.stall_cycles, previous[i].stall_cycles) << p.node << " at " << bw;
        EXPECT_LE(p.total_cycles, previous[i].total_cycles) << p.node << " at " << bw;
        EXPECT_EQ(p.compute_cycles, previous[i].compute_cycles) << p.node;
      }
    }
    previous = g.ops;
  }
}

TEST(PlannerTest, RooflineHoldsOnRandomLayers) {
  std::mt19937_64 rng(2024);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const CoreMode modes[] = {CoreMode::kSingle, CoreMode::kMulti, CoreMode::kGlobal4,
                            CoreMode::kGlobal8};
  for (int trial = 0; trial < 150; ++trial) {
    std::vector<OpDesc> ops;
    for (int i = 0; i < 8; ++i) {
      const std::string name = "op" + std::to_string(i);
      switch (pick(0, 3)) {
        case 0: {
          const int64_t k = pick(1, 5);
          const int64_t stride = pick(1, k);
          ops.push_back(
              conv_op(name, pick(1, 40), k, pick(1, 96), pick(1, 200), stride, pick(1, 3)));
          break;
        }
        case 1:
          ops.push_back(gemm_op(name, pick(1, 300), pick(1, 600), pick(1, 700), pick(1, 2)));
          break;
        case 2: {
          const int64_t e = pick(1, 200000);
          ops.push_back(vector_op(name, e, e * pick(1, 3), pick(0, 1) * 256));
          break;
        }
        default:
          ops.push_back(move_op(name, pick(1, 100000)));
      }
    }
    const int64_t sram = int64_t{1} << pick(12, 18);
    const double bw = pick(0, 4) == 0 ? kUnlimited : static_cast<double>(pick(1, 512)) / 4.0;
    const Dataflow df = std::vector<Dataflow>{kOs, kWs, kIs}[static_cast<std::size_t>(pick(0, 2))];
    const DeviceSpec d = device(pick(2, 64), pick(2, 64), df, bw, 2, 4, sram);
    const CoreMode mode = modes[pick(0, 3)];
    GraphPlan plan;
    try {
      plan = plan_graph(ops, d, mode);
    } catch (const std::invalid_argument& e) {
      // Only an op that cannot fit the (tiny) SRAM may be refused.
      EXPECT_NE(std::string(e.what()).find("more than one buffer set holds"), std::string::npos)
          << e.what();
      continue;
    }
    expect_roofline(plan, d, "trial " + std::to_string(trial));
    for (const OpPlan& p : plan.ops) {
      EXPECT_LE(p.peak_sram_bytes, 3 * sram) << p.node;
    }
  }
}

// --- Tiling invariants -----------------------------------------------------

TEST(PlannerTest, TilesCoverTheOutputOnceAndFitTheSram) {
  struct Case {
    ConvLayer layer;
    int64_t groups;
    int64_t sram;
    bool unified;
  };
  const std::vector<Case> cases = {
      {conv(58, 58, 3, 3, 64, 64, 1), 1, 32 * 1024, false},
      {conv(57, 57, 3, 3, 64, 128, 2), 1, 32 * 1024, false},
      {conv(18, 18, 3, 3, 16, 32, 2), 2, 2 * 1024, false},  // ceil() past the edge
      {conv(30, 30, 7, 7, 3, 64, 2), 1, 8 * 1024, false},
      {to_conv_layer(Gemm{300, 500, 256}), 1, 16 * 1024, false},
      {conv(58, 58, 3, 3, 64, 64, 1), 1, 48 * 1024, true},
      {to_conv_layer(Gemm{300, 500, 256}), 3, 32 * 1024, true},
      {conv(56, 56, 1, 1, 256, 64, 1), 1, 16 * 1024, false},   // one ifmap row > a buffer
      {conv(59, 59, 3, 3, 256, 64, 2), 1, 8 * 1024, false},    // halo rows and columns
      {to_conv_layer(Gemm{5, 40, 5000}), 2, 4 * 1024, false},  // one GEMM row's K > a buffer
      {conv(30, 30, 3, 3, 512, 512, 1), 1, 8 * 1024, true},
  };
  bool columns = false, slices = false;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CoreSpec core;
    core.array = SystolicArray{16, 16, kOs, 1};
    if (c.unified) {
      core.sram.unified_bytes = c.sram;
    } else {
      core.sram.input_bytes = core.sram.weight_bytes = core.sram.output_bytes = c.sram;
    }
    const ConvTiling t = tile_conv(c.layer, c.groups, 9, core);
    EXPECT_GT(t.tiles_per_group(), 1);  // the cases are chosen to need tiling
    columns = columns || t.col_blocks > 1;
    slices = slices || t.k_blocks > 1;
    expect_tiling_invariants(t, core, "case " + std::to_string(i));
  }
  EXPECT_TRUE(columns);
  EXPECT_TRUE(slices);
}

TEST(PlannerTest, BuffersFitTheirSramAndPeakIsWithinIt) {
  for (const bool unified : {false, true}) {
    DeviceSpec d = device(16, 16, kWs, 8, 1, 1, 64 * 1024);
    if (unified) d.core.sram = SramSpec{0, 0, 0, 192 * 1024};
    const int64_t total = unified ? 192 * 1024 : 3 * 64 * 1024;
    const GraphPlan plan = plan_graph(resnet50(), d, CoreMode::kSingle);
    for (const OpPlan& p : plan.ops) {
      EXPECT_LE(p.peak_sram_bytes, total) << p.node;
      int64_t sum = 0;
      for (const auto& b : p.buffers) {
        const int64_t size = unified ? 192 * 1024 : 64 * 1024;
        EXPECT_LE(b["offset"].get<int64_t>() + b["bytes"].get<int64_t>(), size) << p.node;
        sum += b["bytes"].get<int64_t>();
      }
      EXPECT_EQ(sum, p.peak_sram_bytes) << p.node;
    }
  }
}

// --- Core modes ------------------------------------------------------------

TEST(PlannerTest, Global4BeatsSingleLatencyOnEightCores) {
  const DeviceSpec d = device(32, 32, kOs, 64, 2, 4);
  const GraphPlan single = plan_graph(resnet50(), d, CoreMode::kSingle);
  const GraphPlan global4 = plan_graph(resnet50(), d, CoreMode::kGlobal4);
  EXPECT_LT(global4.total_cycles, single.total_cycles);
  // single: 8 concurrent copies; global4: 2 groups of 4 cores.
  EXPECT_EQ(single.units, 8);
  EXPECT_EQ(global4.units, 2);
  EXPECT_DOUBLE_EQ(single.throughput_ips, 8.0 / (single.latency_ms / 1000.0));
  EXPECT_DOUBLE_EQ(global4.throughput_ips, 2.0 / (global4.latency_ms / 1000.0));
  EXPECT_DOUBLE_EQ(single.latency_ms, static_cast<double>(single.total_cycles) / 1e6);
  // A split op waits for its barrier and the all-gather of its output.
  for (const OpPlan& p : global4.ops) {
    EXPECT_GE(p.sync_cycles, d.sync_cycles) << p.node;
    if (p.cores > 1) {
      EXPECT_GT(p.link_bytes, 0) << p.node;
    }
  }
  const GraphPlan global8 = plan_graph(resnet50(), d, CoreMode::kGlobal8);
  EXPECT_EQ(global8.units, 1);
  EXPECT_DOUBLE_EQ(global8.throughput_ips, 1.0 / (global8.latency_ms / 1000.0));
}

TEST(PlannerTest, MultiRunsABatchOfFourPerCluster) {
  const DeviceSpec d = device(32, 32, kOs, 64, 2, 4);
  const GraphPlan single = plan_graph(resnet50(), d, CoreMode::kSingle);
  const GraphPlan multi = plan_graph(resnet50(), d, CoreMode::kMulti);
  EXPECT_EQ(multi.units, 2);
  EXPECT_EQ(multi.samples, 4);
  EXPECT_EQ(multi.macs, 4 * single.macs);
  EXPECT_DOUBLE_EQ(multi.throughput_ips, 8.0 / (multi.latency_ms / 1000.0));
  // Weights are loaded once per cluster and broadcast: a batch reads less
  // than four single inferences.
  EXPECT_LT(multi.dram_read_bytes, 4 * single.dram_read_bytes);
  // Same compute per core as single; each core does one sample.
  for (std::size_t i = 0; i < multi.ops.size(); ++i) {
    EXPECT_EQ(multi.ops[i].compute_cycles, single.ops[i].compute_cycles) << multi.ops[i].node;
  }
}

TEST(PlannerTest, UnsupportedModeAndTooFewCoresThrow) {
  DeviceSpec d = device(32, 32, kOs, 16, 1, 4);
  d.core_modes = {"single", "multi"};
  std::string m =
      message_of<std::invalid_argument>([&] { plan_graph(resnet50(), d, CoreMode::kGlobal4); });
  EXPECT_NE(m.find("global4"), std::string::npos) << m;
  EXPECT_NE(m.find("single, multi"), std::string::npos) << m;

  d.core_modes = {"single", "multi", "global4", "global8"};
  m = message_of<std::invalid_argument>([&] { plan_graph(resnet50(), d, CoreMode::kGlobal8); });
  EXPECT_NE(m.find("needs 8 cores"), std::string::npos) << m;

  d.cores_per_cluster = 2;
  d.clusters = 4;  // 8 cores, but only 2 per cluster
  m = message_of<std::invalid_argument>([&] { plan_graph(resnet50(), d, CoreMode::kMulti); });
  EXPECT_NE(m.find("4 cores in a cluster"), std::string::npos) << m;
  EXPECT_NO_THROW(plan_graph(resnet50(), d, CoreMode::kGlobal8));
}

TEST(PlannerTest, CoreModeNamesRoundTrip) {
  for (CoreMode mode :
       {CoreMode::kSingle, CoreMode::kMulti, CoreMode::kGlobal4, CoreMode::kGlobal8}) {
    EXPECT_EQ(parse_core_mode(core_mode_name(mode)), mode);
  }
  EXPECT_THROW(parse_core_mode("global2"), std::invalid_argument);
}

// --- Bad input -------------------------------------------------------------

TEST(PlannerTest, BadInputThrowsInvalidArgumentNamingTheOp) {
  const DeviceSpec d = device(32, 32, kOs, 16);
  OpDesc bad = conv_op("broken", 8, 3, 4, 4, 1);
  bad.conv.stride_h = 5;  // larger than the filter
  std::string m =
      message_of<std::invalid_argument>([&] { plan_graph({bad}, d, CoreMode::kSingle); });
  EXPECT_NE(m.find("'broken'"), std::string::npos) << m;

  bad = gemm_op("zero", 0, 4, 4);
  m = message_of<std::invalid_argument>([&] { plan_graph({bad}, d, CoreMode::kSingle); });
  EXPECT_NE(m.find("'zero'"), std::string::npos) << m;

  bad = gemm_op("negative_count", 4, 4, 4);
  bad.count = -1;
  m = message_of<std::invalid_argument>([&] { plan_graph({bad}, d, CoreMode::kSingle); });
  EXPECT_NE(m.find("count"), std::string::npos) << m;

  // K = 1 M bytes per weight column is sliced to fit a 128 KB weight buffer,
  EXPECT_NO_THROW(plan_graph({gemm_op("huge_k", 4, 4, 1 << 20)}, d, CoreMode::kSingle));
  // but a 600 × 600 window of one input channel cannot fit 128 KB.
  bad = conv_op("huge_window", 1, 600, 1, 4, 1);
  m = message_of<std::invalid_argument>([&] { plan_graph({bad}, d, CoreMode::kSingle); });
  EXPECT_NE(m.find("'huge_window'"), std::string::npos) << m;
  EXPECT_NE(m.find("more than one buffer set holds"), std::string::npos) << m;

  bad = vector_op("empty", 0, 0);
  EXPECT_THROW(plan_graph({bad}, d, CoreMode::kSingle), std::invalid_argument);

  // Absurd sizes overflow int64 somewhere: refused, not wrapped.
  // Dimensions whose products overflow int64: set after gemm_op, whose
  // byte counts would overflow first.
  bad = gemm_op("absurd", 1, 1, 64);
  bad.gemm = Gemm{int64_t{1} << 40, int64_t{1} << 30, 64};
  m = message_of<std::invalid_argument>([&] { plan_graph({bad}, d, CoreMode::kSingle); });
  EXPECT_NE(m.find("'absurd'"), std::string::npos) << m;

  DeviceSpec broken = d;
  broken.core.array = SystolicArray{1, 1, kOs, 1};
  EXPECT_THROW(plan_graph({}, broken, CoreMode::kSingle), std::invalid_argument);
  broken = d;
  broken.core.sram = SramSpec{};
  EXPECT_THROW(plan_graph({}, broken, CoreMode::kSingle), std::invalid_argument);
  broken = d;
  broken.dram_bytes_per_cycle = std::nan("");
  EXPECT_THROW(plan_graph({}, broken, CoreMode::kSingle), std::invalid_argument);
}

// --- JSON ------------------------------------------------------------------

TEST(PlannerTest, JsonIsDeterministicAndBounded) {
  const DeviceSpec d = device(16, 16, kOs, 8, 2, 4, 32 * 1024);
  std::vector<OpDesc> ops = resnet50();
  const std::string a = to_json(plan_graph(ops, d, CoreMode::kGlobal4)).dump(2);
  const std::string b = to_json(plan_graph(ops, d, CoreMode::kGlobal4)).dump(2);
  EXPECT_EQ(a, b);
  const nlohmann::json j = nlohmann::json::parse(a);
  EXPECT_EQ(j["core_mode"], "global4");
  EXPECT_EQ(j["ops"].size(), ops.size());
  bool some_summarized = false;
  for (const auto& op : j["ops"]) {
    EXPECT_LE(op["tiles"].size(), static_cast<std::size_t>(kListedTiles));
    EXPECT_LE(op["transfers"].size(), static_cast<std::size_t>(2 * kListedTiles));
    EXPECT_EQ(op["tiling"]["tile_count"], op["tile_count"]);
    if (op["tile_count"].get<int64_t>() > kListedTiles) some_summarized = true;
  }
  EXPECT_TRUE(some_summarized);  // 32 KB SRAMs cut ResNet-50's big layers finely
  EXPECT_EQ(j["summary"]["total_cycles"].get<int64_t>(),
            plan_graph(ops, d, CoreMode::kGlobal4).total_cycles);
}

// --- Planning time (logged, never asserted) --------------------------------

TEST(PlannerTest, LogsResNet50PlanningTime) {
  const std::vector<OpDesc> ops = resnet50();
  const DeviceSpec d = device(32, 32, kOs, 32, 2, 4);
  const auto start = std::chrono::steady_clock::now();
  GraphPlan plan;
  for (CoreMode mode :
       {CoreMode::kSingle, CoreMode::kMulti, CoreMode::kGlobal4, CoreMode::kGlobal8}) {
    plan = plan_graph(ops, d, mode);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  int64_t tiles = 0;
  for (const OpPlan& p : plan.ops) tiles += p.tile_count;
  std::cout << "[ planner  ] ResNet-50 (" << ops.size() << " ops, " << plan.macs / 1000000
            << " M MACs): 4 modes planned in " << ms << " ms (" << ms / 4 << " ms per plan, "
            << tiles << " tiles in global8)\n";
  EXPECT_GT(plan.macs, int64_t{4000} * 1000 * 1000);  // ~4.1 G MACs at 224 × 224
}

}  // namespace
}  // namespace eulernpu::npu_sim
