// sdk/yaml_checks.hpp: one document, each key once, and a walk that a
// file of nested aliases cannot make endless.
#include "eulernpu/sdk/yaml_checks.hpp"

#include <gtest/gtest.h>

#include <string>

namespace eulernpu::sdk::yaml_checks {
namespace {

TEST(YamlChecksTest, AcceptsOneDocumentWithDistinctKeys) {
  EXPECT_FALSE(document_problem(YAML::LoadAll("a: 1\nb: {x: 1, y: [{x: 2}, {x: 3}]}\n")));
  EXPECT_FALSE(document_problem(YAML::LoadAll("")));  // an empty file: no document
}

TEST(YamlChecksTest, NamesTheRepeatedKeyAndItsLine) {
  const auto p = document_problem(YAML::LoadAll("a: 1\nb:\n  x: 1\n  y: 2\n  x: 3\n"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 4);
  EXPECT_EQ(p->what, "key 'x' appears twice in one mapping");
  // Inside a list, too.
  EXPECT_TRUE(duplicate_key(YAML::Load("- {a: 1}\n- {b: 1, b: 2}\n")));
}

TEST(YamlChecksTest, RefusesASecondDocument) {
  const auto p = document_problem(YAML::LoadAll("a: 1\n---\nb: 2\n"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->what, "holds 2 YAML documents; eulernpu reads exactly one");
  EXPECT_EQ(p->line, 2);
}

TEST(YamlChecksTest, LoadAllStopsAtAStrayFlowToken) {
  // YAML::LoadAll itself never returns on these (yaml-cpp 0.7).
  for (const char* text : {",", ",a:\n b: 1\n", "# note\n\n,layers:\n  fc4: {keep_fp32: true}\n"}) {
    try {
      load_all(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const YAML::ParserException& e) {
      EXPECT_EQ(e.msg, "unexpected character where a document starts") << text;
    }
  }
  EXPECT_EQ(load_all("a: 1\n---\nb: 2\n").size(), 2u);
  EXPECT_EQ(load_all("").size(), 0u);
  EXPECT_EQ(load_all("[,]").size(), 1u);
}

TEST(YamlChecksTest, ABillionLaughsStopsAtTheNodeBudget) {
  // Nine levels of ten aliases each: 10^9 nodes from a few hundred bytes.
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "l" + string.
  std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    const std::string n = std::to_string(i), prev = std::to_string(i - 1);
    text.append("l").append(n).append(": &l").append(n).append(" [");
    for (int k = 0; k < 10; ++k) text.append(k ? ", *l" : "*l").append(prev);
    text.append("]\n");
  }
  const auto p = document_problem(YAML::LoadAll(text));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->what, "expands to more than 2000000 nodes (aliases included)");
}

}  // namespace
}  // namespace eulernpu::sdk::yaml_checks
