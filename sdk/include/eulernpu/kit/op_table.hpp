// The one table of cpu_ref's operators: it declares the ops to the host
// (capability matrix), decides what lowers (query), and picks the kernel
// (run). Adding an op means adding one row.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/sdk/abi.h"
#include "eulernpu/sdk/graph.hpp"
#include "eulernpu/sdk/int8_ops.hpp"

namespace eulernpu::kit {

using kernels::Int8GemmIsa;

// Element-type masks for OpEntry::dtypes.
inline constexpr uint32_t kF32 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT32);
inline constexpr uint32_t kInts = ENP_DTYPE_BIT(ENP_DTYPE_INT8) | ENP_DTYPE_BIT(ENP_DTYPE_UINT8) |
                                  ENP_DTYPE_BIT(ENP_DTYPE_INT16) | ENP_DTYPE_BIT(ENP_DTYPE_UINT16) |
                                  ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_UINT32) |
                                  ENP_DTYPE_BIT(ENP_DTYPE_INT64) | ENP_DTYPE_BIT(ENP_DTYPE_UINT64);
inline constexpr uint32_t kBool = ENP_DTYPE_BIT(ENP_DTYPE_BOOL);
inline constexpr uint32_t kAnyDtype =
    kF32 | kInts | kBool | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16) | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);

// A tensor in the executor's arena (or a weight in the artifact).
struct Buffer {
  int32_t dtype = ENP_DTYPE_UNDEFINED;
  std::vector<int64_t> shape;
  void* data = nullptr;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// Resolves a tensor attribute stored in the artifact's weights.
using TensorLookup = const Buffer* (*)(const void* state, const std::string& key);

// Kernels read attributes through the accessors below (op_table.cpp), so
// their files need only json_fwd.hpp: parsing json.hpp took 2.7 s of each
// kernel file's compile (the kit, and every exported bundle, builds some 30).
struct KernelContext {
  const nlohmann::json& attributes;
  std::span<const Buffer> inputs;  // dtype UNDEFINED for omitted optionals
  std::span<Buffer> outputs;       // shapes and storage set by the executor
  int64_t opset;
  int threads = 1;  // worker threads the kernel may use (>= 1)
  TensorLookup lookup = nullptr;
  const void* lookup_state = nullptr;
  // The int8 GEMM implementation (same bytes whichever runs); tests and
  // benchmarks set it to compare them.
  Int8GemmIsa int8_gemm_isa = Int8GemmIsa::kAuto;
  // An activation a kernel may apply as it stores values: Relu (x > 0 or
  // NaN: x, else +0), or Clip to [lo, hi] (both numbers) as min(max(x, lo),
  // hi) with a NaN x kept — the elementwise chain's definitions
  // (elementwise_chain.hpp), which a kernel's own form must match bit for
  // bit.
  struct StoreClamp {
    bool relu = false;
    float lo = 0.0f, hi = 0.0f;
  };
  // Set by the executor when the elementwise nodes after this one run
  // fused into it (a Conv's activation, execute.cpp): the kernel (float32
  // Conv's, the only one the executor gives one) calls fn on every range
  // [at, at + len) of output 0 once the range holds its final values, from
  // any worker thread, while the range is still in cache.
  struct Epilogue {
    void (*fn)(const void* state, int64_t at, int64_t len) = nullptr;
    const void* state = nullptr;
    // Set where the chain begins with Relu or Clip (`clamp`), nothing else
    // reads output 0 and no later step reads the chain's output as an
    // operand: a kernel may instead store each value of output 0 through
    // that op straight into `clamped` (the chain's output, indexed as
    // output 0), leave output 0 unwritten, and call `rest` (the steps
    // after the first, in place on `clamped`; null when there are none) on
    // each range, saving the pass of fn.
    float* clamped = nullptr;
    StoreClamp clamp;
    void (*rest)(const void* state, int64_t at, int64_t len) = nullptr;
  };
  const Epilogue* epilogue = nullptr;
  // Set by the executor where every input after the first is a weight: a
  // slot kept from run to run of one prepared graph, where the kernel may
  // keep what it derives from those inputs alone (cpu_ref's float32 Conv
  // keeps W packed for its GEMM). Null elsewhere.
  std::shared_ptr<void>* cache = nullptr;
  // Set by the executor for every node: a slot kept from run to run of one
  // prepared graph, where the kernel may keep what it derives from its
  // attributes alone (QAdd's table of every result). Null elsewhere.
  std::shared_ptr<void>* attribute_cache = nullptr;

  bool has_attr(const char* name) const;
  int64_t attr_int(const char* name, int64_t fallback) const;
  double attr_float(const char* name, double fallback) const;
  std::string attr_string(const char* name, std::string fallback) const;
  std::vector<int64_t> attr_ints(const char* name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> attr_floats(const char* name) const;
  // A TENSOR attribute (e.g. ConstantOfShape's value); null if absent.
  const Buffer* attr_tensor(const char* name) const;
  bool has_input(size_t i) const {
    return i < inputs.size() && inputs[i].dtype != ENP_DTYPE_UNDEFINED;
  }
};

using KernelFn = void (*)(const KernelContext& ctx);
// Lowering-time check beyond op and dtype; returns why a node can't lower.
using CheckFn = std::optional<std::string> (*)(const sdk::NodeView& node,
                                               const sdk::GraphView& graph);

struct OpEntry {
  const char* op_type;
  int32_t since_version;
  int32_t until_version;  // 0 = open-ended
  // Element types of the first input (of the first output for ops without
  // inputs) the kernel handles; `check` refines other inputs' types.
  uint32_t dtypes;
  const char* constraints;
  CheckFn check;  // may be null
  KernelFn kernel;
  // The op's domain: "" is ONNX's; since/until are versions of this domain.
  const char* domain = "";
};

// eulernpu's own operator domain (docs/quantization.md).
inline constexpr const char* kEulerNpuDomain = sdk::int8_ops::kDomain.data();

// The attributes of a QGemm or QConv whose weights the compiler packed
// (lower_graph's pack_int8_weights): W's layout (kernels::kPanelLayout) and
// its logical shape; input 1 is then the packed bytes and input 2 the
// biases with the input zero point folded in.
inline constexpr const char* kWeightLayoutAttr = "w_layout";
inline constexpr const char* kWeightShapeAttr = "w_shape";

std::span<const OpEntry> op_table();

// A group of ops: the entries of one kernels_<name>.cpp file.
struct OpGroup {
  const char* name;
  std::vector<OpEntry> (*ops)();
};
// The groups op_table() joins (op_groups.cpp).
std::span<const OpGroup> op_groups();

// The groups, one per kernels_<group>.cpp file.
std::vector<OpEntry> unary_ops();
std::vector<OpEntry> binary_ops();
std::vector<OpEntry> softmax_ops();
std::vector<OpEntry> cast_ops();
std::vector<OpEntry> norm_ops();
std::vector<OpEntry> nn_ops();
std::vector<OpEntry> conv_ops();
std::vector<OpEntry> pool_ops();
std::vector<OpEntry> resize_ops();
std::vector<OpEntry> shape_ops();
std::vector<OpEntry> reduce_ops();
std::vector<OpEntry> transformer_ops();
std::vector<OpEntry> loss_ops();
std::vector<OpEntry> misc_ops();
std::vector<OpEntry> einsum_ops();
std::vector<OpEntry> image_ops();
std::vector<OpEntry> signal_ops();
std::vector<OpEntry> quant_ops();
std::vector<OpEntry> sequence_ops();
std::vector<OpEntry> rnn_ops();
std::vector<OpEntry> detection_ops();
std::vector<OpEntry> linalg_ops();
std::vector<OpEntry> text_ops();
std::vector<OpEntry> reverse_ops();
std::vector<OpEntry> qops_ops();   // ai.eulernpu, kernels_qops.cpp
std::vector<OpEntry> qconv_ops();  // ai.eulernpu, kernels_qconv.cpp
std::vector<OpEntry> qpool_ops();  // ai.eulernpu, kernels_qpool.cpp
// The entry for `op_type` of `domain` ("" for ONNX) at that domain's
// `opset`, or null.
const OpEntry* find_op(std::string_view domain, std::string_view op_type, int64_t opset);
// Whether any entry belongs to `domain`.
bool has_domain(std::string_view domain);
// op_table() as the ABI's declaration array.
const std::vector<enp_op_support_t>& op_declarations();

}  // namespace eulernpu::kit
