// The compute-cycle model of a systolic array: SCALE-Sim v2's stall-free
// timing (scalesim/compute/systolic_compute_{os,ws,is}.py, with the operand
// matrices of scalesim/compute/operand_matrix.py and the cycle count of
// scalesim/memory/double_buffered_scratchpad_mem.py), in closed form.
//
// SCALE-Sim builds, per fold, a "demand matrix" with one line per cycle and
// runs it through its SRAM model; with SRAMs that never stall, a layer takes
// as many cycles as there are lines. The line counts depend only on the array
// and the operand-matrix shapes, so this model computes them without
// building the matrices. It models no memory stall: the npu_sim backend adds
// DRAM bandwidth on top, fold by fold, from fold_stats().
//
// All functions are pure and thread-safe. They throw std::invalid_argument
// for a malformed array or layer, std::overflow_error when a count does not
// fit in int64_t, and never read or write past their arguments.
#pragma once

#include <cstdint>
#include <string_view>

namespace eulernpu::npu_sim {

// Which operand stays in the processing elements for a whole fold.
enum class Dataflow {
  kOutputStationary,  // "os": each PE accumulates one ofmap element
  kWeightStationary,  // "ws": each PE holds one filter element
  kInputStationary,   // "is": each PE holds one ifmap element
};

// "os", "ws" or "is" (SCALE-Sim's config spelling); throws
// std::invalid_argument for anything else.
Dataflow parse_dataflow(std::string_view name);
std::string_view dataflow_name(Dataflow dataflow);

// The array. SRAM sizes are not here: without stalls they do not change the
// cycle count (SCALE-Sim only uses them to time DRAM traffic).
struct SystolicArray {
  std::int64_t rows = 0;  // PE rows (SCALE-Sim ArrayHeight), > 0
  std::int64_t cols = 0;  // PE columns (SCALE-Sim ArrayWidth), > 0
  Dataflow dataflow = Dataflow::kOutputStationary;
  // Bytes per operand element; SCALE-Sim fixes word_size = 1
  // (single_layer_sim.py). Only scales the traffic, never the cycles.
  std::int64_t word_bytes = 1;
};

// One row of a SCALE-Sim convolution topology file. The ifmap is pre-padded:
// SCALE-Sim adds no padding of its own. Batch is 1, as in SCALE-Sim v2.
struct ConvLayer {
  std::int64_t ifmap_h = 0;
  std::int64_t ifmap_w = 0;
  std::int64_t filter_h = 0;  // <= ifmap_h (SCALE-Sim asserts it)
  std::int64_t filter_w = 0;  // <= ifmap_w
  std::int64_t channels = 0;
  std::int64_t num_filters = 0;
  // 1 <= stride <= filter extent. A larger stride is rejected: SCALE-Sim's
  // ceil() output size can then place whole windows outside the ifmap.
  // Such a layer (a 1x1 stride-2 conv, say) is a GEMM: pass a Gemm with
  // m = real output pixels, k = channels · filter_h · filter_w.
  std::int64_t stride_h = 1;
  std::int64_t stride_w = 1;
};

// A GEMM ofmap[M][N] = ifmap[M][K] · filter[K][N], as in a SCALE-Sim
// "M, N, K" topology file.
struct Gemm {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};

// SCALE-Sim's load_arrays_gemm(): the conv row [m, k, 1, k, 1, n, 1, 1]
// (ifmap m×k, filter 1×k, 1 channel, n filters, stride 1), whose operand
// matrices are exactly M×K, K×N and M×N.
ConvLayer to_conv_layer(const Gemm& gemm);

// SCALE-Sim's operand matrices of a conv layer (topology_utils.py
// topo_calc_hyperparams, operand_matrix.py):
//   ofmap_h = ceil((ifmap_h - filter_h + stride_h) / stride_h), ofmap_w alike,
//   ifmap operand  M × K, one row per ofmap pixel, one column per window element,
//   filter operand K × N, one column per filter,
//   ofmap operand  M × N,
// with M = ofmap_h · ofmap_w, K = filter_h · filter_w · channels,
// N = num_filters. When the stride does not divide ifmap - filter, ceil()
// adds a last ofmap row (column) whose windows run past the ifmap; SCALE-Sim
// marks those addresses -1 and never reads them (see FoldStats).
struct OperandMatrices {
  std::int64_t ofmap_h = 0;
  std::int64_t ofmap_w = 0;
  std::int64_t m = 0;  // ofmap pixels per filter
  std::int64_t n = 0;  // filters
  std::int64_t k = 0;  // convolution window size
};
OperandMatrices operand_matrices(const ConvLayer& layer);

// How a dataflow lays the operand matrices on the array
// (topology_utils.py calc_spatio_temporal_params, and the set_params() of
// each systolic_compute_*.py):
//   os: Sr = M, Sc = N, T = K
//   ws: Sr = K, Sc = N, T = M
//   is: Sr = K, Sc = M, T = N
// Sr is spread over the rows, Sc over the columns, T streams in time.
struct Mapping {
  std::int64_t sr = 0;
  std::int64_t sc = 0;
  std::int64_t t = 0;
};
Mapping mapping(Dataflow dataflow, const OperandMatrices& operands);

// A layer's stall-free compute on the array.
struct ComputeResult {
  OperandMatrices operands;
  Mapping mapping;
  std::int64_t row_folds = 0;  // ceil(Sr / rows)
  std::int64_t col_folds = 0;  // ceil(Sc / cols)
  std::int64_t folds = 0;      // row_folds · col_folds
  // Demand-matrix lines of every fold (the same for all folds):
  //   os: T + rows + cols - 2
  //   ws, is: T + 2·rows + cols - 2
  std::int64_t cycles_per_fold = 0;
  // SCALE-Sim's "Total cycles" (COMPUTE_REPORT.csv) with zero stall cycles:
  // the 0-based index of the last demand line, folds · cycles_per_fold - 1
  // (double_buffered_scratchpad.service_memory_requests). Hence the -1.
  std::int64_t cycles = 0;
  // M · N · K, SCALE-Sim's num_compute (single_layer_sim.py). It includes the
  // MACs of windows that run past the ifmap (see OperandMatrices).
  std::int64_t macs = 0;
  // macs / (cycles · rows · cols): SCALE-Sim's "Overall Util %" / 100.
  // At most 1 on every array but 1×1 in os, where the -1 above makes it
  // M·N·K / (M·N·K - 1).
  double utilization = 0;
  // SCALE-Sim's "Mapping Efficiency %" / 100: the mean over folds of
  // used PEs / (rows · cols). It ignores fill and drain.
  double mapping_efficiency = 0;
  // SCALE-Sim's "Compute Util %" / 100: the mean over folds of
  // used PEs · T / (rows · cols · c), with c = cycles_per_fold in os but
  // cycles_per_fold + cols - 1 in ws and is (SCALE-Sim measures those on the
  // unskewed filter or ifmap demand, which is cols - 1 lines longer).
  // Neither mean weighs folds by time, so both differ from utilization.
  double compute_utilization = 0;
  // SRAM traffic summed over folds, in bytes (see FoldStats).
  std::int64_t ifmap_read_bytes = 0;
  std::int64_t filter_read_bytes = 0;
  std::int64_t ofmap_write_bytes = 0;
};

// Throws std::invalid_argument when the array or the layer is malformed
// (a size < 1, filter larger than ifmap, stride larger than filter), and
// std::domain_error for a single MAC on a 1×1 array in os, which SCALE-Sim
// reports as 0 cycles (its utilization divides by zero).
ComputeResult simulate_compute(const SystolicArray& array, const ConvLayer& layer);
ComputeResult simulate_compute(const SystolicArray& array, const Gemm& gemm);

// One fold: the block of the operand matrices the array holds at once.
// SCALE-Sim issues folds column-fold-major: fold i is row fold
// i % row_folds of column fold i / row_folds.
struct FoldStats {
  std::int64_t row_fold = 0;
  std::int64_t col_fold = 0;
  std::int64_t rows_used = 0;  // PE rows mapped, <= array rows
  std::int64_t cols_used = 0;  // PE columns mapped, <= array cols
  // Lines of this fold's demand matrices: its cycles without stalls.
  std::int64_t cycles = 0;
  // Elements the array reads from the ifmap and filter SRAMs and writes to
  // the ofmap SRAM during the fold, times word_bytes: the entries of
  // SCALE-Sim's demand matrices that are addresses (not -1), i.e. what its
  // SRAM traces hold. Per fold, os reads T·rows_used ifmap and T·cols_used
  // filter elements and writes rows_used·cols_used outputs; ws reads
  // M·rows_used ifmap and rows_used·cols_used filter elements and writes
  // M·cols_used partial sums; is reads rows_used·cols_used ifmap and
  // N·rows_used filter elements and writes N·cols_used partial sums. The
  // ifmap count leaves out the -1 addresses of windows past the ifmap edge.
  //
  // SCALE-Sim's DETAILED_ACCESS_REPORT differs in two ways: its ifmap count
  // includes those -1 slots, and in os its ofmap count adds rows + cols per
  // fold (systolic_compute_os.py adds the flipped block's shape[0] + shape[1]).
  std::int64_t ifmap_read_bytes = 0;
  std::int64_t filter_read_bytes = 0;
  std::int64_t ofmap_write_bytes = 0;
};

// Fold `index` (0 <= index < folds) of the layer; throws std::out_of_range
// for another index and what simulate_compute throws for a bad layer.
// Costs O(rows + cols), so a caller can walk millions of folds without
// storing them.
FoldStats fold_stats(const SystolicArray& array, const ConvLayer& layer, std::int64_t index);
FoldStats fold_stats(const SystolicArray& array, const Gemm& gemm, std::int64_t index);

}  // namespace eulernpu::npu_sim
