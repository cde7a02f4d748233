#pragma once
// Chains of float32 elementwise nodes run as one pass. Exporters spell
// activations out as several nodes (hard-swish as Add, Clip, Div, Mul:
// det_ppocrv4 has 24 such chains), and node by node each writes a whole
// tensor that only the next one reads. A chain runs instead over blocks of
// the output that stay in L1, every node's op applied to the block in
// turn; each element goes through the very operations the nodes' kernels
// apply (same ops, same operand order, same float32 rounding), so the
// bytes do not change.
//
// A chain is nodes that follow each other in the schedule, each an Add,
// Sub, Mul, Div, Clip, Relu or HardSigmoid on float32 of one shape, where
// every result but the last feeds only the next node (and is no graph
// output). The other operand of a binary node is a tensor of that shape
// (the chain's input included: hard-swish below opset 14 is
// Mul(x, HardSigmoid(x))) or a single element. Results the chain does not
// write are never read; the last one is written once, and may share memory
// with an operand only element for element (in place), which the planner's
// reuse can give it.
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elementwise_common.hpp"
#include "eulernpu/kit/lowered_graph.hpp"
#include "eulernpu/sdk/simd_clones.hpp"

namespace eulernpu::kit::elementwise {

class Chain {
 public:
  // A node as the executor resolved it.
  struct Node {
    const LoweredNode* node;
    std::span<const Buffer> ins, outs;
  };

  // The chain that starts at nodes[0], if it has two nodes or more.
  // `consumers`: how many nodes read each tensor; `outputs`: the graph's.
  // With `origin` (a Conv's float32 output, read by nodes[0] alone), the
  // chain that continues from it, of one node or more: the Conv's epilogue.
  static std::optional<Chain> match(std::span<const Node> nodes,
                                    const std::map<std::string, int>& consumers,
                                    const std::set<std::string>& outputs,
                                    const Buffer* origin = nullptr) {
    Chain c;
    const Buffer* value = origin;  // the previous node's result
    if (origin != nullptr) {
      if (origin->dtype != ENP_DTYPE_FLOAT32 || origin->data == nullptr) return std::nullopt;
      c.count_ = origin->count();
      c.shape_ = origin->shape;
      c.origin_ = static_cast<const float*>(origin->data);
    }
    const size_t least = origin != nullptr ? 1 : 2;
    for (const Node& n : nodes) {
      if (value != nullptr && value != origin) {
        // The previous result must feed only this node and be no output.
        const std::string& prev = c.steps_.back().node->outputs[0];
        const auto it = consumers.find(prev);
        if (it == consumers.end() || it->second != 1 || outputs.count(prev) != 0) break;
      }
      std::optional<Step> step = c.step_of(n, value);
      if (!step) break;
      c.steps_.push_back(*step);
      value = &n.outs[0];
      c.out_ = static_cast<float*>(n.outs[0].data);
      ++c.size_;
    }
    // Trim to the longest prefix whose last result may be written over
    // its operands; a chain of one node is the node's own kernel.
    while (c.size_ >= least && !c.output_safe()) {
      c.steps_.pop_back();
      --c.size_;
      c.out_ = c.size_ > 0 ? static_cast<float*>(nodes[c.size_ - 1].outs[0].data) : nullptr;
    }
    if (c.size_ < least) return std::nullopt;
    return c;
  }

  // Whether the output lies clear of float32 `b` (a fused Conv's input,
  // which the Conv still reads after the epilogue has written some ranges).
  bool output_clear_of(const Buffer& b) const {
    if (b.data == nullptr) return true;
    if (b.dtype != ENP_DTYPE_FLOAT32) return false;
    const auto* o = reinterpret_cast<const char*>(out_);
    const auto* q = static_cast<const char*>(b.data);
    const int64_t mine = count_ * static_cast<int64_t>(sizeof(float));
    const int64_t theirs = b.count() * static_cast<int64_t>(sizeof(float));
    return q + theirs <= o || o + mine <= q;
  }

  // The ops a chain takes (ONNX's domain), whatever their operands.
  static bool takes(std::string_view op) {
    return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Clip" ||
           op == "Relu" || op == "HardSigmoid";
  }

  // How many of its nodes read the chain's input (the first, and those
  // taking it as their other operand): a fused Conv's output may have no
  // other reader.
  int input_readers() const {
    int n = 1;
    for (const Step& s : steps_) n += s.operand == origin_ && !s.scalar ? 1 : 0;
    return n;
  }

  // How many nodes of the schedule it covers.
  size_t size() const { return size_; }

  // Single-element operands, Clip's bounds and HardSigmoid's alpha and
  // beta (as lo and hi), read once per run before any write (the planner
  // may place the output over them).
  struct Operands {
    std::vector<float> scalar, lo, hi;
  };
  Operands operands() const {
    Operands o{std::vector<float>(steps_.size()), std::vector<float>(steps_.size()),
               std::vector<float>(steps_.size())};
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      if (s.kind == Kind::kHardSigmoid) {
        // As the kernel: the attributes (double) rounded to float32 once.
        const KernelContext ctx{s.node->attributes, s.ins, {}, s.node->opset};
        o.lo[i] = static_cast<float>(ctx.attr_float("alpha", 0.2));
        o.hi[i] = static_cast<float>(ctx.attr_float("beta", 0.5));
      } else if (s.kind == Kind::kClip) {
        const KernelContext ctx{s.node->attributes, s.ins, {}, s.node->opset};
        const auto bounds = clip_bounds<float>(ctx);
        o.lo[i] = bounds.first;
        o.hi[i] = bounds.second;
      } else if (s.operand != nullptr && s.scalar) {
        o.scalar[i] = *s.operand;
      }
    }
    return o;
  }

  // Elements [at, at + len) of the last node's output from the first
  // node's input. Thread-safe for disjoint ranges.
  void run_range(const Operands& ops, int64_t at, int64_t len) const {
    // Each block goes through every step in L1: in the output itself, or
    // where the output is an operand, in a local block copied out last.
    float local[kBlock];
    const bool in_output = !output_is_operand();
    for (int64_t b = at, end = at + len; b < end; b += kBlock) {
      const int64_t n = std::min<int64_t>(kBlock, end - b);
      float* v = in_output ? out_ + b : local;
      const float* in = origin_ + b;
      for (size_t i = 0; i < steps_.size(); ++i) {
        apply(steps_[i], in, v, n, b, ops.scalar[i], ops.lo[i], ops.hi[i]);
        in = v;
      }
      if (!in_output) std::memcpy(out_ + b, v, static_cast<size_t>(n) * sizeof(float));
    }
  }

  // The first step, where a kernel may apply it as it stores the chain's
  // input (KernelContext::Epilogue::clamped): Relu, or Clip to bounds that
  // are numbers, read by that step alone, with no step reading the output
  // as an operand (the rest then runs in place on the output).
  std::optional<KernelContext::StoreClamp> leading_clamp(const Operands& ops) const {
    if (steps_.empty() || input_readers() != 1 || output_is_operand()) return std::nullopt;
    const Kind k = steps_[0].kind;
    if (k == Kind::kRelu) return KernelContext::StoreClamp{true, 0.0f, 0.0f};
    if (k != Kind::kClip || is_nan(ops.lo[0]) || is_nan(ops.hi[0])) return std::nullopt;
    return KernelContext::StoreClamp{false, ops.lo[0], ops.hi[0]};
  }

  // out[j] = the clamp of in[j], as the chain's first step computes it.
  static void clamp_block(const KernelContext::StoreClamp& c, const float* in, float* out,
                          int64_t len) {
    unary_block(c.relu ? Kind::kRelu : Kind::kClip, in, out, len, c.lo, c.hi);
  }

  // out[j] = HardSigmoid of in[j] as the chain's step computes it (the
  // standalone float32 HardSigmoid kernel runs this too).
  static void hard_sigmoid_block(const float* in, float* out, int64_t len, float alpha,
                                 float beta) {
    unary_block(Kind::kHardSigmoid, in, out, len, alpha, beta);
  }

  // The steps after the first on elements [at, at + len) of the output,
  // which hold the first step's results; whether there are any.
  bool has_rest() const { return steps_.size() > 1; }
  void run_rest_range(const Operands& ops, int64_t at, int64_t len) const {
    for (int64_t b = at, end = at + len; b < end; b += kBlock) {
      const int64_t n = std::min<int64_t>(kBlock, end - b);
      float* v = out_ + b;
      for (size_t i = 1; i < steps_.size(); ++i) {
        apply(steps_[i], v, v, n, b, ops.scalar[i], ops.lo[i], ops.hi[i]);
      }
    }
  }
  float* output() const { return out_; }

  // Runs the chain: its last node's output from its first node's input.
  void run(int threads) const {
    const Operands ops = operands();
    const int64_t n = count_;
    parallel_for(n, n >= (int64_t{1} << 15) ? threads : 1,
                 [&](int64_t begin, int64_t end) { run_range(ops, begin, end - begin); });
  }

 private:
  static constexpr int64_t kBlock = 512;
  enum class Kind { kAdd, kSub, kMul, kDiv, kClip, kRelu, kHardSigmoid };

  struct Step {
    Kind kind;
    const LoweredNode* node;
    std::span<const Buffer> ins;
    const float* operand = nullptr;  // a binary node's other input
    bool scalar = false;             // ... a single element
    bool value_first = true;         // the chain's value is the left operand
  };

  // `value`: the previous node's result, or null for the chain's first.
  std::optional<Step> step_of(const Node& n, const Buffer* value) {
    const LoweredNode& node = *n.node;
    if (!node.domain.empty() || !takes(node.op) || n.outs.size() != 1 || n.ins.empty()) {
      return std::nullopt;
    }
    const Buffer& out = n.outs[0];
    if (out.dtype != ENP_DTYPE_FLOAT32) return std::nullopt;
    if (value == nullptr) {
      count_ = out.count();
      shape_ = out.shape;
    } else if (out.shape != shape_) {
      return std::nullopt;
    }
    auto full = [&](const Buffer& b) {
      return b.dtype == ENP_DTYPE_FLOAT32 && b.shape == shape_ && b.data != nullptr;
    };
    // Which input carries the chain: the previous node's result, or for
    // the first node its input 0, or input 1 when input 0 is one element.
    const Buffer* carried = value;
    if (carried == nullptr) {
      carried = n.ins.size() == 2 && !full(n.ins[0]) ? &n.ins[1] : &n.ins[0];
      origin_ = static_cast<const float*>(carried->data);
    }
    auto is_value = [&](const Buffer& b) {
      return b.data == carried->data && b.shape == carried->shape;
    };
    Step s{Kind::kAdd, &node, n.ins};
    const std::string& op = node.op;
    if (op == "Relu" || op == "Clip" || op == "HardSigmoid") {
      if (!is_value(n.ins[0]) || !full(n.ins[0])) return std::nullopt;
      s.kind = op == "Relu" ? Kind::kRelu : op == "Clip" ? Kind::kClip : Kind::kHardSigmoid;
      for (size_t i = 1; i < n.ins.size(); ++i) {
        const Buffer& b = n.ins[i];
        if (b.dtype != ENP_DTYPE_UNDEFINED && (b.dtype != ENP_DTYPE_FLOAT32 || b.count() > 1)) {
          return std::nullopt;
        }
      }
      return s;
    }
    if (op == "Add") {
      s.kind = Kind::kAdd;
    } else if (op == "Sub") {
      s.kind = Kind::kSub;
    } else if (op == "Mul") {
      s.kind = Kind::kMul;
    } else if (op == "Div") {
      s.kind = Kind::kDiv;
    } else {
      return std::nullopt;
    }
    if (n.ins.size() != 2) return std::nullopt;
    // A node that reads the value twice (x * x) is left to its kernel.
    const bool left = is_value(n.ins[0]);
    if (left == is_value(n.ins[1])) return std::nullopt;
    s.value_first = left;
    const Buffer& v = n.ins[left ? 0 : 1];
    const Buffer& other = n.ins[left ? 1 : 0];
    if (!full(v) || other.dtype != ENP_DTYPE_FLOAT32) return std::nullopt;
    if (full(other)) {
      s.scalar = false;
    } else if (other.count() == 1 && other.shape.size() <= shape_.size()) {
      s.scalar = true;
    } else {
      return std::nullopt;
    }
    s.operand = static_cast<const float*>(other.data);
    return s;
  }

  // The last result may be written over an operand only where both are
  // the same elements; single elements are read before any write.
  bool output_safe() const {
    const auto* o = reinterpret_cast<const char*>(out_);
    const int64_t bytes = count_ * static_cast<int64_t>(sizeof(float));
    auto disjoint_or_same = [&](const float* p) {
      const auto* q = reinterpret_cast<const char*>(p);
      return p == out_ || q + bytes <= o || o + bytes <= q;
    };
    if (!disjoint_or_same(origin_)) return false;
    for (const Step& s : steps_) {
      if (s.operand != nullptr && !s.scalar && !disjoint_or_same(s.operand)) return false;
    }
    return true;
  }

  // v[j] = the step's op on in[j] (in may be v).
  static void apply(const Step& s, const float* in, float* v, int64_t len, int64_t at, float scalar,
                    float lo, float hi) {
    switch (s.kind) {
      case Kind::kRelu:
      case Kind::kClip:
      case Kind::kHardSigmoid:
        return unary_block(s.kind, in, v, len, lo, hi);
      default: {
        // A tensor operand is read at the block's place; a single element
        // is `scalar`.
        const float* w = s.scalar ? nullptr : s.operand + at;
        return binary_block(s.kind, s.value_first, in, w, scalar, v, len);
      }
    }
  }

  // The block loops, compiled for AVX-512, AVX2 and the baseline
  // (simd_clones.hpp): the same IEEE operations in each, the build keeping
  // every multiply and add two roundings, so every clone gives the bytes of
  // the nodes' own kernels.
  EULERNPU_SIMD_CLONES
  static void unary_block(Kind kind, const float* in, float* v, int64_t len, float lo, float hi) {
    switch (kind) {
      case Kind::kRelu:
        for (int64_t j = 0; j < len; ++j) v[j] = is_nan(in[j]) || in[j] > 0 ? in[j] : 0.0f;
        return;
      case Kind::kClip:
        for (int64_t j = 0; j < len; ++j) v[j] = MinOp{}(MaxOp{}(in[j], lo), hi);
        return;
      case Kind::kHardSigmoid:
        for (int64_t j = 0; j < len; ++j) v[j] = hard_sigmoid(in[j], lo, hi);
        return;
      default:
        return;
    }
  }

  // w: the other operand's block, or null for the single element `scalar`.
  EULERNPU_SIMD_CLONES
  static void binary_block(Kind kind, bool value_first, const float* in, const float* w,
                           float scalar, float* v, int64_t len) {
    switch (kind) {
      case Kind::kAdd:
        return binary(value_first, in, w, scalar, v, len, AddOp{});
      case Kind::kSub:
        return binary(value_first, in, w, scalar, v, len, SubOp{});
      case Kind::kMul:
        return binary(value_first, in, w, scalar, v, len, MulOp{});
      case Kind::kDiv:
        return binary(value_first, in, w, scalar, v, len, DivOp{});
      default:
        return;
    }
  }

  template <typename Op>
  [[gnu::always_inline]] static inline void binary(bool value_first, const float* in,
                                                   const float* w, float scalar, float* v,
                                                   int64_t len, Op op) {
    if (w == nullptr) {
      if (value_first) {
        for (int64_t j = 0; j < len; ++j) v[j] = op(in[j], scalar);
      } else {
        for (int64_t j = 0; j < len; ++j) v[j] = op(scalar, in[j]);
      }
      return;
    }
    if (value_first) {
      for (int64_t j = 0; j < len; ++j) v[j] = op(in[j], w[j]);
    } else {
      for (int64_t j = 0; j < len; ++j) v[j] = op(w[j], in[j]);
    }
  }

  // Whether the output is also a tensor operand of a step, which a block
  // must then not overwrite before the step has read it.
  bool output_is_operand() const {
    for (const Step& s : steps_) {
      if (s.operand == out_ && !s.scalar) return true;
    }
    return false;
  }

  std::vector<Step> steps_;
  std::vector<int64_t> shape_;
  int64_t count_ = 0;
  size_t size_ = 0;
  const float* origin_ = nullptr;
  float* out_ = nullptr;
};

}  // namespace eulernpu::kit::elementwise
