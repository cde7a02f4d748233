// The quantizer's graph rewrite on small hand-built graphs: which nodes
// become which integer ops, where the float32 boundaries go, and the
// integers the ops carry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rewrite.hpp"

namespace eulernpu::int8_quantizer {
namespace {

sdk::OwnedTensor floats(const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
  sdk::OwnedTensor t;
  t.name = name;
  t.dtype = ENP_DTYPE_FLOAT32;
  t.dims = std::move(dims);
  t.bytes.resize(v.size() * 4);
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

Node node(std::string name, std::string op, std::vector<std::string> in,
          std::vector<std::string> out, std::vector<Attr> attrs = {}) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attributes = std::move(attrs);
  return n;
}

ValueType f32(std::vector<int64_t> dims) { return {ENP_DTYPE_FLOAT32, std::move(dims), true}; }

// x (1, 4) -> Gemm fc (W 3x4, transB) -> Relu -> y (1, 3)
OwnedGraph gemm_relu() {
  OwnedGraph g;
  g.name = "g";
  g.opsets[""] = 13;
  g.inputs = {{"x", f32({1, 4})}};
  g.outputs = {{"y", f32({1, 3})}};
  g.initializers["W"] = floats("W", {3, 4}, {1, 0, 0, 0, 0, 0.5f, 0, 0, 0, 0, 0.25f, -0.25f});
  g.initializers["C"] = floats("C", {3}, {0.5f, 0, -1});
  g.nodes = {node("fc", "Gemm", {"x", "W", "C"}, {"h"}, {Attr::integer("transB", 1)}),
             node("act", "Relu", {"h"}, {"y"})};
  for (const auto& [n, t] : g.inputs) g.types[n] = t;
  g.types["h"] = f32({1, 3});
  g.types["y"] = f32({1, 3});
  g.types["W"] = f32({3, 4});
  g.types["C"] = f32({3});
  return g;
}

std::map<std::string, QParams> params() {
  // x in [-1, 1.55], h in [-2, 3.1], y in [0, 2.55].
  return {{"x", {0.01, -28}}, {"h", {0.02, -28}}, {"y", {0.01, -128}}};
}

std::vector<std::string> ops(const OwnedGraph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes) out.push_back(n.op_type);
  return out;
}

nlohmann::json meta(const OwnedGraph& g) {
  return nlohmann::json::parse(g.metadata.at("eulernpu.quantization"));
}

std::vector<int32_t> ints(const OwnedGraph& g, const std::string& name) {
  const auto& t = g.initializers.at(name);
  std::vector<int32_t> v(t.bytes.size() / 4);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

TEST(QuantRewriteTest, GemmWithReluBecomesOneQGemmBetweenBoundaries) {
  const OwnedGraph src = gemm_relu();
  const OwnedGraph q = Rewriter(src, params(), {}).run();
  EXPECT_EQ(ops(q), (std::vector<std::string>{"QuantizeLinear", "QGemm", "DequantizeLinear"}));
  const Node& gemm = q.nodes[1];
  EXPECT_EQ(gemm.domain, "ai.eulernpu");
  EXPECT_EQ(gemm.attr_int("a_zero_point", 0), -28);
  EXPECT_EQ(gemm.attr_int("y_zero_point", 0), -128);
  // The fused Relu clamps at the output zero point.
  EXPECT_EQ(gemm.attr_int("qmin", 0), -128);
  EXPECT_EQ(gemm.attr_int("qmax", 0), 127);
  // Row scales max|w|/127: 1/127, 0.5/127, 0.25/127; bias b / (0.01 · s_w):
  // 0.5 / (0.01/127) = 6350, 0, -1 / (0.0025/127) = -50800.
  EXPECT_EQ(ints(q, gemm.inputs[2]), (std::vector<int32_t>{6350, 0, -50800}));
  // Weights: each row's largest magnitude is 127; -0.25 / (0.25/127) = -127.
  const auto& w = q.initializers.at(gemm.inputs[1]);
  EXPECT_EQ(std::vector<int8_t>(w.bytes.begin(), w.bytes.end()),
            (std::vector<int8_t>{127, 0, 0, 0, 0, 127, 0, 0, 0, 0, 127, -127}));
  // The graph output keeps its name and float32 type through DequantizeLinear.
  EXPECT_EQ(q.nodes[2].outputs[0], "y");
  const auto m = meta(q);
  EXPECT_EQ(m["fused"][0]["node"], "act");
  EXPECT_EQ(m["fused"][0]["into"], "fc");
  EXPECT_TRUE(m["float_nodes"].empty());
}

TEST(QuantRewriteTest, KeepFp32LeavesTheNodeFloatAndReportsIt) {
  RewriteSettings s;
  s.keep_fp32 = {"fc"};
  const OwnedGraph q = Rewriter(gemm_relu(), params(), s).run();
  // The Relu belongs to the layer (it would fuse into it): float32 too.
  EXPECT_EQ(ops(q), (std::vector<std::string>{"Gemm", "Relu"}));
  const auto m = meta(q);
  ASSERT_EQ(m["float_nodes"].size(), 2u);
  EXPECT_EQ(m["float_nodes"][0]["node"], "fc");
  EXPECT_EQ(m["float_nodes"][0]["reason"], "kept in float32 by the config");
  EXPECT_EQ(m["float_nodes"][1]["reason"], "follows fc, kept in float32 by the config");
  // The float Gemm still reads its float initializers.
  EXPECT_TRUE(q.initializers.count("W"));
}

// x -> Gemm fc -> h -> Cos -> c -> Gemm fc2 -> y (a graph output), and its
// calibrated parameters.
OwnedGraph gemm_cos_gemm() {
  OwnedGraph g = gemm_relu();
  g.nodes[1] = node("cos", "Cos", {"h"}, {"c"});
  g.nodes.push_back(node("fc2", "Gemm", {"c", "W2"}, {"y"}));
  g.initializers["W2"] = floats("W2", {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  g.types["c"] = f32({1, 3});
  return g;
}

std::map<std::string, QParams> gemm_cos_gemm_params() {
  auto p = params();
  p["c"] = {0.01, 0};
  return p;
}

TEST(QuantRewriteTest, AnOpWithoutIntegerFormGetsOneBoundaryEachWay) {
  const OwnedGraph g = gemm_cos_gemm();
  const auto p = gemm_cos_gemm_params();
  const OwnedGraph q = Rewriter(g, p, {}).run();
  EXPECT_EQ(ops(q), (std::vector<std::string>{"QuantizeLinear", "QGemm", "DequantizeLinear", "Cos",
                                              "QuantizeLinear", "QGemm", "DequantizeLinear"}));
  const auto m = meta(q);
  ASSERT_EQ(m["float_nodes"].size(), 1u);
  EXPECT_EQ(m["float_nodes"][0]["reason"], "no int8 form for Cos");
}

// x -> Cos -> a, Sin -> b; a + b -> s -> Cos -> y (no int8 form for Cos or
// Sin): the Add between these float32
// nodes runs no MACs in int8, only rounding.
OwnedGraph add_between_float_nodes() {
  OwnedGraph g;
  g.name = "g";
  g.opsets[""] = 13;
  g.inputs = {{"x", f32({1, 3})}};
  g.outputs = {{"y", f32({1, 3})}};
  g.nodes = {node("cos", "Cos", {"x"}, {"a"}), node("sin", "Sin", {"x"}, {"b"}),
             node("add", "Add", {"a", "b"}, {"s"}), node("cos2", "Cos", {"s"}, {"y"})};
  for (const char* v : {"x", "a", "b", "s", "y"}) g.types[v] = f32({1, 3});
  return g;
}

TEST(QuantRewriteTest, AnAddThatFloatNodesEncloseStaysFloat) {
  const std::map<std::string, QParams> p = {
      {"x", {0.01, 0}}, {"a", {0.01, 0}}, {"b", {0.01, 0}}, {"s", {0.02, 0}}, {"y", {0.05, -128}}};
  const OwnedGraph q = Rewriter(add_between_float_nodes(), p, {}).run();
  EXPECT_EQ(ops(q), (std::vector<std::string>{"Cos", "Sin", "Add", "Cos"}));
  const auto m = meta(q);
  ASSERT_EQ(m["float_nodes"].size(), 4u);
  EXPECT_EQ(m["float_nodes"][2]["node"], "add");
  EXPECT_NE(m["float_nodes"][2]["reason"].get<std::string>().find("enclose"), std::string::npos);
  EXPECT_TRUE(m["values"].empty());

  // The same Add as a graph output is the user's int8 value: quantized.
  OwnedGraph g = add_between_float_nodes();
  g.nodes.pop_back();
  g.outputs = {{"s", f32({1, 3})}};
  EXPECT_EQ(ops(Rewriter(g, p, {}).run()),
            (std::vector<std::string>{"Cos", "Sin", "QuantizeLinear", "QuantizeLinear", "QAdd",
                                      "DequantizeLinear"}));

  // A Gemm in the region is worth its boundaries: the Add is quantized.
  g = add_between_float_nodes();
  g.nodes[3] = node("fc", "Gemm", {"s", "W"}, {"y"}, {Attr::integer("transB", 1)});
  g.initializers["W"] = floats("W", {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  g.types["W"] = f32({3, 3});
  const auto got = ops(Rewriter(g, p, {}).run());
  EXPECT_EQ(std::count(got.begin(), got.end(), "QAdd"), 1);
  EXPECT_EQ(std::count(got.begin(), got.end(), "QGemm"), 1);
}

TEST(QuantRewriteTest, FloatOutputsWriteTheAccumulatorsInFloat32) {
  // none (the default) is AnOpWithoutIntegerFormGetsOneBoundaryEachWay.
  const OwnedGraph g = gemm_cos_gemm();
  const auto p = gemm_cos_gemm_params();
  RewriteSettings s;
  // inner: fc's output only Cos reads; fc2's is a graph output.
  s.float_outputs = FloatOutputs::kInner;
  const OwnedGraph q = Rewriter(g, p, s).run();
  EXPECT_EQ(ops(q),
            (std::vector<std::string>{"QuantizeLinear", "MatMulInteger", "Add", "Cast", "Mul",
                                      "Cos", "QuantizeLinear", "QGemm", "DequantizeLinear"}));
  // MatMulInteger reads B as (K, N) = W^T; Bias 0.5/(0.01·s_w) etc. in
  // int32, the scale s_x · s_w[o] in float32.
  const Node& mm = q.nodes[1];
  EXPECT_EQ(q.initializers.at(mm.inputs[1]).dims, (std::vector<int64_t>{4, 3}));
  const auto w = q.initializers.at(mm.inputs[1]).bytes;
  EXPECT_EQ(static_cast<int8_t>(w[0]), 127);          // W[0][0] = 1: row 0 of W^T
  EXPECT_EQ(static_cast<int8_t>(w[3 * 1 + 1]), 127);  // W[1][1] = 0.5, its channel's max
  const Node& scale = q.nodes[4];
  float sc[3];
  std::memcpy(sc, q.initializers.at(scale.inputs[1]).bytes.data(), sizeof sc);
  EXPECT_FLOAT_EQ(sc[0], static_cast<float>(0.01 * (1.0 / 127)));
  EXPECT_FLOAT_EQ(sc[1], static_cast<float>(0.01 * (0.5 / 127)));
  EXPECT_EQ(scale.outputs[0], "h");  // Cos reads the float value by its name
  const auto m = meta(q);
  ASSERT_EQ(m["float_outputs"].size(), 1u);
  EXPECT_EQ(m["float_outputs"][0]["node"], "fc");
  EXPECT_EQ(m["float_outputs"][0]["as"], "MatMulInteger");
  // all: the logits too.
  s.float_outputs = FloatOutputs::kAll;
  const auto all = ops(Rewriter(g, p, s).run());
  EXPECT_EQ(std::count(all.begin(), all.end(), "MatMulInteger"), 2);
  EXPECT_EQ(std::count(all.begin(), all.end(), "QGemm"), 0);
  EXPECT_EQ(std::count(all.begin(), all.end(), "DequantizeLinear"), 0);
}

TEST(QuantRewriteTest, PerTensorWeightsShareOneScale) {
  RewriteSettings s;
  s.per_tensor_nodes = {"fc"};
  const OwnedGraph q = Rewriter(gemm_relu(), params(), s).run();
  const Node& gemm = q.nodes[1];
  // One scale 1/127 for every row: 0.5 -> 63.5 -> 64 (half even), 0.25 -> 31.75 -> 32.
  const auto& w = q.initializers.at(gemm.inputs[1]);
  EXPECT_EQ(std::vector<int8_t>(w.bytes.begin(), w.bytes.end()),
            (std::vector<int8_t>{127, 0, 0, 0, 0, 64, 0, 0, 0, 0, 32, -32}));
  const auto m = ints(q, gemm.inputs[3]);
  EXPECT_EQ(m[0], m[1]);
  EXPECT_EQ(m[1], m[2]);
}

TEST(QuantRewriteTest, AccumulatorThatCouldOverflowStaysFloat) {
  // 66 312 terms with |w| = 127: 66 312 · 255 · 127 > 2^31 - 1.
  const int64_t k = 66312;
  OwnedGraph g;
  g.opsets[""] = 13;
  g.inputs = {{"x", f32({1, k})}};
  g.outputs = {{"y", f32({1, 1})}};
  g.initializers["W"] = floats("W", {1, k}, std::vector<float>(static_cast<size_t>(k), 1.0f));
  g.nodes = {node("fc", "Gemm", {"x", "W"}, {"y"}, {Attr::integer("transB", 1)})};
  g.types = {{"x", f32({1, k})}, {"y", f32({1, 1})}, {"W", f32({1, k})}};
  const OwnedGraph q = Rewriter(g, {{"x", {0.01, 0}}, {"y", {1.0, 0}}}, {}).run();
  EXPECT_EQ(ops(q), (std::vector<std::string>{"Gemm"}));
  EXPECT_NE(meta(q)["float_nodes"][0]["reason"].get<std::string>().find("accumulator"),
            std::string::npos);
}

TEST(QuantRewriteTest, ConcatOfEqualScalesCopiesAndPadUsesTheZeroPointCode) {
  OwnedGraph g;
  g.opsets[""] = 13;
  g.inputs = {{"a", f32({1, 2})}};
  g.outputs = {{"y", f32({1, 6})}};
  g.nodes = {node("t", "Tanh", {"a"}, {"b"}),
             node("cat", "Concat", {"b", "b"}, {"c"}, {Attr::integer("axis", 1)}),
             node("pad", "Pad", {"c", "pads"}, {"y"})};
  sdk::OwnedTensor pads;
  pads.name = "pads";
  pads.dtype = ENP_DTYPE_INT64;
  pads.dims = {4};
  const std::vector<int64_t> pv{0, 1, 0, 1};
  pads.bytes.resize(32);
  std::memcpy(pads.bytes.data(), pv.data(), 32);
  g.initializers["pads"] = pads;
  g.types = {{"a", f32({1, 2})}, {"b", f32({1, 2})}, {"c", f32({1, 4})}, {"y", f32({1, 6})}};
  const OwnedGraph q =
      Rewriter(g,
               {{"a", {0.02, 3}}, {"b", {0.0078125, -1}}, {"c", {0.0078125, -1}}, {"y", {0.5, 9}}},
               {})
          .run();
  EXPECT_EQ(ops(q), (std::vector<std::string>{"QuantizeLinear", "QLookup", "QConcat", "Pad",
                                              "DequantizeLinear"}));
  const Node& cat = q.nodes[2];
  // Equal scales: multiplier 2^30 with shift 30 encodes exactly 1.0.
  EXPECT_EQ(cat.attr_ints("multipliers"), (std::vector<int64_t>{1 << 30, 1 << 30}));
  EXPECT_EQ(cat.attr_ints("shifts"), (std::vector<int64_t>{30, 30}));
  // Pad keeps the codes' parameters (not y's calibrated ones): the padded
  // 0.0 is the zero point -1.
  const Node& pad = q.nodes[3];
  const auto& value = q.initializers.at(pad.inputs[2]);
  EXPECT_EQ(static_cast<int8_t>(value.bytes[0]), -1);
  EXPECT_EQ(meta(q)["values"].back()["scale"], 0.0078125);
}

}  // namespace
}  // namespace eulernpu::int8_quantizer
