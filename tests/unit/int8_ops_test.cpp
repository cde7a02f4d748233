// The one ai.eulernpu op list (sdk/int8_ops.hpp) against everything that
// must agree with it: the host's shape rules, the backends' declared ops
// (cpu_ref's op table, npu_sim's declarations through the plugin ABI) and
// the op table of docs/quantization.md. Adding an op to the list without
// its rule, kernel or doc entry — or one of those without the list — fails
// here.
#include "eulernpu/sdk/int8_ops.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "eulernpu/kit/op_table.hpp"
#include "ir/op_rules.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu {
namespace {

namespace ops = sdk::int8_ops;
namespace ir = host::ir;
using host::PluginRegistry;

std::set<std::string> listed_ops() {
  std::set<std::string> names;
  for (const ops::Op& op : ops::kOps) names.emplace(op.name);
  return names;
}

TEST(Int8OpsTest, TheListHasNoDuplicatesAndFindsEachOp) {
  EXPECT_EQ(listed_ops().size(), std::size(ops::kOps));
  for (const ops::Op& op : ops::kOps) EXPECT_EQ(ops::find(op.name), &op);
  EXPECT_EQ(ops::find("QRelu"), nullptr);
  EXPECT_TRUE(ops::is_movement_op("Reshape"));
  EXPECT_FALSE(ops::is_movement_op("Add"));
}

TEST(Int8OpsTest, EveryOpHasAHostRuleAndEveryRuleAnOp) {
  for (const ops::Op& op : ops::kOps) {
    EXPECT_NE(ir::find_rule(ops::kDomain, op.name), nullptr) << op.name;
  }
  for (const ir::OpRule& r : ir::eulernpu_rules()) {
    EXPECT_NE(ops::find(r.op_type), nullptr) << r.op_type << " has a rule but is not listed";
  }
}

TEST(Int8OpsTest, CpuRefHasAKernelForEveryOpAndNoOther) {
  for (const ops::Op& op : ops::kOps) {
    EXPECT_NE(kit::find_op(ops::kDomain, op.name, ops::kOpsetVersion), nullptr) << op.name;
  }
  for (const kit::OpEntry& e : kit::op_table()) {
    if (e.domain != ops::kDomain) continue;
    EXPECT_NE(ops::find(e.op_type), nullptr) << e.op_type << " has a kernel but is not listed";
  }
  for (std::string_view m : ops::kMovementOps) {
    EXPECT_NE(kit::find_op("", m, 13), nullptr) << m;
  }
}

TEST(Int8OpsTest, EveryBackendDeclaresTheListedOps) {
  const PluginRegistry registry = PluginRegistry::discover({EULERNPU_TEST_PLUGIN_DIR}, "", "");
  for (const char* name : {"cpu_ref", "npu_sim"}) {
    const auto& backend = registry.backend(name).backend();
    std::set<std::string> declared, moves;
    for (uint64_t i = 0; i < backend.n_ops; ++i) {
      const enp_op_support_t& op = backend.ops[i];
      if (op.domain == ops::kDomain) {
        declared.emplace(op.op_type);
      } else if (std::string_view(op.domain).empty() && ops::is_movement_op(op.op_type) &&
                 (op.dtypes & ENP_DTYPE_BIT(ENP_DTYPE_INT8))) {
        moves.emplace(op.op_type);
      }
    }
    EXPECT_EQ(declared, listed_ops()) << name;
    EXPECT_EQ(moves.size(), std::size(ops::kMovementOps)) << name << ": int8 movement ops";
  }
}

TEST(Int8OpsTest, TheDocsTableHasARowForEveryOp) {
  const auto path = std::filesystem::path(EULERNPU_TEST_SOURCE_DIR) / "docs" / "quantization.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  std::set<std::string> rows;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    // A row starts "| `QConv` |" or "| `QAdd`, `QSub` |".
    if (line.rfind("| `Q", 0) != 0) continue;
    const std::string cell = line.substr(2, line.find(" |", 2) - 2);
    for (size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
      const size_t end = cell.find('`', at + 1);
      if (end == std::string::npos) break;
      rows.insert(cell.substr(at + 1, end - at - 1));
      at = end;
    }
  }
  EXPECT_EQ(rows, listed_ops());
  for (std::string_view m : ops::kMovementOps) {
    EXPECT_NE(doc.find(std::string(m)), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace eulernpu
