// The wire-level count checks of sdk/onnx_limits.hpp against models built
// with the ONNX protobuf classes: each count is exact at its limit, counts
// reach into subgraphs, and a malformed encoding is left to the parser.
#include "eulernpu/sdk/onnx_limits.hpp"

#include <gtest/gtest.h>

#include <string>

#include "onnx/onnx_pb.h"

namespace eulernpu::sdk::onnx_limits {
namespace {

std::optional<Problem> check(const onnx::ModelProto& m, const Limits& limits) {
  const std::string bytes = m.SerializeAsString();
  return check_model_bytes(bytes.data(), bytes.size(), limits);
}

onnx::ModelProto relu_chain(int n) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* g = m.mutable_graph();
  for (int i = 0; i < n; ++i) {
    auto* node = g->add_node();
    node->set_op_type("Relu");
    // Appended, not "v" + to_string(): GCC 12 warns falsely (-Wrestrict) on that.
    node->add_input(std::string("v").append(std::to_string(i)));
    node->add_output(std::string("v").append(std::to_string(i + 1)));
  }
  return m;
}

TEST(OnnxLimitsTest, NodesAreCountedExactly) {
  Limits limits;
  limits.nodes = 5;
  EXPECT_FALSE(check(relu_chain(5), limits));
  const auto p = check(relu_chain(6), limits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->what, "has more than 5 nodes");
  EXPECT_STREQ(p->env, "EULERNPU_MAX_ONNX_NODES");
  EXPECT_NE(p->fix().find("EULERNPU_MAX_ONNX_NODES"), std::string::npos);
}

TEST(OnnxLimitsTest, SubgraphNodesCount) {
  onnx::ModelProto m = relu_chain(2);
  auto* attr = m.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("then_branch");
  attr->set_type(onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = relu_chain(2).graph();
  Limits limits;
  limits.nodes = 3;
  ASSERT_TRUE(check(m, limits));
  limits.nodes = 4;
  EXPECT_FALSE(check(m, limits));
}

TEST(OnnxLimitsTest, FunctionNodesCount) {
  onnx::ModelProto m = relu_chain(1);
  m.add_functions()->add_node()->set_op_type("Relu");
  Limits limits;
  limits.nodes = 1;
  EXPECT_TRUE(check(m, limits));
}

TEST(OnnxLimitsTest, InitializersDenseAndSparse) {
  onnx::ModelProto m = relu_chain(1);
  m.mutable_graph()->add_initializer()->set_name("w");
  m.mutable_graph()->add_sparse_initializer()->mutable_values()->set_name("s");
  Limits limits;
  limits.initializers = 2;
  EXPECT_FALSE(check(m, limits));
  limits.initializers = 1;
  const auto p = check(m, limits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->what, "has more than 1 initializers");
}

TEST(OnnxLimitsTest, AttributeElementsPackedAndNot) {
  onnx::ModelProto m = relu_chain(1);
  auto* attr = m.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("pads");
  for (int i = 0; i < 10; ++i) attr->add_ints(i == 3 ? 1'000'000'000 : i);  // one 5-byte varint
  Limits limits;
  limits.attribute_elements = 10;
  EXPECT_FALSE(check(m, limits));
  limits.attribute_elements = 9;
  ASSERT_TRUE(check(m, limits));
  // The count is per attribute: a second list of 10 does not add up.
  auto* floats = m.mutable_graph()->mutable_node(0)->add_attribute();
  for (int i = 0; i < 10; ++i) floats->add_floats(0.5f);
  limits.attribute_elements = 10;
  EXPECT_FALSE(check(m, limits));
  floats->add_floats(1.0f);
  EXPECT_TRUE(check(m, limits));
}

// ONNX's proto2 fields are written unpacked by protobuf, but a parser
// accepts packed ones too, so other writers may use them.
TEST(OnnxLimitsTest, PackedListsAreCounted) {
  auto wrap = [](char tag, const std::string& body) {
    return std::string(1, tag) + static_cast<char>(body.size()) + body;
  };
  const std::string ints = wrap('\x42', std::string(10, '\x01'));        // 10 packed ints
  const std::string floats = wrap('\x3a', std::string(4 * 10, '\x00'));  // 10 packed floats
  for (const std::string& list : {ints, floats}) {
    const std::string model = wrap('\x3a', wrap('\x0a', wrap('\x2a', list)));
    Limits limits;
    limits.attribute_elements = 10;
    EXPECT_FALSE(check_model_bytes(model.data(), model.size(), limits));
    limits.attribute_elements = 9;
    EXPECT_TRUE(check_model_bytes(model.data(), model.size(), limits));
    onnx::ModelProto parsed;  // and the encoding is the one protobuf reads
    ASSERT_TRUE(parsed.ParseFromString(model));
    const auto& a = parsed.graph().node(0).attribute(0);
    EXPECT_EQ(a.ints_size() + a.floats_size(), 10);
  }
}

TEST(OnnxLimitsTest, LongNamesAreRefused) {
  onnx::ModelProto m = relu_chain(1);
  m.mutable_graph()->mutable_node(0)->set_input(0, std::string(kMaxNameBytes, 'x'));
  EXPECT_FALSE(check(m, Limits{}));
  m.mutable_graph()->mutable_node(0)->set_input(0, std::string(kMaxNameBytes + 1, 'x'));
  const auto p = check(m, Limits{});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->env, nullptr);
  EXPECT_NE(p->what.find("65537 bytes"), std::string::npos);
}

TEST(OnnxLimitsTest, ShapeDimensionsAreEntries) {
  onnx::ModelProto m = relu_chain(1);
  auto* shape =
      m.mutable_graph()->add_input()->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int i = 0; i < 100; ++i) shape->add_dim()->set_dim_value(1);
  Limits limits;
  limits.entries = 100;
  const auto p = check(m, limits);
  ASSERT_TRUE(p);
  EXPECT_STREQ(p->env, "EULERNPU_MAX_ONNX_ENTRIES");
  limits.entries = 1000;
  EXPECT_FALSE(check(m, limits));
}

// The walk fails closed: what it cannot walk is reported as malformed,
// never passed on unchecked.
TEST(OnnxLimitsTest, MalformedBytesAreReportedNotPassedOn) {
  const std::string bytes = relu_chain(3).SerializeAsString();
  EXPECT_FALSE(check_model_bytes(bytes.data(), bytes.size(), Limits{}));
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    const auto p = check_model_bytes(bytes.data(), cut, Limits{});
    if (p) {  // some prefixes are whole messages
      EXPECT_TRUE(p->malformed) << cut;
    }
  }
  const std::string junk = "\x3a\xff\xff\xff\xff\x0f";  // a graph of 4 GiB in 6 bytes
  const auto p = check_model_bytes(junk.data(), junk.size(), Limits{});
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->malformed);
  EXPECT_EQ(p->env, nullptr);
}

// protobuf skips an unknown group where the walk cannot: a group before the
// graph must not hide the graph's nodes from the counts.
TEST(OnnxLimitsTest, AGroupIsMalformedThoughTheParserSkipsIt) {
  const std::string graph = relu_chain(3).SerializeAsString();
  const std::string bytes = std::string("\x08\x08\xc3\x3e\xc4\x3e", 6) + graph;
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));  // what the count check guards against
  EXPECT_EQ(parsed.graph().node_size(), 3);
  const auto p = check_model_bytes(bytes.data(), bytes.size(), Limits{});
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->malformed);
}

TEST(OnnxLimitsTest, TrainingGraphsAndAnnotationsCount) {
  onnx::ModelProto m = relu_chain(1);
  *m.add_training_info()->mutable_algorithm() = relu_chain(3).graph();
  Limits limits;
  limits.nodes = 3;
  EXPECT_TRUE(check(m, limits));
  limits.nodes = 4;
  EXPECT_FALSE(check(m, limits));
  onnx::ModelProto a = relu_chain(1);
  auto* annotation = a.mutable_graph()->add_quantization_annotation();
  for (int i = 0; i < 50; ++i) annotation->add_quant_parameter_tensor_names();
  limits.entries = 50;
  EXPECT_TRUE(check(a, limits));
}

TEST(OnnxLimitsTest, NumberFieldsAreEntriesButTensorDataIsNot) {
  onnx::ModelProto m = relu_chain(1);
  auto* t = m.mutable_graph()->add_initializer();
  for (int i = 0; i < 100; ++i) t->add_dims(1);  // unpacked, as protobuf writes proto2
  Limits limits;
  limits.entries = 100;
  EXPECT_TRUE(check(m, limits));
  onnx::ModelProto d = relu_chain(1);
  auto* w = d.mutable_graph()->add_initializer();
  for (int i = 0; i < 1000; ++i) w->add_float_data(0.5f);
  for (int i = 0; i < 1000; ++i) w->add_int64_data(i);
  limits.entries = 50;
  EXPECT_FALSE(check(d, limits));
}

TEST(OnnxLimitsTest, SettingsParse) {
  EXPECT_EQ(parse_limit_setting("12"), 12u);
  EXPECT_EQ(parse_limit_setting("2K"), 2048u);
  EXPECT_EQ(parse_limit_setting("1T"), uint64_t{1} << 40);
  for (const char* bad : {"", "0", "-1", "1.5", "1KB", "k", "99999999999999999999", "16777216T"}) {
    EXPECT_FALSE(parse_limit_setting(bad)) << bad;
  }
}

}  // namespace
}  // namespace eulernpu::sdk::onnx_limits
