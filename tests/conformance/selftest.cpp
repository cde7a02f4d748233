// The conformance runner's rules, checked without the suites: a runner
// that judged wrongly would pass or fail every case for the wrong reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "formats/artifact.hpp"
#include "report.hpp"
#include "tensor_match.hpp"
#include "tolerances.hpp"

namespace fs = std::filesystem;

namespace eulernpu::conformance {
namespace {

using host::DType;
using host::Tensor;

template <typename T>
Tensor tensor(DType dtype, std::vector<int64_t> shape, std::vector<T> values) {
  Tensor t{"t", dtype, std::move(shape), std::vector<uint8_t>(values.size() * sizeof(T))};
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

Tensor f32(std::vector<float> v) { return tensor(DType::kFloat32, {int64_t(v.size())}, v); }

fs::path scratch_file(const std::string& name, const std::string& text) {
  const char* env = std::getenv("EULERNPU_TEST_TMP");
  const fs::path dir = fs::path(env ? env : fs::temp_directory_path().string()) / "conformance";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

TEST(TensorMatch, AcceptsUpstreamTolerance) {
  // atol + rtol * |expected| = 1e-7 + 1e-3 * 100.
  EXPECT_FALSE(mismatch(f32({100.09f, 0}), f32({100, 0}), {}));
  EXPECT_TRUE(mismatch(f32({100.2f, 0}), f32({100, 0}), {}));
  EXPECT_FALSE(mismatch(f32({100.2f}), f32({100}), {1e-2, 0}));
}

TEST(TensorMatch, NanMatchesNanAndInfinityOnlyItself) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(mismatch(f32({nan, inf, -inf}), f32({nan, inf, -inf}), {}));
  EXPECT_TRUE(mismatch(f32({1}), f32({nan}), {}));
  EXPECT_TRUE(mismatch(f32({1e30f}), f32({inf}), {}));
  EXPECT_TRUE(mismatch(f32({inf}), f32({-inf}), {}));
}

TEST(TensorMatch, ReportsCountWorstDifferenceAndIndex) {
  const Tensor want = tensor<float>(DType::kFloat32, {2, 2}, {0, 1, 2, 3});
  const Tensor got = tensor<float>(DType::kFloat32, {2, 2}, {0, 1.5f, 2, 5});
  EXPECT_EQ(*mismatch(got, want, {}),
            "2 of 4 elements differ, max abs diff 2 at [1, 1] (got 5, expected 3)");
}

TEST(TensorMatch, DtypeAndShapeMustBeEqual) {
  EXPECT_EQ(*mismatch(tensor<double>(DType::kFloat64, {1}, {1}), f32({1}), {}),
            "dtype float64, expected float32");
  EXPECT_EQ(*mismatch(tensor<float>(DType::kFloat32, {1, 1}, {1}), f32({1}), {}),
            "shape (1, 1), expected (1,)");
}

TEST(TensorMatch, IntegersExactlyBeyondDoublePrecision) {
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_TRUE(mismatch(tensor<int64_t>(DType::kInt64, {1}, {big - 1}),
                       tensor<int64_t>(DType::kInt64, {1}, {big}), {1, 1}));
  EXPECT_FALSE(mismatch(tensor<int64_t>(DType::kInt64, {1}, {big}),
                        tensor<int64_t>(DType::kInt64, {1}, {big}), {}));
  EXPECT_TRUE(mismatch(tensor<uint8_t>(DType::kBool, {1}, {0}),
                       tensor<uint8_t>(DType::kBool, {1}, {1}), {1, 1}));
}

TEST(Tolerances, NeedAReasonPerEntry) {
  const auto ok = read_tolerance_overrides(
      scratch_file("ok.txt", "# comment\n\nnode/test_a 1e-2 1e-5 expected values rounded\n"));
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok.at("node/test_a").tolerance.rtol, 1e-2);
  EXPECT_EQ(ok.at("node/test_a").reason, "expected values rounded");
  EXPECT_THROW(read_tolerance_overrides(scratch_file("bad.txt", "node/test_a 1e-2 1e-5\n")),
               SetupError);
  EXPECT_THROW(read_tolerance_overrides(scratch_file("neg.txt", "node/test_a -1 0 why\n")),
               SetupError);
}

CaseResult result(const std::string& name, Status s, const std::string& reason = "") {
  return {name, name.substr(0, name.find('/')), {"Relu"}, s, reason, "", ""};
}

TEST(Expected, ListMustBeSorted) {
  EXPECT_EQ(read_expected(scratch_file("e.txt", "node/a\nnode/b\n")).size(), 2u);
  EXPECT_THROW(read_expected(scratch_file("u.txt", "node/b\nnode/a\n")), SetupError);
  EXPECT_THROW(read_expected(scratch_file("d.txt", "node/a\nnode/a\n")), SetupError);
}

TEST(Expected, SkipsAndFailuresOfListedCasesAreRegressions) {
  const std::vector<CaseResult> results = {result("node/a", Status::kPass),
                                           result("node/b", Status::kSkip, "cpu_ref: X why"),
                                           result("node/c", Status::kPass)};
  const auto all = [](const std::string& n) { return n.rfind("node/", 0) == 0; };
  const auto check = check_expected({"node/a", "node/b", "node/gone", "simple/x"}, results, all);
  EXPECT_EQ(check.regressions,
            (std::vector<std::string>{"REGRESSION SKIP node/b: cpu_ref: X why",
                                      "REGRESSION node/gone: no such case in the suites"}));
  EXPECT_EQ(check.new_passes, std::vector<std::string>{"NEW PASS node/c"});
  // Entries outside the run are kept.
  EXPECT_EQ(updated_expected({"node/b", "simple/x"}, results, all),
            (std::vector<std::string>{"node/a", "node/c", "simple/x"}));
}

TEST(Report, SummaryLine) {
  EXPECT_EQ(summary_line({result("node/a", Status::kPass), result("node/b", Status::kFail, "x"),
                          result("simple/c", Status::kSkip, "y")}),
            "conformance: 1 passed, 1 failed, 1 skipped (node: 1/2 passed)");
  EXPECT_EQ(case_line(result("node/b", Status::kFail, "run: boom")), "FAIL node/b: run: boom");
}

TEST(Artifact, FromFilesServesTheFilesInMemory) {
  const host::Artifact a = host::Artifact::from_files({{"graph.json", {'{', '}'}}});
  EXPECT_EQ(a.read("graph.json"), (std::vector<uint8_t>{'{', '}'}));
  EXPECT_THROW(a.read("plan.json"), host::UserError);
  EXPECT_THROW(a.read("../x"), host::UserError);
}

}  // namespace
}  // namespace eulernpu::conformance
