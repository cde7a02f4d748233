#include "systolic.hpp"

#include "checked_int.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace eulernpu::npu_sim {
namespace {

std::int64_t layer_mul(std::int64_t a, std::int64_t b, const char* what) {
  return npu_sim::checked_mul(a, b, "failed to model layer", what);
}

std::int64_t layer_add(std::int64_t a, std::int64_t b, const char* what) {
  return npu_sim::checked_add(a, b, "failed to model layer", what);
}

void require_positive(std::int64_t value, const char* object, const char* field) {
  if (value < 1) {
    throw std::invalid_argument(std::string("failed to model ") + object + " with " + field + " " +
                                std::to_string(value) + ": must be at least 1");
  }
}

void validate(const SystolicArray& array) {
  require_positive(array.rows, "systolic array", "rows");
  require_positive(array.cols, "systolic array", "cols");
  require_positive(array.word_bytes, "systolic array", "word_bytes");
  switch (array.dataflow) {
    case Dataflow::kOutputStationary:
    case Dataflow::kWeightStationary:
    case Dataflow::kInputStationary:
      return;
  }
  throw std::invalid_argument("failed to model systolic array with dataflow " +
                              std::to_string(static_cast<int>(array.dataflow)) +
                              ": must be os, ws or is");
}

void require_at_most(std::int64_t value, const char* field, std::int64_t bound,
                     const char* bound_field, const char* why) {
  if (value > bound) {
    throw std::invalid_argument(std::string("failed to model conv layer with ") + field + " " +
                                std::to_string(value) + ": must not exceed " + bound_field + " " +
                                std::to_string(bound) + why);
  }
}

void validate(const ConvLayer& l) {
  require_positive(l.ifmap_h, "conv layer", "ifmap_h");
  require_positive(l.ifmap_w, "conv layer", "ifmap_w");
  require_positive(l.filter_h, "conv layer", "filter_h");
  require_positive(l.filter_w, "conv layer", "filter_w");
  require_positive(l.channels, "conv layer", "channels");
  require_positive(l.num_filters, "conv layer", "num_filters");
  require_positive(l.stride_h, "conv layer", "stride_h");
  require_positive(l.stride_w, "conv layer", "stride_w");
  require_at_most(l.filter_h, "filter_h", l.ifmap_h, "ifmap_h", " (the ifmap is pre-padded)");
  require_at_most(l.filter_w, "filter_w", l.ifmap_w, "ifmap_w", " (the ifmap is pre-padded)");
  constexpr const char* kWhy =
      " (SCALE-Sim's ceil() output size would put whole windows outside the ifmap; model the "
      "layer as a Gemm)";
  require_at_most(l.stride_h, "stride_h", l.filter_h, "filter_h", kWhy);
  require_at_most(l.stride_w, "stride_w", l.filter_w, "filter_w", kWhy);
}

// Where the ifmap operand matrix holds real addresses. Entry (p, j) reads
// ifmap row orow·stride_h + crow and column ocol·stride_w + ccol, with
// p = orow·ofmap_w + ocol and j = (crow·filter_w + ccol)·channels + ch
// (operand_matrix.py calc_ifmap_elem_addr); it is -1 when that is past the
// ifmap edge. A stride no larger than the filter keeps at least one row and
// column of every window inside, so the limits below are at least 1.
class IfmapValidity {
 public:
  IfmapValidity(const ConvLayer& l, const OperandMatrices& o) : l_(l), o_(o) {
    all_valid_ = (o.ofmap_h - 1) * l.stride_h + l.filter_h <= l.ifmap_h &&
                 (o.ofmap_w - 1) * l.stride_w + l.filter_w <= l.ifmap_w;
  }

  // Valid entries in rows [p0, p1) × columns [j0, j1), iterating over pixels.
  std::int64_t count_by_pixel(std::int64_t p0, std::int64_t p1, std::int64_t j0,
                              std::int64_t j1) const {
    if (all_valid_) return (p1 - p0) * (j1 - j0);
    std::int64_t n = 0;
    for (std::int64_t p = p0; p < p1; ++p) {
      const std::int64_t row_limit =
          std::min(l_.filter_h, l_.ifmap_h - (p / o_.ofmap_w) * l_.stride_h);
      const std::int64_t col_limit =
          std::min(l_.filter_w, l_.ifmap_w - (p % o_.ofmap_w) * l_.stride_w);
      n += valid_window_prefix(j1, row_limit, col_limit) -
           valid_window_prefix(j0, row_limit, col_limit);
    }
    return n;
  }

  // Valid entries in all rows × columns [j0, j1), iterating over columns.
  std::int64_t count_all_pixels(std::int64_t j0, std::int64_t j1) const {
    if (all_valid_) return o_.m * (j1 - j0);
    std::int64_t n = 0;
    for (std::int64_t j = j0; j < j1; ++j) {
      const std::int64_t crow = j / (l_.filter_w * l_.channels);
      const std::int64_t ccol = (j / l_.channels) % l_.filter_w;
      n += pixels_reaching(crow, l_.ifmap_h, l_.stride_h, o_.ofmap_h) *
           pixels_reaching(ccol, l_.ifmap_w, l_.stride_w, o_.ofmap_w);
    }
    return n;
  }

  // The whole matrix, from the same product as count_all_pixels().
  std::int64_t count_all() const {
    if (all_valid_) return layer_mul(o_.m, o_.k, "ifmap operand size");
    std::int64_t rows = 0;
    for (std::int64_t crow = 0; crow < l_.filter_h; ++crow) {
      rows += pixels_reaching(crow, l_.ifmap_h, l_.stride_h, o_.ofmap_h);
    }
    std::int64_t cols = 0;
    for (std::int64_t ccol = 0; ccol < l_.filter_w; ++ccol) {
      cols += pixels_reaching(ccol, l_.ifmap_w, l_.stride_w, o_.ofmap_w);
    }
    return layer_mul(layer_mul(rows, cols, "ifmap operand size"), l_.channels,
                     "ifmap operand size");
  }

 private:
  // Window elements j < n with crow < row_limit and ccol < col_limit.
  std::int64_t valid_window_prefix(std::int64_t n, std::int64_t row_limit,
                                   std::int64_t col_limit) const {
    const std::int64_t row_len = l_.filter_w * l_.channels;
    const std::int64_t whole_rows = n / row_len;
    std::int64_t v = std::min(whole_rows, row_limit) * col_limit * l_.channels;
    if (whole_rows < row_limit) {
      const std::int64_t rest = n % row_len;
      const std::int64_t whole_cols = rest / l_.channels;
      v += std::min(whole_cols, col_limit) * l_.channels;
      if (whole_cols < col_limit) v += rest % l_.channels;
    }
    return v;
  }

  // Output positions o in [0, out) with o·stride + offset < extent.
  static std::int64_t pixels_reaching(std::int64_t offset, std::int64_t extent, std::int64_t stride,
                                      std::int64_t out) {
    return std::min(out, ceil_div(extent - offset, stride));
  }

  const ConvLayer& l_;
  const OperandMatrices& o_;
  bool all_valid_ = true;
};

std::int64_t fold_cycles(const SystolicArray& a, const Mapping& mp) {
  // os: the ifmap demand of a fold is T lines plus cols - 1 drain lines,
  // skewed over the rows (+ rows - 1). ws and is add rows lines to load the
  // stationary operand first (create_ifmap_demand_mat / create_filter_demand_mat).
  std::int64_t lines =
      layer_add(mp.t, layer_add(a.rows, a.cols, "cycles per fold") - 2, "cycles per fold");
  if (a.dataflow != Dataflow::kOutputStationary)
    lines = layer_add(lines, a.rows, "cycles per fold");
  return lines;
}

struct Validated {
  OperandMatrices operands;
  Mapping mapping;
  std::int64_t row_folds;
  std::int64_t col_folds;
};

Validated prepare(const SystolicArray& array, const ConvLayer& layer) {
  validate(array);
  Validated v{};
  v.operands = operand_matrices(layer);
  v.mapping = mapping(array.dataflow, v.operands);
  // Every per-fold count below is a block of one of these matrices.
  layer_mul(v.operands.m, v.operands.k, "ifmap operand size");
  layer_mul(v.operands.k, v.operands.n, "filter operand size");
  layer_mul(v.operands.m, v.operands.n, "ofmap operand size");
  v.row_folds = ceil_div(v.mapping.sr, array.rows);
  v.col_folds = ceil_div(v.mapping.sc, array.cols);
  return v;
}

}  // namespace

Dataflow parse_dataflow(std::string_view name) {
  if (name == "os") return Dataflow::kOutputStationary;
  if (name == "ws") return Dataflow::kWeightStationary;
  if (name == "is") return Dataflow::kInputStationary;
  throw std::invalid_argument("failed to parse dataflow '" + std::string(name) +
                              "': must be os, ws or is");
}

std::string_view dataflow_name(Dataflow dataflow) {
  switch (dataflow) {
    case Dataflow::kOutputStationary:
      return "os";
    case Dataflow::kWeightStationary:
      return "ws";
    case Dataflow::kInputStationary:
      return "is";
  }
  return "?";
}

ConvLayer to_conv_layer(const Gemm& gemm) {
  require_positive(gemm.m, "gemm", "m");
  require_positive(gemm.n, "gemm", "n");
  require_positive(gemm.k, "gemm", "k");
  ConvLayer l;
  l.ifmap_h = gemm.m;
  l.ifmap_w = gemm.k;
  l.filter_h = 1;
  l.filter_w = gemm.k;
  l.channels = 1;
  l.num_filters = gemm.n;
  l.stride_h = 1;
  l.stride_w = 1;
  return l;
}

OperandMatrices operand_matrices(const ConvLayer& layer) {
  validate(layer);
  OperandMatrices o;
  // ceil((ifmap - filter + stride) / stride), as topo_calc_hyperparams does.
  o.ofmap_h = ceil_div(layer.ifmap_h - layer.filter_h + layer.stride_h, layer.stride_h);
  o.ofmap_w = ceil_div(layer.ifmap_w - layer.filter_w + layer.stride_w, layer.stride_w);
  o.m = layer_mul(o.ofmap_h, o.ofmap_w, "ofmap pixels");
  o.n = layer.num_filters;
  o.k = layer_mul(layer_mul(layer.filter_h, layer.filter_w, "window size"), layer.channels,
                  "window size");
  return o;
}

Mapping mapping(Dataflow dataflow, const OperandMatrices& o) {
  switch (dataflow) {
    case Dataflow::kOutputStationary:
      return {o.m, o.n, o.k};
    case Dataflow::kWeightStationary:
      return {o.k, o.n, o.m};
    case Dataflow::kInputStationary:
      return {o.k, o.m, o.n};
  }
  throw std::invalid_argument("failed to map operands with dataflow " +
                              std::to_string(static_cast<int>(dataflow)) +
                              ": must be os, ws or is");
}

ComputeResult simulate_compute(const SystolicArray& array, const ConvLayer& layer) {
  const Validated v = prepare(array, layer);
  const OperandMatrices& o = v.operands;
  const Mapping& mp = v.mapping;

  ComputeResult r;
  r.operands = o;
  r.mapping = mp;
  r.row_folds = v.row_folds;
  r.col_folds = v.col_folds;
  r.folds = layer_mul(v.row_folds, v.col_folds, "number of folds");
  r.cycles_per_fold = fold_cycles(array, mp);
  r.cycles = layer_mul(r.folds, r.cycles_per_fold, "total cycles") - 1;
  r.macs = layer_mul(layer_mul(o.m, o.n, "MAC count"), o.k, "MAC count");
  const std::int64_t pes = layer_mul(array.rows, array.cols, "PE count");
  if (r.cycles == 0) {
    throw std::domain_error(
        "failed to model a single MAC on a 1x1 array in os: SCALE-Sim reports 0 cycles (the index "
        "of the last cycle), so utilization is undefined");
  }
  r.utilization =
      static_cast<double>(r.macs) / (static_cast<double>(r.cycles) * static_cast<double>(pes));

  // Σ_folds rows_used · cols_used = Sr · Sc: the row folds tile Sr and the
  // column folds tile Sc.
  const double used_sum = static_cast<double>(mp.sr) * static_cast<double>(mp.sc);
  const double folds = static_cast<double>(r.folds);
  r.mapping_efficiency = used_sum / (folds * static_cast<double>(pes));
  const double util_cycles =
      static_cast<double>(r.cycles_per_fold) +
      (array.dataflow == Dataflow::kOutputStationary ? 0.0 : static_cast<double>(array.cols - 1));
  r.compute_utilization =
      used_sum * static_cast<double>(mp.t) / (folds * static_cast<double>(pes) * util_cycles);

  // Totals in elements: each operand block is read once per fold that needs it.
  const IfmapValidity valid(layer, o);
  const std::int64_t ifmap_all = valid.count_all();
  const std::int64_t filter_all = layer_mul(o.k, o.n, "filter operand size");
  const std::int64_t ofmap_all = layer_mul(o.m, o.n, "ofmap operand size");
  std::int64_t ifmap = 0;
  std::int64_t filter = 0;
  std::int64_t ofmap = 0;
  switch (array.dataflow) {
    case Dataflow::kOutputStationary:  // ifmap per column fold, filter per row fold
      ifmap = layer_mul(ifmap_all, v.col_folds, "ifmap traffic");
      filter = layer_mul(filter_all, v.row_folds, "filter traffic");
      ofmap = ofmap_all;
      break;
    case Dataflow::kWeightStationary:  // ifmap per column fold, psums per row fold
      ifmap = layer_mul(ifmap_all, v.col_folds, "ifmap traffic");
      filter = filter_all;
      ofmap = layer_mul(ofmap_all, v.row_folds, "ofmap traffic");
      break;
    case Dataflow::kInputStationary:  // filter per column fold, psums per row fold
      ifmap = ifmap_all;
      filter = layer_mul(filter_all, v.col_folds, "filter traffic");
      ofmap = layer_mul(ofmap_all, v.row_folds, "ofmap traffic");
      break;
  }
  r.ifmap_read_bytes = layer_mul(ifmap, array.word_bytes, "ifmap traffic");
  r.filter_read_bytes = layer_mul(filter, array.word_bytes, "filter traffic");
  r.ofmap_write_bytes = layer_mul(ofmap, array.word_bytes, "ofmap traffic");
  return r;
}

ComputeResult simulate_compute(const SystolicArray& array, const Gemm& gemm) {
  return simulate_compute(array, to_conv_layer(gemm));
}

FoldStats fold_stats(const SystolicArray& array, const ConvLayer& layer, std::int64_t index) {
  const Validated v = prepare(array, layer);
  const std::int64_t folds = layer_mul(v.row_folds, v.col_folds, "number of folds");
  if (index < 0 || index >= folds) {
    throw std::out_of_range("failed to get fold " + std::to_string(index) + ": the layer has " +
                            std::to_string(folds) + " folds");
  }
  const OperandMatrices& o = v.operands;
  const Mapping& mp = v.mapping;

  FoldStats f;
  f.row_fold = index % v.row_folds;
  f.col_fold = index / v.row_folds;
  const std::int64_t r0 = f.row_fold * array.rows;
  const std::int64_t r1 = std::min(r0 + array.rows, mp.sr);
  const std::int64_t c0 = f.col_fold * array.cols;
  const std::int64_t c1 = std::min(c0 + array.cols, mp.sc);
  f.rows_used = r1 - r0;
  f.cols_used = c1 - c0;
  f.cycles = fold_cycles(array, mp);

  // Products of a block's sides, each at most an operand matrix's size.
  const IfmapValidity valid(layer, o);
  std::int64_t ifmap = 0;
  std::int64_t filter = 0;
  std::int64_t ofmap = 0;
  switch (array.dataflow) {
    case Dataflow::kOutputStationary:  // rows: pixels [r0, r1); cols: filters [c0, c1)
      ifmap = valid.count_by_pixel(r0, r1, 0, o.k);
      filter = layer_mul(o.k, f.cols_used, "filter traffic");
      ofmap = f.rows_used * f.cols_used;
      break;
    case Dataflow::kWeightStationary:  // rows: window [r0, r1); cols: filters [c0, c1)
      ifmap = valid.count_all_pixels(r0, r1);
      filter = f.rows_used * f.cols_used;
      ofmap = layer_mul(o.m, f.cols_used, "ofmap traffic");
      break;
    case Dataflow::kInputStationary:  // rows: window [r0, r1); cols: pixels [c0, c1)
      ifmap = valid.count_by_pixel(c0, c1, r0, r1);
      filter = layer_mul(o.n, f.rows_used, "filter traffic");
      ofmap = layer_mul(o.n, f.cols_used, "ofmap traffic");
      break;
  }
  f.ifmap_read_bytes = layer_mul(ifmap, array.word_bytes, "ifmap traffic");
  f.filter_read_bytes = layer_mul(filter, array.word_bytes, "filter traffic");
  f.ofmap_write_bytes = layer_mul(ofmap, array.word_bytes, "ofmap traffic");
  return f;
}

FoldStats fold_stats(const SystolicArray& array, const Gemm& gemm, std::int64_t index) {
  return fold_stats(array, to_conv_layer(gemm), index);
}

}  // namespace eulernpu::npu_sim
