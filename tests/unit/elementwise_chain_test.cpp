// Elementwise chains (sdk/kit/src/elementwise_chain.hpp): which nodes fuse,
// and that a fused chain gives the bytes the nodes' own kernels give, with
// the awkward values (NaN, infinities, -0) and the planner's in-place reuse.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "eulernpu/kit/execute.hpp"

namespace eulernpu::kit {
namespace {

constexpr int64_t kCount = 3 * 40 * 41;  // not a multiple of the block
const std::vector<int64_t> kShape{1, 3, 40, 41};

// A lowered graph built by hand: float32 tensors, each intermediate or
// output at the arena offset the test gives (so tests can make two share
// memory), weights passed separately.
struct Graph {
  LoweredArtifact lowered;
  std::map<std::string, std::vector<float>> weights;
  std::vector<std::vector<int64_t>> dims;  // keeps the weights' shapes alive
  size_t fused_into_convs = 0;             // of the last fused run

  Graph() { lowered.graph.name = "chain"; }

  void tensor(const std::string& name, std::vector<int64_t> shape, const std::string& kind,
              int64_t offset = -1) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    lowered.graph.tensors[name] = TensorDecl{ENP_DTYPE_FLOAT32, shape, n * 4, kind};
    if (kind == "weight") return;
    if (offset >= 0) {
      lowered.plan.buffers.push_back({name, offset, n * 4});
      lowered.plan.arena_bytes = std::max(lowered.plan.arena_bytes, offset + n * 4);
    }
  }
  void scalar(const std::string& name, float v) {
    tensor(name, {}, "weight");
    weights[name] = {v};
  }
  void node(const std::string& op, std::vector<std::string> ins, const std::string& out,
            nlohmann::json attrs = nlohmann::json::object(), int64_t opset = 13) {
    lowered.plan.schedule.push_back(lowered.graph.nodes.size());
    lowered.graph.nodes.push_back({out + "_node", op, "", opset, std::move(ins), {out}, attrs});
  }

  std::vector<enp_tensor_t> weight_views() {
    std::vector<enp_tensor_t> v;
    dims.clear();
    dims.reserve(weights.size());
    for (auto& [name, data] : weights) {
      dims.push_back(lowered.graph.tensors.at(name).shape);
      v.push_back({name.c_str(), ENP_DTYPE_FLOAT32, static_cast<uint32_t>(dims.back().size()),
                   dims.back().data(), data.data(), data.size() * 4});
    }
    return v;
  }

  // Runs the graph on x, fused (no hook) or node by node (a hook that
  // declines every node); returns the output bytes and the chained count.
  std::pair<std::vector<uint8_t>, size_t> run(const std::vector<float>& x, bool fused) {
    auto w = weight_views();
    PreparedGraph prepared(lowered, w, 2);
    const enp_tensor_t in{"x", ENP_DTYPE_FLOAT32, 4, kShape.data(), x.data(), x.size() * 4};
    std::vector<uint8_t> bytes;
    auto keep = [&](const std::string&, const Buffer& b) {
      const auto* p = static_cast<const uint8_t*>(b.data);
      bytes.assign(p, p + b.count() * 4);
    };
    const NodeRunner decline = [](const LoweredNode&, const KernelContext&) { return false; };
    prepared.run({&in, 1}, keep, fused ? NodeRunner{} : decline);
    if (fused) fused_into_convs = prepared.fused_into_convs();
    return {bytes, prepared.chained_nodes()};
  }
};

std::vector<float> awkward_input() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  std::vector<float> x(kCount);
  for (float& v : x) v = dist(rng);
  x[0] = std::numeric_limits<float>::quiet_NaN();
  x[1] = std::numeric_limits<float>::infinity();
  x[2] = -std::numeric_limits<float>::infinity();
  x[3] = -0.0f;
  x[4] = -3.0f;
  x[5] = 3.0f;
  return x;
}

// The hard-swish chain exporters write: x * (clip(x + 3, 0, 6) / 6).
Graph hard_swish(int64_t y_offset) {
  Graph g;
  const int64_t bytes = kCount * 4;
  g.tensor("x", kShape, "input", 0);
  g.tensor("t1", kShape, "intermediate", bytes);
  g.tensor("t2", kShape, "intermediate", 2 * bytes);
  g.tensor("t3", kShape, "intermediate", bytes);
  g.tensor("y", kShape, "output", y_offset);
  g.scalar("three", 3.0f);
  g.scalar("zero", 0.0f);
  g.scalar("six", 6.0f);
  g.node("Add", {"x", "three"}, "t1");
  g.node("Clip", {"t1", "zero", "six"}, "t2");
  g.node("Div", {"t2", "six"}, "t3");
  g.node("Mul", {"x", "t3"}, "y");
  g.lowered.graph.inputs = {"x"};
  g.lowered.graph.outputs = {"y"};
  return g;
}

TEST(ElementwiseChainTest, HardSwishFusesAndKeepsTheBytes) {
  Graph g = hard_swish(3 * kCount * 4);
  const auto x = awkward_input();
  const auto [fused, chained] = g.run(x, true);
  const auto [plain, none] = g.run(x, false);
  EXPECT_EQ(chained, 4u);
  EXPECT_EQ(fused, plain);
  // And it is hard-swish: 3 * (clip(3 + 3, 0, 6) / 6) = 3.
  float y5;
  std::memcpy(&y5, fused.data() + 5 * 4, 4);
  EXPECT_EQ(y5, 3.0f);
}

TEST(ElementwiseChainTest, WritesInPlaceOverItsInput) {
  // The planner may give y the memory of x, which the chain reads last.
  Graph g = hard_swish(0);
  const auto x = awkward_input();
  const auto [fused, chained] = g.run(x, true);
  EXPECT_EQ(chained, 4u);
  EXPECT_EQ(fused, g.run(x, false).first);
}

TEST(ElementwiseChainTest, StopsWhereOutputsWouldOverlapTheirOperands) {
  // y one element past x: writing y would clobber x before the chain
  // reads it, so the Mul is left to its kernel (the first three still fuse).
  // The planner never does this; the kernel then runs on one thread (fewer
  // than 2^15 elements), so its own result is still deterministic.
  Graph g = hard_swish(4);
  const auto x = awkward_input();
  EXPECT_EQ(g.run(x, true).second, 3u);
  EXPECT_EQ(g.run(x, true).first, g.run(x, false).first);
}

TEST(ElementwiseChainTest, ScalarsOnTheLeftAndOldClip) {
  Graph g;
  const int64_t bytes = kCount * 4;
  g.tensor("x", kShape, "input", 0);
  g.tensor("a", kShape, "intermediate", bytes);
  g.tensor("b", kShape, "intermediate", 2 * bytes);
  g.tensor("c", kShape, "intermediate", bytes);
  g.tensor("y", kShape, "output", 2 * bytes);
  g.scalar("one", 1.0f);
  g.scalar("half", 0.5f);
  g.node("Sub", {"one", "x"}, "a");                               // 1 - x
  g.node("Div", {"half", "a"}, "b");                              // 0.5 / (1 - x)
  g.node("Clip", {"b"}, "c", {{"min", -1.5}, {"max", 2.25}}, 6);  // opset 6 attributes
  g.node("Relu", {"c"}, "y");
  g.lowered.graph.inputs = {"x"};
  g.lowered.graph.outputs = {"y"};
  const auto x = awkward_input();
  const auto [fused, chained] = g.run(x, true);
  EXPECT_EQ(chained, 4u);
  EXPECT_EQ(fused, g.run(x, false).first);
}

TEST(ElementwiseChainTest, AResultReadTwiceEndsTheChain) {
  Graph g;
  const int64_t bytes = kCount * 4;
  g.tensor("x", kShape, "input", 0);
  g.tensor("a", kShape, "intermediate", bytes);
  g.tensor("b", kShape, "intermediate", 2 * bytes);
  g.tensor("y", kShape, "output", 3 * bytes);
  g.scalar("two", 2.0f);
  g.node("Mul", {"x", "two"}, "a");
  g.node("Relu", {"a"}, "b");
  g.node("Add", {"b", "a"}, "y");  // a is read again, so the Mul ends where it is
  g.lowered.graph.inputs = {"x"};
  g.lowered.graph.outputs = {"y"};
  const auto x = awkward_input();
  const auto [fused, chained] = g.run(x, true);
  EXPECT_EQ(chained, 2u);  // Relu and Add
  EXPECT_EQ(fused, g.run(x, false).first);
}

// x -> Conv 3x3 (3 -> 3 channels, same size) -> t, with the graph output
// y declared at `y_offset`; the caller adds the nodes after the Conv.
Graph conv_3x3(int64_t y_offset) {
  Graph g;
  const int64_t bytes = kCount * 4;
  g.tensor("x", kShape, "input", 0);
  g.tensor("t", kShape, "intermediate", bytes);
  g.tensor("y", kShape, "output", y_offset);
  g.tensor("w", {3, 3, 3, 3}, "weight");
  g.tensor("b", {3}, "weight");
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  g.weights["w"] = std::vector<float>(81);
  for (float& v : g.weights["w"]) v = dist(rng);
  g.weights["b"] = {0.5f, -0.25f, 0.0f};
  g.node("Conv", {"x", "w", "b"}, "t", {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}});
  g.lowered.graph.inputs = {"x"};
  g.lowered.graph.outputs = {"y"};
  return g;
}

// x -> Conv -> t -> Relu -> r -> Add x -> y, with y at `y_offset`.
Graph conv_relu_add(int64_t y_offset) {
  Graph g = conv_3x3(y_offset);
  g.tensor("r", kShape, "intermediate", 2 * kCount * 4);
  g.node("Relu", {"t"}, "r");
  g.node("Add", {"r", "x"}, "y");
  return g;
}

TEST(ElementwiseChainTest, AConvRunsTheChainAfterItAsItsEpilogue) {
  Graph g = conv_relu_add(3 * kCount * 4);
  const auto x = awkward_input();
  const auto fused = g.run(x, true).first;
  EXPECT_EQ(g.fused_into_convs, 2u);
  EXPECT_EQ(fused, g.run(x, false).first);
}

TEST(ElementwiseChainTest, NoEpilogueWritesOverTheConvsInput) {
  // y over x: the Conv still reads x after its first blocks are done, so
  // the Relu and Add run after it, as a chain of their own.
  Graph g = conv_relu_add(0);
  const auto x = awkward_input();
  const auto [fused, chained] = g.run(x, true);
  EXPECT_EQ(g.fused_into_convs, 0u);
  EXPECT_EQ(chained, 2u);
  EXPECT_EQ(fused, g.run(x, false).first);
}

// x -> Conv -> t -> HardSigmoid (1/6, 1/2) -> h -> Mul(t, h) -> y: hard-swish
// below opset 14. With `extra_reader`, z = Sigmoid(t), which no chain
// takes, reads the Conv's output too (z and y are the graph's outputs).
Graph conv_hard_swish(int64_t y_offset, bool extra_reader) {
  Graph g = conv_3x3(y_offset);
  g.tensor("h", kShape, "intermediate", 2 * kCount * 4);
  g.node("HardSigmoid", {"t"}, "h", {{"alpha", 1.0 / 6.0}, {"beta", 0.5}}, 11);
  g.node("Mul", {"t", "h"}, "y");
  if (extra_reader) {
    g.tensor("z", kShape, "output", 4 * kCount * 4);
    g.node("Sigmoid", {"t"}, "z");
    g.lowered.graph.outputs = {"y", "z"};
  }
  return g;
}

TEST(ElementwiseChainTest, ConvHardSigmoidMulRunsAsTheConvsEpilogue) {
  const auto x = awkward_input();
  // y apart from t, and y over t (the Mul then reads its operand from a
  // block that the chain writes last).
  for (const int64_t y_offset : {int64_t{3} * kCount * 4, int64_t{1} * kCount * 4}) {
    Graph g = conv_hard_swish(y_offset, false);
    const auto fused = g.run(x, true).first;
    EXPECT_EQ(g.fused_into_convs, 2u) << "y at " << y_offset;
    EXPECT_EQ(fused, g.run(x, false).first) << "y at " << y_offset;
  }
}

TEST(ElementwiseChainTest, NoEpilogueWhenTheConvsOutputHasAnotherReader) {
  Graph g = conv_hard_swish(3 * kCount * 4, true);
  const auto x = awkward_input();
  const auto [fused, chained] = g.run(x, true);
  EXPECT_EQ(g.fused_into_convs, 0u);
  EXPECT_EQ(chained, 2u);  // HardSigmoid and Mul, as a chain of their own
  EXPECT_EQ(fused, g.run(x, false).first);
}

// x -> Conv (3 -> 3 channels, kernel k, `group`, same size) -> t -> the
// nodes the caller adds, y their last output. Weights zero where
// `zero_weights`, with biases -0, 0 and 0.5: the Conv's outputs are then
// -0, +0, NaN (from x's NaN and infinities) and 0.5, the values a clamp
// must treat exactly.
Graph conv_then(int64_t k, int64_t group, bool zero_weights) {
  Graph g;
  const int64_t bytes = kCount * 4;
  g.tensor("x", kShape, "input", 0);
  g.tensor("t", kShape, "intermediate", bytes);
  g.tensor("y", kShape, "output", 3 * bytes);
  g.tensor("w", {3, 3 / group, k, k}, "weight");
  g.tensor("b", {3}, "weight");
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  g.weights["w"] = std::vector<float>(static_cast<size_t>(3 * (3 / group) * k * k));
  for (float& v : g.weights["w"]) v = zero_weights ? 0.0f : dist(rng);
  g.weights["b"] = {zero_weights ? -0.0f : 0.25f, 0.0f, 0.5f};
  g.node("Conv", {"x", "w", "b"}, "t",
         {{"kernel_shape", {k, k}}, {"pads", {k / 2, k / 2, k / 2, k / 2}}, {"group", group}});
  g.lowered.graph.inputs = {"x"};
  g.lowered.graph.outputs = {"y"};
  return g;
}

TEST(ElementwiseChainTest, AClampFirstIsStoredByTheConvWithTheNodesBytes) {
  // Relu alone, Clip alone (opset 6 bounds), and each followed by more of
  // the chain, after a 3x3 conv, a 1x1 conv (X read in place) and a
  // depthwise one; the fused run writes y straight from the Conv.
  const auto x = awkward_input();
  struct Tail {
    const char* name;
    int nodes;
  };
  for (const Tail tail :
       {Tail{"relu", 1}, Tail{"clip", 1}, Tail{"relu_mul", 2}, Tail{"clip_add", 2}}) {
    for (const int64_t k : {int64_t{1}, int64_t{3}}) {
      for (const int64_t group : {int64_t{1}, int64_t{3}}) {
        for (const bool zero : {false, true}) {
          Graph g = conv_then(k, group, zero);
          const std::string what = std::string(tail.name) + " k" + std::to_string(k) + " group " +
                                   std::to_string(group) + (zero ? " zero weights" : "");
          const std::string first = tail.nodes == 1 ? "y" : "c";
          if (tail.nodes == 2) g.tensor("c", kShape, "intermediate", 2 * kCount * 4);
          if (tail.name[0] == 'r') {
            g.node("Relu", {"t"}, first);
          } else {
            g.node("Clip", {"t"}, first, {{"min", -0.3}, {"max", 0.4}}, 6);
          }
          if (std::string(tail.name) == "relu_mul") {
            g.scalar("half", 0.5f);
            g.node("Mul", {"c", "half"}, "y");
          } else if (std::string(tail.name) == "clip_add") {
            g.node("Add", {"c", "x"}, "y");
          }
          const auto fused = g.run(x, true).first;
          EXPECT_EQ(g.fused_into_convs, static_cast<size_t>(tail.nodes)) << what;
          EXPECT_EQ(fused, g.run(x, false).first) << what;
        }
      }
    }
  }
}

TEST(ElementwiseChainTest, APreparedConvRunTwiceGivesEachInputsBytes) {
  // The second run reuses what the first derived from the weights
  // (KernelContext::cache: the Conv's packed W); each run must still give
  // the bytes a fresh graph gives for its input.
  Graph g = conv_relu_add(3 * kCount * 4);
  const auto x1 = awkward_input();
  std::vector<float> x2v(x1.size());
  for (size_t i = 0; i < x2v.size(); ++i) x2v[i] = 0.5f * static_cast<float>(i % 13) - 2.0f;
  const std::vector<float>& x2 = x2v;
  const auto want1 = g.run(x1, true).first, want2 = g.run(x2, true).first;
  ASSERT_NE(want1, want2);
  auto w = g.weight_views();
  PreparedGraph prepared(g.lowered, w, 2);
  for (const auto* x : {&x1, &x2, &x1}) {
    const enp_tensor_t in{"x", ENP_DTYPE_FLOAT32, 4, kShape.data(), x->data(), x->size() * 4};
    std::vector<uint8_t> bytes;
    prepared.run({&in, 1}, [&](const std::string&, const Buffer& b) {
      const auto* p = static_cast<const uint8_t*>(b.data);
      bytes.assign(p, p + b.count() * 4);
    });
    EXPECT_EQ(bytes, x == &x2 ? want2 : want1);
  }
}

}  // namespace
}  // namespace eulernpu::kit
