// The IR pass's shape and reduction rules: inference by opset and the
// constant folding of shape arithmetic, through infer_shapes on small
// models.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "ir/shape_inference.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;

// A one-graph model built node by node.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset) {
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.set_ir_version(8);
  }

  ModelBuilder& input(const std::string& name, const Dims& dims,
                      int32_t dtype = onnx::TensorProto::FLOAT) {
    auto* v = model_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(dtype);
    auto* shape = t->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
    }
    return *this;
  }

  ModelBuilder& ints(const std::string& name, const Dims& values, const Dims& dims) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }

  ModelBuilder& ints(const std::string& name, const Dims& values) {
    return ints(name, values, {static_cast<int64_t>(values.size())});
  }

  // Attributes: name -> ints (a single-entry list of an "i:" name is an int).
  ModelBuilder& node(const std::string& op, const std::vector<std::string>& ins,
                     const std::vector<std::string>& outs,
                     const std::map<std::string, Dims>& attrs = {}) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(model_.graph().node_size()));
    for (const auto& s : ins) n->add_input(s);
    for (const auto& s : outs) n->add_output(s);
    for (const auto& [name, values] : attrs) {
      auto* a = n->add_attribute();
      if (name.rfind("i:", 0) == 0) {
        a->set_name(name.substr(2));
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(values.at(0));
      } else {
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : values) a->add_ints(v);
      }
    }
    return *this;
  }

  // An int32 or int8 initializer (the integer ops' Bias, M, S, W, tables).
  template <typename T>
  ModelBuilder& values(const std::string& name, const std::vector<T>& values, const Dims& dims) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(sizeof(T) == 1 ? onnx::TensorProto::INT8 : onnx::TensorProto::INT32);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
    return *this;
  }

  // Puts the last node added in `domain` (imported at `version`).
  ModelBuilder& domain(const std::string& domain, int64_t version = 1) {
    model_.mutable_graph()->mutable_node()->rbegin()->set_domain(domain);
    for (const auto& o : model_.opset_import()) {
      if (o.domain() == domain) return *this;
    }
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
    return *this;
  }

  // A string attribute on the last node added.
  ModelBuilder& string_attr(const std::string& name, const std::string& value) {
    auto* a = model_.mutable_graph()->mutable_node()->rbegin()->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
    return *this;
  }

  ModelBuilder& output(const std::string& name) {
    model_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }

  InferStats infer() { return infer_shapes(model_, "test"); }
  const onnx::ModelProto& model() const { return model_; }

  // The inferred dims of a value (-1 where unknown); empty optional when
  // its shape is unknown.
  std::optional<Dims> dims(const std::string& name) const {
    const auto& g = model_.graph();
    for (const auto* list : {&g.value_info(), &g.output()}) {
      for (const auto& v : *list) {
        if (v.name() != name) continue;
        const auto& t = v.type().tensor_type();
        if (!t.has_shape()) return std::nullopt;
        Dims d;
        for (const auto& dim : t.shape().dim())
          d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
        return d;
      }
    }
    for (const auto& t : g.initializer()) {
      if (t.name() == name) return Dims(t.dims().begin(), t.dims().end());
    }
    return std::nullopt;
  }

  // The values of a folded int64 initializer.
  std::optional<Dims> folded(const std::string& name) const {
    for (const auto& t : model_.graph().initializer()) {
      if (t.name() != name) continue;
      Dims v(t.int64_data().begin(), t.int64_data().end());
      if (v.empty() && !t.raw_data().empty()) {
        v.resize(t.raw_data().size() / 8);
        std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
      }
      return v;
    }
    return std::nullopt;
  }

 private:
  onnx::ModelProto model_;
};

TEST(ShapeRulesTest, PytorchDynamicReshapeChainFoldsToOneReshape) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4})
      .ints("zero", {0}, {})
      .ints("ax0", {0})
      .ints("minus1", {-1})
      .node("Shape", {"x"}, {"s"})
      .node("Gather", {"s", "zero"}, {"n"}, {{"i:axis", {0}}})
      .node("Unsqueeze", {"n", "ax0"}, {"n1"})
      .node("Concat", {"n1", "minus1"}, {"shape"}, {{"i:axis", {0}}})
      .node("Reshape", {"x", "shape"}, {"y"})
      .output("y");
  EXPECT_EQ(m.infer().folded_nodes, 4);
  ASSERT_EQ(m.model().graph().node_size(), 1);
  EXPECT_EQ(m.folded("shape"), (Dims{2, -1}));
  EXPECT_EQ(m.dims("y"), (Dims{2, 12}));
}

TEST(ShapeRulesTest, ReshapeCopiesZerosUnlessAllowzero) {
  ModelBuilder m(14);
  m.input("x", {0, 3}).ints("s", {0, 3}).node("Reshape", {"x", "s"}, {"y"}, {{"i:allowzero", {1}}});
  m.node("Reshape", {"x", "s"}, {"z"}).output("y").output("z");
  m.infer();
  EXPECT_EQ(m.dims("y"), (Dims{0, 3}));
  EXPECT_EQ(m.dims("z"), (Dims{0, 3}));
}

TEST(ShapeRulesTest, ReshapeRejectsAWrongElementCount) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).ints("s", {4, 2}).node("Reshape", {"x", "s"}, {"y"}).output("y");
  EXPECT_THROW(m.infer(), UserError);
}

TEST(ShapeRulesTest, ReshapeWithUnknownShapeKeepsTheRank) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).input("s", {3}, onnx::TensorProto::INT64);
  m.node("Reshape", {"x", "s"}, {"y"}).output("y");
  m.infer();
  EXPECT_EQ(m.dims("y"), (Dims{-1, -1, -1}));
}

TEST(ShapeRulesTest, SqueezeAndUnsqueezeReadAxesByOpset) {
  ModelBuilder old(11);
  old.input("x", {1, 3, 1}).node("Squeeze", {"x"}, {"y"}, {{"axes", {-1}}});
  old.node("Unsqueeze", {"y"}, {"z"}, {{"axes", {0, 3}}}).output("z");
  old.infer();
  EXPECT_EQ(old.dims("y"), (Dims{1, 3}));
  EXPECT_EQ(old.dims("z"), (Dims{1, 1, 3, 1}));

  ModelBuilder now(13);
  now.input("x", {1, 3, 1}).ints("a", {0}).node("Squeeze", {"x", "a"}, {"y"});
  now.node("Squeeze", {"x"}, {"all"}).node("Unsqueeze", {"y", "a"}, {"z"});
  now.output("z").output("all");
  now.infer();
  EXPECT_EQ(now.dims("y"), (Dims{3, 1}));
  EXPECT_EQ(now.dims("all"), (Dims{3}));
  EXPECT_EQ(now.dims("z"), (Dims{1, 3, 1}));
}

TEST(ShapeRulesTest, SliceClampsAndStepsBackwards) {
  ModelBuilder m(13);
  m.input("x", {5, 6, 7})
      .ints("st", {-1, 100, 1})
      .ints("en", {-1000, 0, 1})
      .ints("ax", {0, 1, 2})
      .ints("sp", {-2, -3, 1})
      .node("Slice", {"x", "st", "en", "ax", "sp"}, {"y"})
      .output("y");
  m.infer();
  EXPECT_EQ(m.dims("y"), (Dims{3, 2, 0}));
}

TEST(ShapeRulesTest, SliceOfAShapeFolds) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).ints("st", {1}).ints("en", {INT64_MAX});
  m.node("Shape", {"x"}, {"s"}).node("Slice", {"s", "st", "en"}, {"tail"}).output("tail");
  m.infer();
  EXPECT_EQ(m.folded("tail"), (Dims{3, 4}));
}

TEST(ShapeRulesTest, SliceAttributesBeforeOpset10) {
  ModelBuilder m(9);
  m.input("x", {5, 6})
      .node("Slice", {"x"}, {"y"}, {{"starts", {1}}, {"ends", {-1}}, {"axes", {1}}});
  m.output("y").infer();
  EXPECT_EQ(m.dims("y"), (Dims{5, 4}));
}

TEST(ShapeRulesTest, SplitSizesByOpset) {
  ModelBuilder uneven(18);
  uneven.input("x", {8, 2}).node("Split", {"x"}, {"a", "b", "c"}, {{"i:num_outputs", {3}}});
  uneven.output("c").infer();
  EXPECT_EQ(uneven.dims("a"), (Dims{3, 2}));
  EXPECT_EQ(uneven.dims("c"), (Dims{2, 2}));

  ModelBuilder attr(11);
  attr.input("x", {8, 2}).node("Split", {"x"}, {"a", "b"}, {{"split", {5, 3}}}).output("b");
  attr.infer();
  EXPECT_EQ(attr.dims("a"), (Dims{5, 2}));
  EXPECT_EQ(attr.dims("b"), (Dims{3, 2}));

  ModelBuilder odd(13);
  odd.input("x", {7}).node("Split", {"x"}, {"a", "b"}).output("b");
  EXPECT_THROW(odd.infer(), UserError);
}

TEST(ShapeRulesTest, GatherFoldsNegativeIndicesAndLeavesBadOnesToTheBackend) {
  ModelBuilder m(13);
  m.ints("d", {10, 20, 30}).ints("i", {-1, 0}).ints("bad", {3});
  m.node("Gather", {"d", "i"}, {"y"}).node("Gather", {"d", "bad"}, {"z"}).output("y").output("z");
  m.infer();
  EXPECT_EQ(m.folded("y"), (Dims{30, 10}));
  EXPECT_FALSE(m.folded("z").has_value());
  EXPECT_EQ(m.dims("z"), (Dims{1}));
}

TEST(ShapeRulesTest, RangeConstantOfShapeExpandTileTransposeFold) {
  ModelBuilder m(13);
  m.ints("s", {0}, {}).ints("l", {7}, {}).ints("d", {3}, {}).ints("shape", {2, 1});
  m.ints("big", {2, 3}).ints("rep", {1, 2});
  m.node("Range", {"s", "l", "d"}, {"r"}).node("ConstantOfShape", {"shape"}, {"zeros"});
  m.node("Expand", {"r", "big"}, {"e"}).node("Tile", {"e", "rep"}, {"t"});
  m.node("Transpose", {"e"}, {"et"});
  m.output("r").output("zeros").output("t").output("et");
  EXPECT_EQ(m.infer().folded_nodes, 5);
  EXPECT_EQ(m.folded("r"), (Dims{0, 3, 6}));
  EXPECT_EQ(m.dims("zeros"), (Dims{2, 1}));
  EXPECT_EQ(m.folded("t"), (Dims{0, 3, 6, 0, 3, 6, 0, 3, 6, 0, 3, 6}));
  EXPECT_EQ(m.folded("et"), (Dims{0, 0, 3, 3, 6, 6}));
}

TEST(ShapeRulesTest, PadReadsPadsAndAxesByOpset) {
  ModelBuilder old(10);
  old.input("x", {2, 3}).node("Pad", {"x"}, {"y"}, {{"pads", {0, 1, 1, -1}}}).output("y");
  old.infer();
  EXPECT_EQ(old.dims("y"), (Dims{3, 3}));

  ModelBuilder now(18);
  now.input("x", {2, 3}).ints("p", {2, 3}).ints("ax", {-1});
  now.node("Pad", {"x", "p", "", "ax"}, {"y"}).output("y").infer();
  EXPECT_EQ(now.dims("y"), (Dims{2, 8}));
}

TEST(ShapeRulesTest, ReduceAxesMoveToAnInputByOp) {
  ModelBuilder attr(13);
  attr.input("x", {2, 3, 4})
      .node("ReduceMean", {"x"}, {"y"}, {{"axes", {-1}}, {"i:keepdims", {0}}});
  attr.ints("a", {1}).node("ReduceSum", {"x", "a"}, {"s"}).output("y").output("s");
  attr.infer();
  EXPECT_EQ(attr.dims("y"), (Dims{2, 3}));
  EXPECT_EQ(attr.dims("s"), (Dims{2, 1, 4}));

  ModelBuilder input(18);
  input.input("x", {2, 3, 4}).ints("a", {0, 2}).ints("none", {}, {0});
  input.node("ReduceMax", {"x", "a"}, {"y"}, {{"i:keepdims", {0}}});
  input.node("ReduceL2", {"x", "none"}, {"same"}, {{"i:noop_with_empty_axes", {1}}});
  input.node("ReduceL2", {"x"}, {"all"}).output("y").output("same").output("all");
  input.infer();
  EXPECT_EQ(input.dims("y"), (Dims{3}));
  EXPECT_EQ(input.dims("same"), (Dims{2, 3, 4}));
  EXPECT_EQ(input.dims("all"), (Dims{1, 1, 1}));
}

TEST(ShapeRulesTest, ReduceProdOfAShapeFoldsToTheElementCount) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).node("Shape", {"x"}, {"s"});
  m.node("ReduceProd", {"s"}, {"n"}, {{"i:keepdims", {0}}}).output("n");
  m.infer();
  EXPECT_EQ(m.folded("n"), (Dims{24}));
}

TEST(ShapeRulesTest, ArgMaxTopKAndCumSum) {
  ModelBuilder m(13);
  m.input("x", {2, 5}).ints("k", {3});
  m.node("ArgMax", {"x"}, {"am"}, {{"i:axis", {1}}, {"i:keepdims", {0}}});
  m.node("TopK", {"x", "k"}, {"v", "i"});
  m.ints("ax", {0}, {}).node("CumSum", {"x", "ax"}, {"c"});
  m.output("am").output("v").output("i").output("c").infer();
  EXPECT_EQ(m.dims("am"), (Dims{2}));
  EXPECT_EQ(m.dims("v"), (Dims{2, 3}));
  EXPECT_EQ(m.dims("i"), (Dims{2, 3}));
  EXPECT_EQ(m.dims("c"), (Dims{2, 5}));

  ModelBuilder big(13);
  big.input("x", {2, 5}).ints("k", {6}).node("TopK", {"x", "k"}, {"v", "i"}).output("v");
  EXPECT_THROW(big.infer(), UserError);
}

TEST(ShapeRulesTest, SpaceDepthFlattenAndConcat) {
  ModelBuilder m(13);
  m.input("x", {1, 8, 2, 3}).input("y", {1, 8, -1, 3});
  m.node("DepthToSpace", {"x"}, {"d"}, {{"i:blocksize", {2}}});
  m.node("SpaceToDepth", {"d"}, {"s"}, {{"i:blocksize", {2}}});
  m.node("Flatten", {"x"}, {"f"}, {{"i:axis", {-1}}});
  m.node("Concat", {"x", "y"}, {"c"}, {{"i:axis", {2}}});
  m.output("s").output("f").output("c").infer();
  EXPECT_EQ(m.dims("d"), (Dims{1, 2, 4, 6}));
  EXPECT_EQ(m.dims("s"), (Dims{1, 8, 2, 3}));
  EXPECT_EQ(m.dims("f"), (Dims{16, 3}));
  EXPECT_EQ(m.dims("c"), (Dims{1, 8, -1, 3}));
}

TEST(ShapeRulesTest, LinearAttentionSharesKvHeadsAndTypesTheState) {
  ModelBuilder m(27);
  m.input("q", {2, 4, 64}).input("k", {2, 4, 32}).input("v", {2, 4, 16});
  m.input("g", {2, 4, 4}).input("b", {2, 4, 1});
  m.node("LinearAttention", {"q", "k", "v", "", "g", "b"}, {"o", "s"},
         {{"i:q_num_heads", {8}}, {"i:kv_num_heads", {4}}});
  m.output("o").output("s").infer();
  EXPECT_EQ(m.dims("o"), (Dims{2, 4, 32}));
  EXPECT_EQ(m.dims("s"), (Dims{2, 4, 8, 4}));

  // The default update rule, gated_delta, needs decay and beta.
  ModelBuilder bare(27);
  bare.input("q", {2, 4, 32}).input("k", {2, 4, 32}).input("v", {2, 4, 32});
  bare.node("LinearAttention", {"q", "k", "v"}, {"o", "s"},
            {{"i:q_num_heads", {4}}, {"i:kv_num_heads", {4}}});
  bare.output("o");
  EXPECT_THROW(bare.infer(), UserError);

  ModelBuilder uneven(27);
  uneven.input("q", {2, 4, 32}).input("k", {2, 4, 24}).input("v", {2, 4, 24});
  uneven.node("LinearAttention", {"q", "k", "v"}, {"o", "s"},
              {{"i:q_num_heads", {4}}, {"i:kv_num_heads", {3}}});
  uneven.output("o");
  EXPECT_THROW(uneven.infer(), UserError);
}

TEST(ShapeRulesTest, CausalConvWithStateKeepsKernelMinusOnePositions) {
  ModelBuilder m(27);
  m.input("x", {2, 4, 8}).input("w", {4, 1, 3}).input("p", {2, 4, 2});
  m.node("CausalConvWithState", {"x", "w", "", "p"}, {"y", "s"}).output("y").output("s").infer();
  EXPECT_EQ(m.dims("y"), (Dims{2, 4, 8}));
  EXPECT_EQ(m.dims("s"), (Dims{2, 4, 2}));

  ModelBuilder bad(27);
  bad.input("x", {2, 4, 8}).input("w", {4, 1, 3}).input("p", {2, 4, 3});
  bad.node("CausalConvWithState", {"x", "w", "", "p"}, {"y", "s"}).output("y");
  EXPECT_THROW(bad.infer(), UserError);
}

TEST(ShapeRulesTest, TensorScatterAndSwiGLU) {
  ModelBuilder m(28);
  m.input("c", {2, 3, 8, 5}).input("u", {2, 3, 2, 5}).input("w", {2}, onnx::TensorProto::INT64);
  m.input("a", {2, 4}).input("b", {2, 4});
  m.node("TensorScatter", {"c", "u", "w"}, {"p"}).node("SwiGLU", {"a", "b"}, {"y"});
  m.output("p").output("y").infer();
  EXPECT_EQ(m.dims("p"), (Dims{2, 3, 8, 5}));
  EXPECT_EQ(m.dims("y"), (Dims{2, 4}));

  ModelBuilder batch_axis(24);
  batch_axis.input("c", {2, 8}).input("u", {1, 8});
  batch_axis.node("TensorScatter", {"c", "u"}, {"p"}, {{"i:axis", {0}}}).output("p");
  EXPECT_THROW(batch_axis.infer(), UserError);

  ModelBuilder longer(24);
  longer.input("c", {2, 4, 5}).input("u", {2, 6, 5});
  longer.node("TensorScatter", {"c", "u"}, {"p"}).output("p");
  EXPECT_THROW(longer.infer(), UserError);

  ModelBuilder broadcast(28);
  broadcast.input("a", {2, 4}).input("b", {1, 4});
  broadcast.node("SwiGLU", {"a", "b"}, {"y"}).output("y");
  EXPECT_THROW(broadcast.infer(), UserError);
}

TEST(ShapeRulesTest, RecurrentOutputsFollowLayoutAndHiddenSize) {
  ModelBuilder m(14);
  m.input("x", {5, 2, 3}).input("w", {1, 12, 3}).input("r", {1, 12, 4});
  m.input("xb", {2, 5, 3}).input("wl", {1, 16, 3}).input("rl", {1, 16, 4});
  // hidden_size comes from R when the attribute is absent.
  m.node("GRU", {"x", "w", "r"}, {"y", "y_h"});
  m.node("LSTM", {"xb", "wl", "rl"}, {"ly", "ly_h", "ly_c"},
         {{"i:layout", {1}}, {"i:hidden_size", {4}}});
  m.output("y").output("y_h").output("ly").output("ly_h").output("ly_c").infer();
  EXPECT_EQ(m.dims("y"), (Dims{5, 1, 2, 4}));
  EXPECT_EQ(m.dims("y_h"), (Dims{1, 2, 4}));
  EXPECT_EQ(m.dims("ly"), (Dims{2, 5, 1, 4}));
  EXPECT_EQ(m.dims("ly_h"), (Dims{2, 1, 4}));
  EXPECT_EQ(m.dims("ly_c"), (Dims{2, 1, 4}));

  ModelBuilder two_dirs(14);
  two_dirs.input("x", {5, 2, 3}).input("w", {2, 4, 3}).input("r", {2, 4, 4});
  two_dirs.node("RNN", {"x", "w", "r"}, {"y"}).output("y");
  EXPECT_THROW(two_dirs.infer(), UserError);  // forward, yet W holds two directions
}

TEST(ShapeRulesTest, MaxUnpoolSizesFromWindowOrConstantOutputShape) {
  ModelBuilder m(11);
  m.input("x", {1, 2, 2, 2}).input("i", {1, 2, 2, 2}, onnx::TensorProto::INT64);
  m.input("dyn", {4}, onnx::TensorProto::INT64).ints("os", {1, 2, 5, 5});
  m.node("MaxUnpool", {"x", "i"}, {"a"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  m.node("MaxUnpool", {"x", "i", "os"}, {"b"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  m.node("MaxUnpool", {"x", "i", "dyn"}, {"c"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  m.output("a").output("b").output("c");
  m.infer();
  EXPECT_EQ(m.dims("a"), (Dims{1, 2, 4, 4}));
  EXPECT_EQ(m.dims("b"), (Dims{1, 2, 5, 5}));
  EXPECT_EQ(m.dims("c"), (Dims{-1, -1, -1, -1}));
}

TEST(ShapeRulesTest, RoiAlignDeformConvDetAndTfIdf) {
  ModelBuilder m(19);
  m.input("x", {2, 3, 8, 8}).input("rois", {5, 4});
  m.input("bi", {5}, onnx::TensorProto::INT64);
  m.node("RoiAlign", {"x", "rois", "bi"}, {"r"}, {{"i:output_height", {3}}});
  m.input("w", {4, 3, 3, 3}).input("off", {2, 18, 4, 4});
  m.node("DeformConv", {"x", "w", "off"}, {"d"}, {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}});
  m.input("mats", {2, 3, 4, 4}).node("Det", {"mats"}, {"det"});
  m.input("tokens", {2, 6}, onnx::TensorProto::INT32);
  m.node("TfIdfVectorizer", {"tokens"}, {"tf"},
         {{"i:min_gram_length", {1}},
          {"i:max_gram_length", {1}},
          {"ngram_counts", {0}},
          {"ngram_indexes", {0, 4, 2}},
          {"pool_int64s", {7, 8, 9}}});
  m.string_attr("mode", "TF");
  m.output("r").output("d").output("det").output("tf");
  m.infer();
  EXPECT_EQ(m.dims("r"), (Dims{5, 3, 3, 1}));
  EXPECT_EQ(m.dims("d"), (Dims{2, 4, 4, 4}));
  EXPECT_EQ(m.dims("det"), (Dims{2, 3}));
  EXPECT_EQ(m.dims("tf"), (Dims{2, 5}));
}

TEST(ShapeRulesTest, DeformConvRejectsAMismatchedOffset) {
  ModelBuilder m(19);
  m.input("x", {1, 2, 5, 5}).input("w", {2, 2, 3, 3}).input("off", {1, 18, 3, 3});
  m.node("DeformConv", {"x", "w", "off"}, {"y"}, {{"i:offset_group", {2}}}).output("y");
  EXPECT_THROW(m.infer(), UserError);
}

// --- domain ai.eulernpu (rules_eulernpu.cpp) ----------------------------------

namespace qops {

constexpr int32_t kInt8 = onnx::TensorProto::INT8;
constexpr int32_t kOne = 1 << 30;

// A QConv of X (1, 4, 8, 8) with W (6, 2, 3, 3), group 2, and per-channel
// vectors of `channels` entries.
ModelBuilder qconv(const Dims& w_dims, int64_t channels, std::map<std::string, Dims> attrs = {}) {
  ModelBuilder m(17);
  const size_t w_count = static_cast<size_t>(
      std::accumulate(w_dims.begin(), w_dims.end(), int64_t{1}, std::multiplies<>()));
  const auto c = static_cast<size_t>(channels);
  attrs.emplace("i:group", Dims{2});
  m.input("x", {1, 4, 8, 8}, kInt8)
      .values("w", std::vector<int8_t>(w_count, 1), w_dims)
      .values("b", std::vector<int32_t>(c, 0), {channels})
      .values("m", std::vector<int32_t>(c, kOne), {channels})
      .values("s", std::vector<int32_t>(c, 31), {channels})
      .node("QConv", {"x", "w", "b", "m", "s"}, {"y"}, attrs)
      .domain("ai.eulernpu")
      .output("y");
  return m;
}

}  // namespace qops

TEST(ShapeRulesTest, EulerNpuConvShapesFollowConv) {
  auto m = qops::qconv({6, 2, 3, 3}, 6, {{"pads", {1, 0, 1, 0}}, {"strides", {2, 1}}});
  m.infer();
  EXPECT_EQ(m.dims("y"), (Dims{1, 6, 4, 6}));
  auto dw = qops::qconv({4, 1, 3, 3}, 4, {{"i:group", {4}}, {"dilations", {2, 2}}});
  dw.infer();
  EXPECT_EQ(dw.dims("y"), (Dims{1, 4, 4, 4}));
}

TEST(ShapeRulesTest, EulerNpuConvRejectsBadShapesAndAttributes) {
  // W's channels vs X's, group divisibility, vector lengths.
  EXPECT_THROW(qops::qconv({6, 3, 3, 3}, 6).infer(), UserError);
  EXPECT_THROW(qops::qconv({5, 2, 3, 3}, 5).infer(), UserError);
  EXPECT_THROW(qops::qconv({6, 2, 3, 3}, 5).infer(), UserError);
  EXPECT_THROW(qops::qconv({6, 2, 3}, 6).infer(), UserError);
  // Zero points and clamps inside int8, ordered; explicit pads only.
  EXPECT_THROW(qops::qconv({6, 2, 3, 3}, 6, {{"i:x_zero_point", {-129}}}).infer(), UserError);
  EXPECT_THROW(qops::qconv({6, 2, 3, 3}, 6, {{"i:qmin", {5}}, {"i:qmax", {4}}}).infer(), UserError);
  EXPECT_THROW(qops::qconv({6, 2, 3, 3}, 6, {{"pads", {-1, 0, 0, 0}}}).infer(), UserError);
  EXPECT_THROW(qops::qconv({6, 2, 3, 3}, 6, {{"kernel_shape", {3, 2}}}).infer(), UserError);
  auto same = qops::qconv({6, 2, 3, 3}, 6);
  same.string_attr("auto_pad", "SAME_UPPER");
  EXPECT_THROW(same.infer(), UserError);
}

TEST(ShapeRulesTest, EulerNpuMultipliersAndAccumulatorBound) {
  auto shift = [](int32_t m, int32_t s) {
    ModelBuilder b(17);
    b.input("a", {4, 8}, qops::kInt8)
        .values("w", std::vector<int8_t>(24, 127), {3, 8})
        .values("b", std::vector<int32_t>(3, 0), {3})
        .values("m", std::vector<int32_t>(3, m), {3})
        .values("s", std::vector<int32_t>(3, s), {3})
        .node("QGemm", {"a", "w", "b", "m", "s"}, {"y"})
        .domain("ai.eulernpu")
        .output("y");
    return b;
  };
  auto good = shift(qops::kOne, 62);
  good.infer();
  EXPECT_EQ(good.dims("y"), (Dims{4, 3}));
  shift(0, 1).infer();          // M = 0: every result 0
  shift(INT32_MAX, 1).infer();  // the largest multiplier
  EXPECT_THROW(shift(qops::kOne, 63).infer(), UserError);
  EXPECT_THROW(shift(qops::kOne, 0).infer(), UserError);
  EXPECT_THROW(shift(qops::kOne - 1, 30).infer(), UserError);

  // 8 terms · 255 · 127 + |Bias| must stay below 2^31.
  auto bound = [](int32_t bias) {
    ModelBuilder b(17);
    b.input("a", {2, 8}, qops::kInt8)
        .values("w", std::vector<int8_t>(8, -127), {1, 8})
        .values("b", std::vector<int32_t>{bias}, {1})
        .values("m", std::vector<int32_t>{qops::kOne}, {1})
        .values("s", std::vector<int32_t>{31}, {1})
        .node("QGemm", {"a", "w", "b", "m", "s"}, {"y"})
        .domain("ai.eulernpu");
    return b;
  };
  bound(INT32_MAX - 8 * 255 * 127).infer();
  EXPECT_THROW(bound(INT32_MAX - 8 * 255 * 127 + 1).infer(), UserError);
}

TEST(ShapeRulesTest, EulerNpuMatMulAddPoolConcatLookupSoftmax) {
  ModelBuilder m(17);
  m.input("a", {2, 1, 3, 5}, qops::kInt8).input("b", {4, 5, 6}, qops::kInt8);
  m.node("QMatMul", {"a", "b"}, {"mm"}, {{"i:multiplier", {qops::kOne}}, {"i:shift", {40}}})
      .domain("ai.eulernpu");
  m.input("c", {3, 1}, qops::kInt8);
  m.node("QMul", {"mm", "c"}, {"mul"}, {{"i:multiplier", {qops::kOne}}, {"i:shift", {40}}})
      .domain("ai.eulernpu");
  m.node("QAdd", {"mul", "c"}, {"add"},
         {{"i:a_multiplier", {qops::kOne}},
          {"i:a_shift", {32}},
          {"i:b_multiplier", {qops::kOne}},
          {"i:b_shift", {32}},
          {"i:y_multiplier", {qops::kOne}},
          {"i:y_shift", {20}}})
      .domain("ai.eulernpu");
  m.input("x", {1, 2, 7, 7}, qops::kInt8)
      .values("pm", std::vector<int32_t>(10, qops::kOne), {10})
      .values("ps", std::vector<int32_t>(10, 31), {10});
  m.node("QAveragePool", {"x", "pm", "ps"}, {"pool"},
         {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"i:ceil_mode", {1}}})
      .domain("ai.eulernpu");
  m.node("QGlobalAveragePool", {"x"}, {"gap"}, {{"i:multiplier", {0}}, {"i:shift", {1}}})
      .domain("ai.eulernpu");
  m.node("QConcat", {"x", "x"}, {"cat"},
         {{"i:axis", {-1}},
          {"x_zero_points", {0, 3}},
          {"multipliers", {qops::kOne, qops::kOne}},
          {"shifts", {30, 31}}});
  m.domain("ai.eulernpu");
  m.values("t", std::vector<int8_t>(256, 0), {256});
  m.node("QLookup", {"cat", "t"}, {"lut"}).domain("ai.eulernpu");
  std::vector<int32_t> e(256, 0);
  e[0] = 1 << 20;
  m.values("e", e, {256});
  m.node("QSoftmax", {"lut", "e"}, {"sm"}, {{"i:axis", {1}}}).domain("ai.eulernpu");
  for (const char* o : {"add", "pool", "gap", "sm"}) m.output(o);
  m.infer();
  EXPECT_EQ(m.dims("mm"), (Dims{2, 4, 3, 6}));
  EXPECT_EQ(m.dims("add"), (Dims{2, 4, 3, 6}));
  EXPECT_EQ(m.dims("pool"), (Dims{1, 2, 3, 3}));
  EXPECT_EQ(m.dims("gap"), (Dims{1, 2, 1, 1}));
  EXPECT_EQ(m.dims("cat"), (Dims{1, 2, 7, 14}));
  EXPECT_EQ(m.dims("sm"), (Dims{1, 2, 7, 14}));
}

TEST(ShapeRulesTest, EulerNpuRejectsBadElementwiseAndTables) {
  auto binary = [](const std::string& op, const Dims& b_dims, std::map<std::string, Dims> attrs) {
    ModelBuilder m(17);
    m.input("a", {2, 3}, qops::kInt8).input("b", b_dims, qops::kInt8);
    m.node(op, {"a", "b"}, {"y"}, attrs).domain("ai.eulernpu");
    return m;
  };
  const std::map<std::string, Dims> add = {{"i:a_multiplier", {qops::kOne}}, {"i:a_shift", {31}},
                                           {"i:b_multiplier", {qops::kOne}}, {"i:b_shift", {31}},
                                           {"i:y_multiplier", {0}},          {"i:y_shift", {1}}};
  binary("QAdd", {3}, add).infer();
  EXPECT_THROW(binary("QAdd", {2}, add).infer(), UserError);  // no broadcast
  auto big_a = add;
  big_a["i:a_shift"] = {30};  // an input rescale of 1 or more overflows a' + b'
  EXPECT_THROW(binary("QSub", {3}, big_a).infer(), UserError);
  auto no_y = add;
  no_y.erase("i:y_shift");
  EXPECT_THROW(binary("QAdd", {3}, no_y).infer(), UserError);
  EXPECT_THROW(binary("QMatMul", {2, 3}, {{"i:multiplier", {0}}, {"i:shift", {1}}}).infer(),
               UserError);

  ModelBuilder float_input(17);
  float_input.input("a", {2, 3}).values("t", std::vector<int8_t>(256, 0), {256});
  float_input.node("QLookup", {"a", "t"}, {"y"}).domain("ai.eulernpu");
  EXPECT_THROW(float_input.infer(), UserError);

  ModelBuilder short_table(17);
  short_table.input("a", {2, 3}, qops::kInt8).values("t", std::vector<int8_t>(255, 0), {255});
  short_table.node("QLookup", {"a", "t"}, {"y"}).domain("ai.eulernpu");
  EXPECT_THROW(short_table.infer(), UserError);

  ModelBuilder exp(17);
  exp.input("a", {2, 3}, qops::kInt8).values("e", std::vector<int32_t>(256, 1 << 20), {256});
  exp.node("QSoftmax", {"a", "e"}, {"y"}, {{"i:axis", {2}}}).domain("ai.eulernpu");
  EXPECT_THROW(exp.infer(), UserError);  // axis out of range

  ModelBuilder pool(17);
  pool.input("x", {1, 2, 5, 5}, qops::kInt8)
      .values("m", std::vector<int32_t>(4, qops::kOne), {4})
      .values("s", std::vector<int32_t>(4, 31), {4});
  pool.node("QAveragePool", {"x", "m", "s"}, {"y"}, {{"kernel_shape", {2, 2}}})
      .domain("ai.eulernpu");
  EXPECT_THROW(pool.infer(), UserError);  // M and S need 2 · 2 + 1 entries
}

TEST(ShapeRulesTest, EulerNpuConvTransposeOutputPaddingAndChannels) {
  auto build = [](const Dims& out_pad) {
    ModelBuilder m(17);
    m.input("x", {1, 4, 3, 3}, qops::kInt8)
        .values("w", std::vector<int8_t>(4 * 3 * 2 * 2, 1), {4, 3, 2, 2})
        .values("b", std::vector<int32_t>(6, 0), {6})
        .values("m", std::vector<int32_t>(6, qops::kOne), {6})
        .values("s", std::vector<int32_t>(6, 31), {6})
        .node("QConvTranspose", {"x", "w", "b", "m", "s"}, {"y"},
              {{"i:group", {2}}, {"strides", {2, 2}}, {"output_padding", out_pad}})
        .domain("ai.eulernpu")
        .output("y");
    return m;
  };
  auto m = build({1, 0});
  m.infer();
  EXPECT_EQ(m.dims("y"), (Dims{1, 6, 7, 6}));
  EXPECT_THROW(build({2, 0}).infer(), UserError);
}

}  // namespace
}  // namespace eulernpu::host::ir
