// The kit's arity table (sdk/kit/src/onnx_arity.inc and the ops newer than
// libonnx) against libonnx's schemas and the kit's own op table: every op
// the kit runs has an arity, and every generated row still matches ONNX.
#include "eulernpu/kit/arity.hpp"

#include <gtest/gtest.h>

#include <climits>

#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/int8_ops.hpp"
#include "onnx/defs/schema.h"

namespace eulernpu::kit {
namespace {

TEST(ArityTest, TheGeneratedTableMatchesLibonnx) {
  size_t checked = 0;
  for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (!s.domain().empty()) continue;
    const auto a = arity_of("", s.Name(), s.SinceVersion());
    ASSERT_TRUE(a) << s.Name() << "-" << s.SinceVersion()
                   << ": regenerate with build/bin/onnx_arity_table > sdk/kit/src/onnx_arity.inc";
    EXPECT_EQ(a->min_inputs, s.min_input()) << s.Name() << "-" << s.SinceVersion();
    EXPECT_EQ(a->max_inputs, s.max_input() == INT_MAX ? -1 : s.max_input()) << s.Name();
    EXPECT_EQ(a->min_outputs, s.min_output()) << s.Name() << "-" << s.SinceVersion();
    ++checked;
  }
  EXPECT_GT(checked, 300u);
}

TEST(ArityTest, EveryOpTheKitRunsHasOne) {
  for (const OpEntry& e : op_table()) {
    EXPECT_TRUE(arity_of(e.domain, e.op_type, e.since_version))
        << e.op_type << " of '" << e.domain << "': add it to kNewer in sdk/kit/src/arity.cpp";
  }
}

TEST(ArityTest, MissingRequiredOperandsAreProblems) {
  EXPECT_EQ(arity_problem("", "Gemm", 13, {"a"}, {"y"}), "has 1 inputs; it takes at least 2");
  EXPECT_EQ(arity_problem("", "Relu", 14, {"x"}, {}), "has 0 outputs; it takes at least 1");
  EXPECT_EQ(arity_problem("", "Add", 14, {"", "b"}, {"y"}), "inputs 0 is required");
  // Omitted optional inputs are fine; so is an input a newer opset added.
  EXPECT_FALSE(arity_problem("", "Clip", 13, {"x", "", "hi"}, {"y"}));
  EXPECT_FALSE(arity_problem("", "Pad", 21, {"x", "p", "", "axes"}, {"y"}));
  EXPECT_EQ(arity_problem(sdk::int8_ops::kDomain, "QConv", 1, {"x", "w", "b", "m"}, {"y"}),
            "has 4 inputs; it takes at least 5");
  EXPECT_FALSE(arity_problem(sdk::int8_ops::kDomain, "QConcat", 1, {"a", "b", "c"}, {"y"}));
  // An op nobody knows is left to the executor, which has no kernel for it.
  EXPECT_FALSE(arity_problem("", "NoSuchOp", 13, {}, {}));
}

}  // namespace
}  // namespace eulernpu::kit
