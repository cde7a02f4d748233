// Data movement (eulernpu/kernels/movement.hpp).
#include "eulernpu/kernels/movement.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace eulernpu::kernels {
namespace {

// Copies are cheap per element: threads pay off only on large tensors,
// and for whole rows copied at once (memcpy runs near the memory's speed)
// only past a few MB of output.
constexpr int64_t kMoveGrain = int64_t{1} << 16;   // elements moved one by one
constexpr int64_t kBlockGrain = int64_t{1} << 22;  // bytes moved in blocks

// Elements move by a fixed-size memcpy of their width: one load and one
// store, with no aliasing question whatever the dtype.
// How a row's elements lie in x: one block, one value repeated, or apart.
enum class RowKind { kContiguous, kBroadcast, kStrided };

template <size_t W, RowKind kKind>
void copy_rows(const StridedView& v, const uint8_t* x, uint8_t* y, int64_t begin, int64_t end) {
  const size_t outer = v.dims.size() - 1;
  const int64_t inner = v.dims.back(), step = v.strides.back();
  // The multi-index of row `begin`, and its offset into x.
  Dims idx(outer);
  int64_t off = v.offset;
  for (size_t d = outer, r = static_cast<size_t>(begin); d-- > 0;) {
    const auto dim = static_cast<size_t>(v.dims[d]);
    idx[d] = static_cast<int64_t>(r % dim);
    r /= dim;
    off += idx[d] * v.strides[d];
  }
  for (int64_t row = begin; row < end; ++row) {
    uint8_t* out = y + static_cast<size_t>(row * inner) * W;
    const uint8_t* from = x + static_cast<size_t>(off) * W;
    if constexpr (kKind == RowKind::kContiguous) {
      std::memcpy(out, from, static_cast<size_t>(inner) * W);
    } else if constexpr (kKind == RowKind::kBroadcast) {
      if constexpr (W == 1) {
        std::memset(out, *from, static_cast<size_t>(inner));
      } else {
        for (int64_t j = 0; j < inner; ++j) std::memcpy(out + static_cast<size_t>(j) * W, from, W);
      }
    } else if constexpr (W == 1) {  // bytes may be read as bytes: no memcpy needed
      for (int64_t j = 0; j < inner; ++j) out[j] = from[j * step];
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        std::memcpy(out + static_cast<size_t>(j) * W, from + static_cast<size_t>(j * step) * W, W);
      }
    }
    for (size_t d = outer; d-- > 0;) {
      off += v.strides[d];
      if (++idx[d] < v.dims[d]) break;
      off -= v.strides[d] * v.dims[d];
      idx[d] = 0;
    }
  }
}

// The same copy with fewer axes: extent-1 axes dropped, and an axis merged
// into the next where x steps over that one whole (a transpose's untouched
// axes, the inner axes of a slice). Rows get longer and their count smaller.
StridedView coalesced(const StridedView& v) {
  StridedView out{{}, {}, v.offset};
  for (size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d] == 1) continue;
    if (!out.dims.empty() && out.strides.back() == v.strides[d] * v.dims[d]) {
      out.dims.back() *= v.dims[d];
      out.strides.back() = v.strides[d];
    } else {
      out.dims.push_back(v.dims[d]);
      out.strides.push_back(v.strides[d]);
    }
  }
  if (out.dims.empty()) out.dims = {1}, out.strides = {1};
  return out;
}

template <size_t W>
void copy_view_as(const StridedView& v, const uint8_t* x, uint8_t* y, int64_t rows, int threads,
                  const TaskRunner& r) {
  const int64_t step = v.strides.back();
  for_each_range(r, rows, threads, [&](int64_t begin, int64_t end) {
    if (step == 1) {
      copy_rows<W, RowKind::kContiguous>(v, x, y, begin, end);
    } else if (step == 0) {
      copy_rows<W, RowKind::kBroadcast>(v, x, y, begin, end);
    } else {
      copy_rows<W, RowKind::kStrided>(v, x, y, begin, end);
    }
  });
}

// Every element of each of `outer` rows repeated `s` times: a gather along
// the last axis whose index j reads j / s (a nearest Resize by an integer
// factor, the common 2x upsampling of FPN and U-Net decoders), as loops the
// compiler vectorizes instead of one indexed copy per output. Elements move
// by fixed-size memcpy, as everywhere in this file: no alignment or
// aliasing assumed.
template <size_t W>
void repeat_rows_as(int64_t axis_dim, int64_t s, const uint8_t* x, uint8_t* y, int64_t outer,
                    int threads, const TaskRunner& r) {
  for_each_range(r, outer, threads, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const uint8_t* in = x + static_cast<size_t>(o * axis_dim) * W;
      uint8_t* out = y + static_cast<size_t>(o * axis_dim * s) * W;
      if (s == 2) {
        for (int64_t i = 0; i < axis_dim; ++i) {
          std::memcpy(out + static_cast<size_t>(2 * i) * W, in + static_cast<size_t>(i) * W, W);
          std::memcpy(out + static_cast<size_t>(2 * i + 1) * W, in + static_cast<size_t>(i) * W, W);
        }
      } else {
        for (int64_t i = 0; i < axis_dim; ++i) {
          for (int64_t k = 0; k < s; ++k) {
            std::memcpy(out + static_cast<size_t>(i * s + k) * W, in + static_cast<size_t>(i) * W,
                        W);
          }
        }
      }
    }
  });
}

// Whether index j is j / s for every j, s = count / axis_dim >= 2.
bool repeats_each(const int64_t* indices, int64_t count, int64_t axis_dim, int64_t& s) {
  if (axis_dim <= 0 || count < 2 * axis_dim || count % axis_dim != 0) return false;
  s = count / axis_dim;
  for (int64_t j = 0; j < count; ++j) {
    if (indices[j] != j / s) return false;
  }
  return true;
}

template <size_t W>
void gather_rows_as(const GatherParams& p, const int64_t* indices, int64_t count, const uint8_t* x,
                    uint8_t* y, int64_t rows, int threads, const TaskRunner& r) {
  for_each_range(r, rows, threads, [&](int64_t begin, int64_t end) {
    int64_t o = begin / count, j = begin % count;
    for (int64_t row = begin; row < end; ++row) {
      std::memcpy(y + static_cast<size_t>(row) * W,
                  x + static_cast<size_t>(o * p.axis_dim + indices[j]) * W, W);
      if (++j == count) j = 0, ++o;
    }
  });
}

// A run of the last axis's map: `len` outputs from j that read consecutive
// inputs from m on, or the fill value (m < 0).
struct PadRun {
  int64_t j, len, m;
};

// The last axis's map as runs: a constant pad is one copy between two
// fills, so each row is a few memcpy calls instead of one per element.
std::vector<PadRun> pad_runs(const Dims& last) {
  std::vector<PadRun> runs;
  for (int64_t j = 0; j < static_cast<int64_t>(last.size()); ++j) {
    const int64_t m = last[static_cast<size_t>(j)];
    if (!runs.empty()) {
      PadRun& r = runs.back();
      const bool fills = r.m < 0 && m < 0;
      const bool follows = r.m >= 0 && m == r.m + r.len;
      if (fills || follows) {
        ++r.len;
        continue;
      }
    }
    runs.push_back({j, 1, m < 0 ? -1 : m});
  }
  return runs;
}

// Pad's rows of y: each row's outer coordinates give one offset into x (or
// the padding), its last axis the runs of its map.
struct PadRows {
  const PadParams& p;
  const Dims& x_strides;
  const std::vector<PadRun>& runs;
  const uint8_t* x;
  const void* fill;
  uint8_t* y;

  template <size_t W>
  void run(int64_t begin, int64_t end) const {
    const size_t rank = p.y.size();
    const int64_t inner = p.y.back();
    for (int64_t row = begin; row < end; ++row) {
      int64_t off = 0;
      auto rest = static_cast<size_t>(row);
      for (size_t d = rank - 1; d-- > 0 && off >= 0;) {
        const auto dim = static_cast<size_t>(p.y[d]);
        const int64_t m = p.maps[d][rest % dim];
        rest /= dim;
        off = m < 0 ? -1 : off + m * x_strides[d];
      }
      uint8_t* out = y + static_cast<size_t>(row * inner) * W;
      for (const PadRun& r : runs) {
        uint8_t* to = out + static_cast<size_t>(r.j) * W;
        if (off < 0 || r.m < 0) {
          for (int64_t k = 0; k < r.len; ++k) std::memcpy(to + static_cast<size_t>(k) * W, fill, W);
        } else {
          std::memcpy(to, x + static_cast<size_t>(off + r.m) * W, static_cast<size_t>(r.len) * W);
        }
      }
    }
  }
};

}  // namespace

Dims row_major_strides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

StridedView transpose_view(const Dims& x, const Dims& perm) {
  const Dims s = row_major_strides(x);
  StridedView v;
  for (int64_t p : perm) {
    v.dims.push_back(x[static_cast<size_t>(p)]);
    v.strides.push_back(s[static_cast<size_t>(p)]);
  }
  return v;
}

StridedView expand_view(const Dims& x, const Dims& y) {
  const Dims s = row_major_strides(x);
  StridedView v{y, Dims(y.size(), 0), 0};
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t d = y.size() - x.size() + i;
    v.strides[d] = x[i] == 1 ? 0 : s[i];
  }
  return v;
}

// Tile reads dims (r0, d0, r1, d1, ...) with strides (0, s0, 0, s1, ...).
StridedView tile_view(const Dims& x, const Dims& repeats) {
  const Dims s = row_major_strides(x);
  StridedView v;
  for (size_t d = 0; d < x.size(); ++d) {
    v.dims.insert(v.dims.end(), {repeats[d], x[d]});
    v.strides.insert(v.strides.end(), {0, s[d]});
  }
  return v;
}

// Both are a transpose of a 6-D view of x.
StridedView depth_to_space_view(const Dims& x, int64_t b, bool crd) {
  const int64_t n = x[0], c = x[1] / (b * b), h = x[2], w = x[3];
  return crd ? transpose_view({n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3})
             : transpose_view({n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2});
}

StridedView space_to_depth_view(const Dims& x, int64_t b) {
  return transpose_view({x[0], x[1], x[2] / b, b, x[3] / b, b}, {0, 3, 5, 1, 2, 4});
}

SliceAxis slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start - 1) / step + 1 : 0, step};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  const uint64_t magnitude = 0 - static_cast<uint64_t>(step);
  return {start,
          start > end ? static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / magnitude) + 1
                      : 0,
          step};
}

StridedView slice_view(const Dims& x, const std::vector<SliceAxis>& axes) {
  const Dims s = row_major_strides(x);
  StridedView v{x, s, 0};
  for (size_t d = 0; d < x.size(); ++d) {
    const SliceAxis& a = axes[d];
    v.dims[d] = a.length;
    // With two or more elements |step| < dim, so step * stride cannot
    // overflow; with fewer the stride is never used.
    v.strides[d] = a.length > 1 ? a.step * s[d] : 0;
    if (a.length > 0) v.offset += a.start * s[d];
  }
  return v;
}

void copy_view(const StridedView& view, size_t width, const void* x, void* y, const TaskRunner& r) {
  const int64_t n = product(view.dims);
  if (n == 0) return;
  const auto* src = static_cast<const uint8_t*>(x);
  auto* dst = static_cast<uint8_t*>(y);
  const StridedView v = coalesced(view);
  const int64_t rows = n / v.dims.back();
  const int threads = v.strides.back() == 1
                          ? threads_for(r, n * static_cast<int64_t>(width), kBlockGrain)
                          : threads_for(r, n, kMoveGrain);
  switch (width) {
    case 1:
      return copy_view_as<1>(v, src, dst, rows, threads, r);
    case 2:
      return copy_view_as<2>(v, src, dst, rows, threads, r);
    case 4:
      return copy_view_as<4>(v, src, dst, rows, threads, r);
    default:
      return copy_view_as<8>(v, src, dst, rows, threads, r);
  }
}

void gather(const GatherParams& p, const int64_t* indices, int64_t count, const void* x, void* y,
            const TaskRunner& r) {
  const auto* src = static_cast<const uint8_t*>(x);
  auto* dst = static_cast<uint8_t*>(y);
  const int64_t rows = p.outer * count;
  const int threads =
      p.inner == 1 ? threads_for(r, rows, kMoveGrain)
                   : threads_for(r, rows * p.inner * static_cast<int64_t>(p.width), kBlockGrain);
  // One element per row (the last axis of a Resize): a fixed-size copy.
  if (p.inner == 1) {
    int64_t s = 0;
    if (repeats_each(indices, count, p.axis_dim, s)) {
      switch (p.width) {
        case 1:
          return repeat_rows_as<1>(p.axis_dim, s, src, dst, p.outer, threads, r);
        case 2:
          return repeat_rows_as<2>(p.axis_dim, s, src, dst, p.outer, threads, r);
        case 4:
          return repeat_rows_as<4>(p.axis_dim, s, src, dst, p.outer, threads, r);
        case 8:
          return repeat_rows_as<8>(p.axis_dim, s, src, dst, p.outer, threads, r);
        default:
          break;
      }
    }
    switch (p.width) {
      case 1:
        return gather_rows_as<1>(p, indices, count, src, dst, rows, threads, r);
      case 2:
        return gather_rows_as<2>(p, indices, count, src, dst, rows, threads, r);
      case 4:
        return gather_rows_as<4>(p, indices, count, src, dst, rows, threads, r);
      default:
        return gather_rows_as<8>(p, indices, count, src, dst, rows, threads, r);
    }
  }
  const size_t block = static_cast<size_t>(p.inner) * p.width;
  for_each_range(r, rows, threads, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row / count, j = row % count;
      std::memcpy(dst + static_cast<size_t>(row) * block,
                  src + static_cast<size_t>(o * p.axis_dim + indices[j]) * block, block);
    }
  });
}

Dims pad_axis_map(int64_t dim, int64_t before, int64_t out_dim, PadMode mode) {
  Dims map(static_cast<size_t>(out_dim));
  for (int64_t o = 0; o < out_dim; ++o) {
    const int64_t j = o - before;
    int64_t src = j;
    if (j < 0 || j >= dim) {
      switch (mode) {
        case PadMode::kConstant:
          src = -1;
          break;
        case PadMode::kEdge:
          src = std::clamp<int64_t>(j, 0, dim - 1);
          break;
        case PadMode::kWrap:
          src = ((j % dim) + dim) % dim;
          break;
        case PadMode::kReflect: {  // mirrored around the edge elements
          const int64_t period = 2 * (dim - 1);
          const int64_t m = period == 0 ? 0 : ((j % period) + period) % period;
          src = m < dim ? m : period - m;
          break;
        }
      }
    }
    map[static_cast<size_t>(o)] = src;
  }
  return map;
}

void pad(const PadParams& p, size_t width, const void* x, const void* fill, void* y,
         const TaskRunner& r) {
  const int64_t n = product(p.y);
  if (n == 0) return;
  auto* dst = static_cast<uint8_t*>(y);
  if (p.y.empty()) {
    std::memcpy(dst, x, width);
    return;
  }
  const Dims s = row_major_strides(p.x);
  const int64_t rows = n / p.y.back();
  const std::vector<PadRun> runs = pad_runs(p.maps.back());
  const PadRows rows_of{p, s, runs, static_cast<const uint8_t*>(x), fill, dst};
  const int threads = threads_for(r, n, kMoveGrain);
  switch (width) {
    case 1:
      return for_each_range(r, rows, threads, [&](int64_t b, int64_t e) { rows_of.run<1>(b, e); });
    case 2:
      return for_each_range(r, rows, threads, [&](int64_t b, int64_t e) { rows_of.run<2>(b, e); });
    case 4:
      return for_each_range(r, rows, threads, [&](int64_t b, int64_t e) { rows_of.run<4>(b, e); });
    default:
      return for_each_range(r, rows, threads, [&](int64_t b, int64_t e) { rows_of.run<8>(b, e); });
  }
}

}  // namespace eulernpu::kernels
