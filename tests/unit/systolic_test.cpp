// The npu_sim compute-cycle model against SCALE-Sim v2: its public test
// vectors, cases derived by hand from its formulas (arithmetic beside each),
// a literal transcription of its demand-matrix construction and a
// brute-force ifmap operand matrix, and the edges of the input domain.
#include "systolic.hpp"
#include "scalesim_vectors.hpp"
#include "throw_message.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace eulernpu::npu_sim {
namespace {

using namespace test;  // the public vectors
using eulernpu::test::message_of;

using std::int64_t;

constexpr Dataflow kAllDataflows[] = {kOs, kWs, kIs};

SystolicArray array(int64_t rows, int64_t cols, Dataflow df) { return {rows, cols, df, 1}; }

// --- SCALE-Sim's public vectors: 32×32 array, 256 KB per SRAM ---------------

class SystolicPublicVectorTest : public ::testing::TestWithParam<PublicCase> {};

TEST_P(SystolicPublicVectorTest, TotalCyclesMatchScaleSim) {
  const PublicCase& c = GetParam();
  const ComputeResult r = simulate_compute(array(32, 32, c.dataflow), c.layer);
  EXPECT_EQ(r.cycles, c.cycles);
  EXPECT_EQ(r.cycles, r.folds * r.cycles_per_fold - 1);
}

INSTANTIATE_TEST_SUITE_P(Conv, SystolicPublicVectorTest, ::testing::ValuesIn(test::public_cases()),
                         [](const auto& test_case) { return std::string(test_case.param.name); });

TEST(SystolicTest, OperandMatricesOfThePublicLayers) {
  // conv1: ofmap (18 - 3 + 1) / 1 = 16 → M = 256; K = 3·3·3 = 27; N = 16.
  const OperandMatrices o1 = operand_matrices(kConv1);
  EXPECT_EQ(o1.ofmap_h, 16);
  EXPECT_EQ(o1.ofmap_w, 16);
  EXPECT_EQ(o1.m, 256);
  EXPECT_EQ(o1.k, 27);
  EXPECT_EQ(o1.n, 16);
  // conv2: ceil((18 - 3 + 2) / 2) = ceil(8.5) = 9, not the 8 of a real
  // stride-2 conv → M = 81; K = 3·3·16 = 144.
  const OperandMatrices o2 = operand_matrices(kConv2);
  EXPECT_EQ(o2.ofmap_h, 9);
  EXPECT_EQ(o2.m, 81);
  EXPECT_EQ(o2.k, 144);
  EXPECT_EQ(o2.n, 32);
  // conv3: 10 - 3 + 1 = 8 → M = 64; K = 288.
  const OperandMatrices o3 = operand_matrices(kConv3);
  EXPECT_EQ(o3.m, 64);
  EXPECT_EQ(o3.k, 288);
  EXPECT_EQ(o3.n, 64);

  EXPECT_EQ(mapping(kOs, o1).sr, 256);  // os: Sr = M, Sc = N, T = K
  EXPECT_EQ(mapping(kOs, o1).sc, 16);
  EXPECT_EQ(mapping(kOs, o1).t, 27);
  EXPECT_EQ(mapping(kWs, o1).sr, 27);  // ws: Sr = K, Sc = N, T = M
  EXPECT_EQ(mapping(kWs, o1).sc, 16);
  EXPECT_EQ(mapping(kWs, o1).t, 256);
  EXPECT_EQ(mapping(kIs, o1).sr, 27);  // is: Sr = K, Sc = M, T = N
  EXPECT_EQ(mapping(kIs, o1).sc, 256);
  EXPECT_EQ(mapping(kIs, o1).t, 16);
}

TEST(SystolicTest, Conv1OutputStationaryWorkedExample) {
  // The worked example of docs/backends/npu_sim.md.
  const ComputeResult r = simulate_compute(array(32, 32, kOs), kConv1);
  EXPECT_EQ(r.row_folds, 8);  // ceil(256 / 32)
  EXPECT_EQ(r.col_folds, 1);  // ceil(16 / 32)
  EXPECT_EQ(r.folds, 8);
  EXPECT_EQ(r.cycles_per_fold, 89);                              // 27 + 32 + 32 - 2
  EXPECT_EQ(r.cycles, 711);                                      // 8 · 89 - 1
  EXPECT_EQ(r.macs, 110592);                                     // 256 · 16 · 27
  EXPECT_DOUBLE_EQ(r.utilization, 110592.0 / (711.0 * 1024.0));  // 0.1519
  // Every fold maps 32 pixels × 16 filters: 512 of 1024 PEs.
  EXPECT_DOUBLE_EQ(r.mapping_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(r.compute_utilization, 512.0 * 27.0 / (1024.0 * 89.0));  // 0.1517
  // Totals: ifmap 256·27 once (1 column fold), filter 27·16 per row fold,
  // ofmap 256·16 once.
  EXPECT_EQ(r.ifmap_read_bytes, 6912);
  EXPECT_EQ(r.filter_read_bytes, 3456);  // 432 · 8
  EXPECT_EQ(r.ofmap_write_bytes, 4096);
  // Per fold: 27 window elements for each of 32 pixels, 27 for each of 16
  // filters, 32·16 outputs.
  const FoldStats f = fold_stats(array(32, 32, kOs), kConv1, 3);
  EXPECT_EQ(f.row_fold, 3);
  EXPECT_EQ(f.col_fold, 0);
  EXPECT_EQ(f.rows_used, 32);
  EXPECT_EQ(f.cols_used, 16);
  EXPECT_EQ(f.cycles, 89);
  EXPECT_EQ(f.ifmap_read_bytes, 864);
  EXPECT_EQ(f.filter_read_bytes, 432);
  EXPECT_EQ(f.ofmap_write_bytes, 512);
}

TEST(SystolicTest, WeightStationaryRatiosDifferFromUtilization) {
  // conv1 in ws: one fold of 27 window rows × 16 filter columns, T = 256.
  const ComputeResult r = simulate_compute(array(32, 32, kWs), kConv1);
  EXPECT_EQ(r.cycles_per_fold, 350);                             // 256 + 2·32 + 32 - 2
  EXPECT_DOUBLE_EQ(r.utilization, 110592.0 / (349.0 * 1024.0));  // 0.3095
  EXPECT_DOUBLE_EQ(r.mapping_efficiency, 432.0 / 1024.0);        // 0.4219
  // SCALE-Sim divides by the filter demand's 2·32 + 2·32 + 256 - 3 = 381
  // lines, not the 350 the fold takes.
  EXPECT_DOUBLE_EQ(r.compute_utilization, 432.0 * 256.0 / (1024.0 * 381.0));  // 0.2835
}

// --- Hand-derived small GEMMs on a 4×4 array -----------------------------

TEST(SystolicTest, OneFoldGemmOnFourByFour) {
  // M = N = K = 4 fills the array once in every dataflow (Sr = Sc = 4).
  const Gemm g{4, 4, 4};
  // os: T = K = 4; lines 4 + 4 + 4 - 2 = 10; cycles 10 - 1 = 9.
  const ComputeResult os = simulate_compute(array(4, 4, kOs), g);
  EXPECT_EQ(os.folds, 1);
  EXPECT_EQ(os.cycles_per_fold, 10);
  EXPECT_EQ(os.cycles, 9);
  EXPECT_EQ(os.macs, 64);
  EXPECT_DOUBLE_EQ(os.utilization, 64.0 / (9.0 * 16.0));  // 0.444
  EXPECT_DOUBLE_EQ(os.mapping_efficiency, 1.0);
  // ws: T = M = 4; lines 4 + 2·4 + 4 - 2 = 14; cycles 13.
  const ComputeResult ws = simulate_compute(array(4, 4, kWs), g);
  EXPECT_EQ(ws.cycles_per_fold, 14);
  EXPECT_EQ(ws.cycles, 13);
  // is: T = N = 4; the same 14 lines; cycles 13.
  const ComputeResult is = simulate_compute(array(4, 4, kIs), g);
  EXPECT_EQ(is.cycles_per_fold, 14);
  EXPECT_EQ(is.cycles, 13);
  // One fold reads all of both operands and writes all outputs once.
  for (const ComputeResult& r : {os, ws, is}) {
    EXPECT_EQ(r.ifmap_read_bytes, 16);
    EXPECT_EQ(r.filter_read_bytes, 16);
    EXPECT_EQ(r.ofmap_write_bytes, 16);
  }
}

TEST(SystolicTest, PartialFoldsGemmOnFourByFour) {
  const Gemm g{3, 2, 5};  // M = 3, N = 2, K = 5; MACs 30
  // os: Sr = 3, Sc = 2 → 1 fold; T = 5; lines 5 + 6 = 11; cycles 10.
  const ComputeResult os = simulate_compute(array(4, 4, kOs), g);
  EXPECT_EQ(os.folds, 1);
  EXPECT_EQ(os.cycles, 10);
  EXPECT_DOUBLE_EQ(os.mapping_efficiency, 6.0 / 16.0);
  // ws: Sr = K = 5 → 2 row folds (4 + 1 rows), Sc = 2; T = M = 3;
  // lines 3 + 8 + 4 - 2 = 13; cycles 2·13 - 1 = 25.
  const ComputeResult ws = simulate_compute(array(4, 4, kWs), g);
  EXPECT_EQ(ws.row_folds, 2);
  EXPECT_EQ(ws.cycles, 25);
  EXPECT_DOUBLE_EQ(ws.mapping_efficiency, (8.0 / 16.0 + 2.0 / 16.0) / 2.0);
  // ws traffic: ifmap 3·4 + 3·1 = 15, filter 4·2 + 1·2 = 10, psums 3·2 per
  // row fold = 12.
  EXPECT_EQ(ws.ifmap_read_bytes, 15);
  EXPECT_EQ(ws.filter_read_bytes, 10);
  EXPECT_EQ(ws.ofmap_write_bytes, 12);
  // is: Sr = K = 5 → 2 row folds, Sc = M = 3 → 1; T = N = 2;
  // lines 2 + 8 + 4 - 2 = 12; cycles 2·12 - 1 = 23.
  const ComputeResult is = simulate_compute(array(4, 4, kIs), g);
  EXPECT_EQ(is.folds, 2);
  EXPECT_EQ(is.cycles, 23);
  // is traffic: ifmap once (15), filter 2·4 + 2·1 = 10, psums 2·3 per row
  // fold = 12.
  EXPECT_EQ(is.ifmap_read_bytes, 15);
  EXPECT_EQ(is.filter_read_bytes, 10);
  EXPECT_EQ(is.ofmap_write_bytes, 12);
  const FoldStats last = fold_stats(array(4, 4, kIs), g, 1);
  EXPECT_EQ(last.rows_used, 1);
  EXPECT_EQ(last.cols_used, 3);
  EXPECT_EQ(last.ifmap_read_bytes, 3);
  EXPECT_EQ(last.filter_read_bytes, 2);
  EXPECT_EQ(last.ofmap_write_bytes, 6);
}

TEST(SystolicTest, GemmIsItsScaleSimConvRow) {
  const ConvLayer l = to_conv_layer(Gemm{7, 5, 3});
  EXPECT_EQ(l.ifmap_h, 7);
  EXPECT_EQ(l.ifmap_w, 3);
  EXPECT_EQ(l.filter_h, 1);
  EXPECT_EQ(l.filter_w, 3);
  EXPECT_EQ(l.channels, 1);
  EXPECT_EQ(l.num_filters, 5);
  const OperandMatrices o = operand_matrices(l);
  EXPECT_EQ(o.m, 7);
  EXPECT_EQ(o.n, 5);
  EXPECT_EQ(o.k, 3);
}

TEST(SystolicTest, WordBytesScaleTrafficNotCycles) {
  const ComputeResult one = simulate_compute(SystolicArray{8, 8, kWs, 1}, kConv3);
  const ComputeResult two = simulate_compute(SystolicArray{8, 8, kWs, 2}, kConv3);
  EXPECT_EQ(two.cycles, one.cycles);
  EXPECT_EQ(two.ifmap_read_bytes, 2 * one.ifmap_read_bytes);
  EXPECT_EQ(two.filter_read_bytes, 2 * one.filter_read_bytes);
  EXPECT_EQ(two.ofmap_write_bytes, 2 * one.ofmap_write_bytes);
}

// --- Cross-checks against SCALE-Sim's own construction --------------------

// Lines of the ifmap, filter and ofmap demand matrices of one fold, step by
// step as systolic_compute_{os,ws,is}.py build them: prefix null lines, the
// T operand lines (or the rows-tall stationary block), suffix null lines,
// then skew_matrix(), which adds (matrix columns - 1) lines.
struct DemandLines {
  int64_t ifmap, filter, ofmap;
};

DemandLines scalesim_demand_lines(Dataflow df, int64_t rows, int64_t cols, int64_t t) {
  switch (df) {
    case Dataflow::kOutputStationary:
      return {(t + (cols - 1)) + (rows - 1),   // T lines, cols-1 suffix, skew over rows
              (t + (rows - 1)) + (cols - 1),   // T lines, rows-1 suffix, skew over cols
              ((t - 1) + rows) + (cols - 1)};  // T-1 prefix, rows outputs, skew
    case Dataflow::kWeightStationary:
      return {(rows + t + (cols - 1)) + (rows - 1),  // rows prefix, T, cols-1, skew
              rows + (rows + cols + t - 2),          // rows weights, suffix, no skew
              ((2 * rows - 1) + t) + (cols - 1)};    // 2·rows-1 prefix, T, skew
    case Dataflow::kInputStationary:
      return {rows + (rows + cols + t - 2),          // rows inputs, suffix, no skew
              (rows + t + (cols - 1)) + (rows - 1),  // rows prefix, T, cols-1, skew
              ((2 * rows - 1) + t) + (cols - 1)};    // 2·rows-1 prefix, T, skew
  }
  return {0, 0, 0};
}

TEST(SystolicTest, CyclesPerFoldAreScaleSimDemandLines) {
  for (Dataflow df : kAllDataflows) {
    for (int64_t rows : {1, 2, 5, 32}) {
      for (int64_t cols : {1, 3, 8, 32}) {
        for (const Gemm& g : {Gemm{1, 1, 1}, Gemm{9, 4, 30}, Gemm{100, 70, 3}}) {
          if (df == kOs && rows == 1 && cols == 1 && g.m * g.n * g.k == 1) continue;
          const ComputeResult r = simulate_compute(array(rows, cols, df), g);
          const DemandLines d = scalesim_demand_lines(df, rows, cols, r.mapping.t);
          // SCALE-Sim asserts the three are in sync; so does this model.
          EXPECT_EQ(d.ifmap, r.cycles_per_fold) << dataflow_name(df) << rows << "x" << cols;
          EXPECT_EQ(d.filter, r.cycles_per_fold) << dataflow_name(df) << rows << "x" << cols;
          EXPECT_EQ(d.ofmap, r.cycles_per_fold) << dataflow_name(df) << rows << "x" << cols;
        }
      }
    }
  }
}

// The ifmap operand matrix of operand_matrix.py, true where an entry is an
// address and false where calc_ifmap_elem_addr() returns -1.
std::vector<std::vector<bool>> brute_force_ifmap(const ConvLayer& l) {
  const OperandMatrices o = operand_matrices(l);
  std::vector<std::vector<bool>> valid(o.m, std::vector<bool>(o.k));
  for (int64_t i = 0; i < o.m; ++i) {
    const int64_t i_row = (i / o.ofmap_w) * l.stride_h;
    const int64_t i_col = (i % o.ofmap_w) * l.stride_w;
    for (int64_t j = 0; j < o.k; ++j) {
      const int64_t c_row = j / (l.filter_w * l.channels);
      const int64_t c_col = (j % (l.filter_w * l.channels)) / l.channels;
      valid[i][j] = c_row + i_row < l.ifmap_h && c_col + i_col < l.ifmap_w;
    }
  }
  return valid;
}

int64_t count_block(const std::vector<std::vector<bool>>& v, int64_t p0, int64_t p1, int64_t j0,
                    int64_t j1) {
  int64_t n = 0;
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t j = j0; j < j1; ++j) n += v[p][j] ? 1 : 0;
  }
  return n;
}

TEST(SystolicTest, FoldTrafficMatchesBruteForceOperandMatrices) {
  // Layers whose ceil() output size adds windows past the ifmap edge
  // (conv2; 7 - 3 = 4 not a multiple of 3; uneven strides), and one without.
  const ConvLayer layers[] = {kConv2, conv(7, 9, 3, 3, 2, 5, 3), ConvLayer{11, 8, 4, 3, 3, 6, 3, 2},
                              kConv3};
  for (const ConvLayer& l : layers) {
    const auto valid = brute_force_ifmap(l);
    const OperandMatrices o = operand_matrices(l);
    for (Dataflow df : kAllDataflows) {
      for (int64_t rows : {3, 8}) {
        for (int64_t cols : {5, 16}) {
          const SystolicArray a = array(rows, cols, df);
          const ComputeResult r = simulate_compute(a, l);
          int64_t ifmap = 0, filter = 0, ofmap = 0;
          for (int64_t i = 0; i < r.folds; ++i) {
            const FoldStats f = fold_stats(a, l, i);
            const int64_t r0 = f.row_fold * rows, r1 = r0 + f.rows_used;
            const int64_t c0 = f.col_fold * cols, c1 = c0 + f.cols_used;
            // The blocks systolic_compute_*.py slice out of the operands.
            int64_t want_ifmap = 0, want_filter = 0, want_ofmap = 0;
            switch (df) {
              case Dataflow::kOutputStationary:
                want_ifmap = count_block(valid, r0, r1, 0, o.k);
                want_filter = o.k * f.cols_used;
                want_ofmap = f.rows_used * f.cols_used;
                break;
              case Dataflow::kWeightStationary:
                want_ifmap = count_block(valid, 0, o.m, r0, r1);
                want_filter = f.rows_used * f.cols_used;
                want_ofmap = o.m * f.cols_used;
                break;
              case Dataflow::kInputStationary:
                want_ifmap = count_block(valid, c0, c1, r0, r1);
                want_filter = o.n * f.rows_used;
                want_ofmap = o.n * f.cols_used;
                break;
            }
            ASSERT_EQ(f.ifmap_read_bytes, want_ifmap) << dataflow_name(df) << " fold " << i;
            ASSERT_EQ(f.filter_read_bytes, want_filter) << dataflow_name(df) << " fold " << i;
            ASSERT_EQ(f.ofmap_write_bytes, want_ofmap) << dataflow_name(df) << " fold " << i;
            EXPECT_EQ(f.cycles, r.cycles_per_fold);
            ifmap += f.ifmap_read_bytes;
            filter += f.filter_read_bytes;
            ofmap += f.ofmap_write_bytes;
          }
          EXPECT_EQ(ifmap, r.ifmap_read_bytes) << dataflow_name(df);
          EXPECT_EQ(filter, r.filter_read_bytes) << dataflow_name(df);
          EXPECT_EQ(ofmap, r.ofmap_write_bytes) << dataflow_name(df);
        }
      }
    }
  }
}

TEST(SystolicTest, PaddedWindowsAreNotRead) {
  // conv2's 9×9 ofmap: window row crow reaches min(9, ceil((18 - crow) / 2))
  // output rows: 9, 9, 8 → 26; the same for columns; 26·26·16 = 10816
  // ifmap reads, against the 81·144 = 11664 slots SCALE-Sim's access report
  // counts.
  const ComputeResult r = simulate_compute(array(32, 32, kOs), kConv2);
  EXPECT_EQ(r.col_folds, 1);
  EXPECT_EQ(r.ifmap_read_bytes, 10816);
}

// --- Bounds and monotonicity ------------------------------------------------

std::vector<ConvLayer> sweep_layers() {
  std::vector<ConvLayer> layers = {kConv1, kConv2, kConv3, conv(7, 9, 3, 3, 2, 5, 3)};
  for (int64_t m : {1, 2, 3, 17, 64}) {
    for (int64_t n : {1, 5, 33}) {
      for (int64_t k : {1, 4, 40}) layers.push_back(to_conv_layer(Gemm{m, n, k}));
    }
  }
  return layers;
}

TEST(SystolicTest, UtilizationNeverExceedsOne) {
  for (Dataflow df : kAllDataflows) {
    for (int64_t rows : {1, 2, 3, 8, 32}) {
      for (int64_t cols : {1, 2, 7, 32}) {
        if (df == kOs && rows == 1 && cols == 1) continue;  // see the next test
        for (const ConvLayer& l : sweep_layers()) {
          const ComputeResult r = simulate_compute(array(rows, cols, df), l);
          EXPECT_GT(r.utilization, 0.0);
          EXPECT_LE(r.utilization, 1.0) << dataflow_name(df) << " " << rows << "x" << cols;
          EXPECT_GT(r.mapping_efficiency, 0.0);
          EXPECT_LE(r.mapping_efficiency, 1.0);
          EXPECT_GT(r.compute_utilization, 0.0);
          EXPECT_LE(r.compute_utilization, 1.0);
        }
      }
    }
  }
}

TEST(SystolicTest, OneByOneOutputStationaryIsScaleSimsOffByOne) {
  // One PE in os: each of the M·N folds takes T + 1 + 1 - 2 = K lines, so
  // SCALE-Sim reports M·N·K - 1 cycles for M·N·K MACs.
  const ComputeResult r = simulate_compute(array(1, 1, kOs), Gemm{2, 3, 4});
  EXPECT_EQ(r.cycles, 23);  // 6 folds · 4 lines - 1
  EXPECT_DOUBLE_EQ(r.utilization, 24.0 / 23.0);
  // A single MAC leaves 0 cycles, where SCALE-Sim divides by zero.
  const std::string msg = message_of<std::domain_error>([] {
    simulate_compute(array(1, 1, kOs), Gemm{1, 1, 1});
  });
  EXPECT_NE(msg.find("0 cycles"), std::string::npos) << msg;
  // The same MAC in ws and is costs 1 + 2 + 1 - 2 = 2 lines → 1 cycle.
  EXPECT_EQ(simulate_compute(array(1, 1, kWs), Gemm{1, 1, 1}).cycles, 1);
  EXPECT_EQ(simulate_compute(array(1, 1, kIs), Gemm{1, 1, 1}).cycles, 1);
}

TEST(SystolicTest, CyclesNeverDecreaseAsTheLayerGrows) {
  // Folds and lines per fold are both non-decreasing in M, N and K.
  for (Dataflow df : kAllDataflows) {
    for (int64_t rows : {1, 4, 32}) {
      for (int64_t cols : {2, 5, 32}) {
        const SystolicArray a = array(rows, cols, df);
        for (int64_t m = 1; m < 70; m += 3) {
          for (int64_t n = 1; n < 40; n += 5) {
            for (int64_t k = 1; k < 40; k += 7) {
              const int64_t base = simulate_compute(a, Gemm{m, n, k}).cycles;
              EXPECT_GE(simulate_compute(a, Gemm{m + 1, n, k}).cycles, base);
              EXPECT_GE(simulate_compute(a, Gemm{m, n + 1, k}).cycles, base);
              EXPECT_GE(simulate_compute(a, Gemm{m, n, k + 1}).cycles, base);
            }
          }
        }
      }
    }
  }
}

TEST(SystolicTest, MoreRowsNeverMoreFolds) {
  for (Dataflow df : kAllDataflows) {
    for (const ConvLayer& l : sweep_layers()) {
      for (int64_t rows = 1; rows < 40; ++rows) {
        EXPECT_LE(simulate_compute(array(rows + 1, 8, df), l).folds,
                  simulate_compute(array(rows, 8, df), l).folds);
        EXPECT_LE(simulate_compute(array(8, rows + 1, df), l).folds,
                  simulate_compute(array(8, rows, df), l).folds);
      }
    }
  }
}

TEST(SystolicTest, MoreRowsCanCostCycles) {
  // Cycles are not monotone in the array size: once the layer fits, an extra
  // row only lengthens fill and drain. conv1 in os with N = 16, M = 256:
  // 256 rows → 1 fold of 27 + 256 + 32 - 2 = 313 lines → 312 cycles;
  // 257 rows → 1 fold of 314 lines → 313 cycles.
  EXPECT_EQ(simulate_compute(array(256, 32, kOs), kConv1).cycles, 312);
  EXPECT_EQ(simulate_compute(array(257, 32, kOs), kConv1).cycles, 313);
  // Where it removes folds it pays: 32 → 64 rows halves conv1's 8 folds,
  // 4 · (27 + 64 + 32 - 2) - 1 = 483 < 711.
  EXPECT_EQ(simulate_compute(array(64, 32, kOs), kConv1).cycles, 483);
}

// --- Invalid input ------------------------------------------------------------

TEST(SystolicTest, RejectsMalformedArrays) {
  const std::string rows =
      message_of<std::invalid_argument>([] { simulate_compute(array(0, 32, kOs), kConv1); });
  EXPECT_EQ(rows, "failed to model systolic array with rows 0: must be at least 1");
  const std::string cols =
      message_of<std::invalid_argument>([] { simulate_compute(array(32, -4, kWs), kConv1); });
  EXPECT_EQ(cols, "failed to model systolic array with cols -4: must be at least 1");
  const std::string word = message_of<std::invalid_argument>([] {
    simulate_compute(SystolicArray{4, 4, kIs, 0}, kConv1);
  });
  EXPECT_NE(word.find("word_bytes 0"), std::string::npos) << word;
  const std::string df = message_of<std::invalid_argument>([] {
    simulate_compute(SystolicArray{4, 4, static_cast<Dataflow>(7), 1}, kConv1);
  });
  EXPECT_NE(df.find("must be os, ws or is"), std::string::npos) << df;
}

TEST(SystolicTest, RejectsMalformedLayers) {
  const SystolicArray a = array(32, 32, kOs);
  ConvLayer zero = kConv1;
  zero.channels = 0;
  EXPECT_EQ(message_of<std::invalid_argument>([&] { simulate_compute(a, zero); }),
            "failed to model conv layer with channels 0: must be at least 1");
  ConvLayer no_stride = kConv1;
  no_stride.stride_w = 0;  // would divide by zero in the output size
  EXPECT_EQ(message_of<std::invalid_argument>([&] { simulate_compute(a, no_stride); }),
            "failed to model conv layer with stride_w 0: must be at least 1");
  ConvLayer wide = kConv1;
  wide.filter_w = 19;
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              simulate_compute(a, wide);
            }).find("filter_w 19: must not exceed ifmap_w 18"),
            std::string::npos);
  // A 1×1 stride-2 conv: ceil((18 - 1 + 2) / 2) = 10 output rows, the last
  // window starting at row 18, entirely outside the ifmap.
  const std::string stride =
      message_of<std::invalid_argument>([&] { simulate_compute(a, conv(18, 18, 1, 1, 8, 8, 2)); });
  EXPECT_NE(stride.find("stride_h 2: must not exceed filter_h 1"), std::string::npos) << stride;
  EXPECT_NE(stride.find("as a Gemm"), std::string::npos) << stride;
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              simulate_compute(a, Gemm{4, 0, 4});
            }),
            "failed to model gemm with n 0: must be at least 1");
}

TEST(SystolicTest, RejectsFoldIndexOutOfRange) {
  const SystolicArray a = array(32, 32, kOs);  // conv1: 8 folds
  EXPECT_EQ(message_of<std::out_of_range>([&] { fold_stats(a, kConv1, 8); }),
            "failed to get fold 8: the layer has 8 folds");
  EXPECT_EQ(message_of<std::out_of_range>([&] { fold_stats(a, kConv1, -1); }),
            "failed to get fold -1: the layer has 8 folds");
}

TEST(SystolicTest, ReportsOverflowInsteadOfWrapping) {
  constexpr int64_t kBig = int64_t{1} << 40;
  const std::string macs = message_of<std::overflow_error>([] {
    simulate_compute(array(32, 32, kOs), Gemm{kBig, kBig, kBig});
  });
  EXPECT_NE(macs.find("does not fit in int64"), std::string::npos) << macs;
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_THROW(simulate_compute(array(max, max, kWs), Gemm{1, 1, 1}), std::overflow_error);
}

TEST(SystolicTest, ParsesScaleSimDataflowNames) {
  for (Dataflow df : kAllDataflows) EXPECT_EQ(parse_dataflow(dataflow_name(df)), df);
  EXPECT_EQ(message_of<std::invalid_argument>([] { parse_dataflow("OS"); }),
            "failed to parse dataflow 'OS': must be os, ws or is");
}

}  // namespace
}  // namespace eulernpu::npu_sim
