// The ops that only move or select elements (sdk/int8_ops.hpp,
// kMovementOps: Reshape to Pad, and Resize in mode nearest), for every
// element type: they copy whole elements by width (1, 2, 4 or 8 bytes), so
// the same code moves int8 codes and float32 values, and gives the same
// bytes on every machine.
//
// Three copies cover them all: a strided view (Transpose, Slice, Split,
// Expand, Tile, DepthToSpace, SpaceToDepth), a gather along one axis
// (Gather, and each axis of a nearest Resize with its source indices), and
// a copy through per-axis index maps with a fill value (Pad). Reshape,
// Flatten, Squeeze, Unsqueeze and Identity copy the buffer as it is.
//
// The caller has checked the attributes against the shapes (a backend's
// lowering or its run-time checks): the views here trust what they get.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "eulernpu/kernels/runner.hpp"
#include "eulernpu/kernels/shape.hpp"

namespace eulernpu::kernels {

// y[i0, i1, ...] = x[offset + i0 * strides[0] + i1 * strides[1] + ...],
// with y dense and row-major; strides count elements of x, 0 repeats.
struct StridedView {
  Dims dims;  // of y
  Dims strides;
  int64_t offset = 0;
};

// Row-major strides of a dense tensor.
Dims row_major_strides(const Dims& dims);

// The whole of x, axes in the order `perm` names (a permutation of 0..rank-1).
StridedView transpose_view(const Dims& x, const Dims& perm);

// x broadcast (numpy rules, right-aligned) to y; x must broadcast.
StridedView expand_view(const Dims& x, const Dims& y);

// x repeated repeats[d] times along each axis d (one repeat per axis).
StridedView tile_view(const Dims& x, const Dims& repeats);

// NCHW x rearranged by `block`: DepthToSpace in mode DCR or CRD, and
// SpaceToDepth. x's channels divide by block², its H and W (for
// SpaceToDepth) by block.
StridedView depth_to_space_view(const Dims& x, int64_t block, bool crd);
StridedView space_to_depth_view(const Dims& x, int64_t block);

// One axis of a slice: `length` elements from `start`, `step` apart
// (negative steps go backwards).
struct SliceAxis {
  int64_t start = 0, length = 0, step = 1;
};

// ONNX Slice's clamping of (start, end, step) on an axis of `dim`
// elements; step is not 0.
SliceAxis slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step);

// x sliced along every axis (axes.size() == x.size()).
StridedView slice_view(const Dims& x, const std::vector<SliceAxis>& axes);

// Copies the view of x into y; tasks are chunks of y's rows.
void copy_view(const StridedView& v, size_t width, const void* x, void* y,
               const TaskRunner& r = kSerial);

// x is (outer, axis_dim, inner), y is (outer, count, inner):
// y[o, j, i] = x[o, indices[j], i]. Every index is in [0, axis_dim).
struct GatherParams {
  int64_t outer = 1, axis_dim = 0, inner = 1;
  size_t width = 1;
};

void gather(const GatherParams& p, const int64_t* indices, int64_t count, const void* x, void* y,
            const TaskRunner& r = kSerial);

// Pad: y[i0, ...] = x[map0[i0], map1[i1], ...], or `fill` where any map
// entry is -1.
enum class PadMode { kConstant, kEdge, kReflect, kWrap };

// The map of one axis: x has `dim` elements, `before` are added in front,
// y has `out_dim`. Modes other than kConstant need dim > 0.
Dims pad_axis_map(int64_t dim, int64_t before, int64_t out_dim, PadMode mode);

struct PadParams {
  Dims x, y;               // shapes, same rank
  std::vector<Dims> maps;  // one per axis, y[d] entries each
};

void pad(const PadParams& p, size_t width, const void* x, const void* fill, void* y,
         const TaskRunner& r = kSerial);

}  // namespace eulernpu::kernels
