// An int8 graph prepared once and run again keeps what its kernels derived
// (KernelContext::cache: QConv's and QGemm's prepared weights and checked
// values; attribute_cache: QAdd's table of every result, built from the
// second run on) and still gives, for each input, the bytes a fresh graph
// gives.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "eulernpu/kit/execute.hpp"

namespace eulernpu::kit::prepared_test {
namespace {

const std::vector<int64_t> kShape{1, 16, 32, 32};  // 16384 values: QAdd's table pays
constexpr int64_t kCount = 16 * 32 * 32;

// x -> QConv 3×3 (16 -> 16, pad 1) -> t; y = QAdd(t, x); z = QGemm(y) with
// K = 32 (y's last dim, 512 rows) and 24 channels.
struct Int8Graph {
  LoweredArtifact lowered;
  std::map<std::string, std::vector<uint8_t>> weights;
  std::map<std::string, std::vector<int64_t>> shapes;

  void tensor(const std::string& name, std::vector<int64_t> shape, int32_t dtype,
              const std::string& kind, int64_t offset = -1) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const int64_t bytes = n * (dtype == ENP_DTYPE_INT32 ? 4 : 1);
    lowered.graph.tensors[name] = TensorDecl{dtype, shape, bytes, kind};
    shapes[name] = shape;
    if (offset >= 0) {
      lowered.plan.buffers.push_back({name, offset, bytes});
      lowered.plan.arena_bytes = std::max(lowered.plan.arena_bytes, offset + bytes);
    }
  }
  template <typename T>
  void weight(const std::string& name, std::vector<int64_t> shape, const std::vector<T>& v) {
    tensor(name, std::move(shape), sizeof(T) == 4 ? ENP_DTYPE_INT32 : ENP_DTYPE_INT8, "weight");
    std::vector<uint8_t> bytes(v.size() * sizeof(T));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    weights[name] = std::move(bytes);
  }
  void node(const std::string& op, std::vector<std::string> ins, const std::string& out,
            nlohmann::json attrs) {
    lowered.plan.schedule.push_back(lowered.graph.nodes.size());
    lowered.graph.nodes.push_back(
        {out + "_node", op, "ai.eulernpu", 1, std::move(ins), {out}, std::move(attrs)});
  }
  std::vector<enp_tensor_t> views() {
    std::vector<enp_tensor_t> v;
    for (auto& [name, data] : weights) {
      const auto& decl = lowered.graph.tensors.at(name);
      v.push_back({name.c_str(), decl.dtype, static_cast<uint32_t>(decl.shape.size()),
                   shapes.at(name).data(), data.data(), data.size()});
    }
    return v;
  }
};

Int8Graph make_graph() {
  std::mt19937 rng(5);
  auto codes = [&](size_t n, int lo) {
    std::vector<int8_t> v(n);
    for (auto& c : v) c = static_cast<int8_t>(std::uniform_int_distribution<int>(lo, 127)(rng));
    return v;
  };
  Int8Graph g;
  g.lowered.graph.name = "int8";
  g.tensor("x", kShape, ENP_DTYPE_INT8, "input", 0);
  g.tensor("t", kShape, ENP_DTYPE_INT8, "intermediate", kCount);
  g.tensor("y", kShape, ENP_DTYPE_INT8, "output", 2 * kCount);
  g.tensor("z", {1, 16, 32, 24}, ENP_DTYPE_INT8, "output", 3 * kCount);
  g.weight("w", {16, 16, 3, 3}, codes(16 * 16 * 9, -127));
  g.weight("b", {16}, std::vector<int32_t>(16, 1500));
  g.weight("m", {16}, std::vector<int32_t>(16, 1518500250));  // ≈ 2^-11.5 with shift 42
  g.weight("s", {16}, std::vector<int32_t>(16, 42));
  g.node("QConv", {"x", "w", "b", "m", "s"}, "t",
         {{"pads", {1, 1, 1, 1}}, {"x_zero_point", -3}, {"y_zero_point", 2}});
  g.node("QAdd", {"t", "x"}, "y",
         {{"a_zero_point", 2},
          {"b_zero_point", -3},
          {"y_zero_point", 0},
          {"a_multiplier", 1300000000},
          {"a_shift", 31},
          {"b_multiplier", 1800000000},
          {"b_shift", 32},
          {"y_multiplier", 1400000000},
          {"y_shift", 22}});
  g.weight("gw", {24, 32}, codes(24 * 32, -127));
  g.weight("gb", {24}, std::vector<int32_t>(24, -700));
  g.weight("gm", {24}, std::vector<int32_t>(24, 1200000000));
  g.weight("gs", {24}, std::vector<int32_t>(24, 40));
  g.node("QGemm", {"y", "gw", "gb", "gm", "gs"}, "z", {{"a_zero_point", 0}, {"y_zero_point", -5}});
  g.lowered.graph.inputs = {"x"};
  g.lowered.graph.outputs = {"y", "z"};
  return g;
}

std::map<std::string, std::vector<uint8_t>> run(PreparedGraph& prepared,
                                                const std::vector<int8_t>& x) {
  const enp_tensor_t in{"x", ENP_DTYPE_INT8, 4, kShape.data(), x.data(), x.size()};
  std::map<std::string, std::vector<uint8_t>> out;
  prepared.run({&in, 1}, [&](const std::string& name, const Buffer& b) {
    const auto* p = static_cast<const uint8_t*>(b.data);
    out[name].assign(p, p + b.count());
  });
  return out;
}

TEST(Int8PreparedTest, AGraphRunAgainGivesEachInputsBytes) {
  Int8Graph g = make_graph();
  std::mt19937 rng(9);
  std::vector<int8_t> x1(kCount), x2(kCount);
  for (auto& c : x1) c = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
  for (size_t i = 0; i < x2.size(); ++i) x2[i] = static_cast<int8_t>(i % 29 - 14);
  auto w = g.views();
  auto fresh = [&](const std::vector<int8_t>& x) {
    PreparedGraph once(g.lowered, w, 2);
    return run(once, x);
  };
  const auto want1 = fresh(x1), want2 = fresh(x2);
  ASSERT_NE(want1, want2);
  PreparedGraph prepared(g.lowered, w, 2);
  for (const auto* x : {&x1, &x2, &x1, &x2}) {
    EXPECT_EQ(run(prepared, *x), x == &x1 ? want1 : want2);
  }
}

}  // namespace
}  // namespace eulernpu::kit::prepared_test
