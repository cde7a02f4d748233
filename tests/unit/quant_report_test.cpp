// The per-layer accuracy report: its figures on hand-computed cases, the
// worst-first order, the terminal table and the JSON document.
#include "quant/quant_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/error.hpp"

namespace eulernpu::host {
namespace {

namespace fs = std::filesystem;

constexpr double kInf = std::numeric_limits<double>::infinity();

QuantizedValue value(const std::string& name, double scale = 1, int32_t zero_point = 0,
                     const std::string& node = "", const std::string& op = "Conv") {
  return {name, node.empty() ? name + "_node" : node, op, scale, zero_point};
}

// The [1, 2, 3] -> [1, 2, 2] case, scale 1 and zero point 0:
// Σf² = 14, Σ(f-dq)² = 1, Σf·dq = 1 + 4 + 6 = 11, Σdq² = 9.
void observe_123(QuantReport& r, size_t i) {
  const float f[] = {1, 2, 3};
  const int8_t q[] = {1, 2, 2};
  r.observe(i, f, q);
}

TEST(QuantReportTest, HandComputedFigures) {
  QuantReport r;
  observe_123(r, r.add_value(value("a")));
  const LayerError l = r.ranked().at(0);
  EXPECT_EQ(l.sum_f2, 14);
  EXPECT_EQ(l.sum_noise2, 1);
  EXPECT_EQ(l.sum_f_dq, 11);
  EXPECT_EQ(l.sum_dq2, 9);
  EXPECT_EQ(l.max_abs_error, 1);
  EXPECT_EQ(l.elements, 3u);
  EXPECT_EQ(l.observations, 1u);
  EXPECT_DOUBLE_EQ(l.sqnr_db(), 10 * std::log10(14.0));  // 11.461 dB
  EXPECT_NEAR(l.sqnr_db(), 11.4613, 1e-4);
  EXPECT_DOUBLE_EQ(l.cosine(), 11 / std::sqrt(14.0 * 9.0));  // 0.979958
  EXPECT_DOUBLE_EQ(l.mean_squared_error(), 1.0 / 3);
}

TEST(QuantReportTest, DequantizesWithScaleAndZeroPoint) {
  QuantReport r;
  // dq = 0.5 · (q + 10): q = -8 -> 1, q = -12 -> -1, q = -10 -> 0, q = -9 -> 0.5.
  const size_t i = r.add_value(value("v", 0.5, -10));
  const float f[] = {1, -1, 0, 0.75f};
  const int8_t q[] = {-8, -12, -10, -9};
  r.observe(i, f, q);
  const LayerError l = r.ranked()[0];
  EXPECT_EQ(l.sum_noise2, 0.0625);  // only 0.75 vs 0.5
  EXPECT_EQ(l.max_abs_error, 0.25);
  EXPECT_EQ(l.sum_f_dq, 1 + 1 + 0.375);
  EXPECT_DOUBLE_EQ(l.sqnr_db(), 10 * std::log10((1 + 1 + 0.5625) / 0.0625));
}

TEST(QuantReportTest, AccumulatesOverSamples) {
  QuantReport one, split;
  observe_123(one, one.add_value(value("a")));
  const size_t i = split.add_value(value("a"));
  const float f1[] = {1, 2}, f2[] = {3};
  const int8_t q1[] = {1, 2}, q2[] = {2};
  split.observe(i, f1, q1);
  split.observe(i, f2, q2);
  EXPECT_EQ(split.ranked()[0].observations, 2u);
  EXPECT_EQ(split.ranked()[0].sqnr_db(), one.ranked()[0].sqnr_db());
  EXPECT_EQ(split.ranked()[0].cosine(), one.ranked()[0].cosine());
}

TEST(QuantReportTest, SumsAreEightLanesAddedInLaneOrder) {
  // The definition every machine's copy of the sums must reproduce bit for
  // bit: element i goes to lane i % 8 (the last n % 8 to lanes 0, 1, ...),
  // and the lanes are added to the totals in lane order. Values of every
  // magnitude, with NaN and infinities (left out, counted as skipped).
  const size_t n = 1003;
  std::vector<float> f(n);
  std::vector<int8_t> q(n);
  uint32_t state = 7;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    f[i] = std::ldexp(static_cast<float>(state >> 8) / 16777216.0f - 0.5f,
                      static_cast<int>(state % 24) - 12);
    q[i] = static_cast<int8_t>(state >> 24);
  }
  f[17] = std::numeric_limits<float>::quiet_NaN();
  f[400] = std::numeric_limits<float>::infinity();
  f[1001] = -std::numeric_limits<float>::infinity();
  const double scale = 0.0123, zero = -3;
  double lanes[4][8] = {};
  double max_abs = 0;
  uint64_t skipped = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t k = i < n / 8 * 8 ? i % 8 : i - n / 8 * 8;
    const double x = f[i];
    const bool finite = std::fabs(x) <= std::numeric_limits<double>::max();
    const double dq = scale * (static_cast<double>(q[i]) - zero);
    const double fz = finite ? x : 0.0, dqz = finite ? dq : 0.0, e = fz - dqz;
    lanes[0][k] += fz * fz;
    lanes[1][k] += e * e;
    lanes[2][k] += fz * dqz;
    lanes[3][k] += dqz * dqz;
    max_abs = std::max(max_abs, std::fabs(e));
    skipped += finite ? 0 : 1;
  }
  double want[4] = {};
  for (int s = 0; s < 4; ++s) {
    for (size_t k = 0; k < 8; ++k) want[s] += lanes[s][k];
  }
  QuantReport r;
  const size_t i = r.add_value(value("v", scale, static_cast<int32_t>(zero)));
  r.observe(i, f, q);
  const LayerError l = r.ranked().at(0);
  EXPECT_EQ(l.sum_f2, want[0]);
  EXPECT_EQ(l.sum_noise2, want[1]);
  EXPECT_EQ(l.sum_f_dq, want[2]);
  EXPECT_EQ(l.sum_dq2, want[3]);
  EXPECT_EQ(l.max_abs_error, max_abs);
  EXPECT_EQ(l.skipped, skipped);
  EXPECT_EQ(skipped, 3u);
  EXPECT_EQ(l.elements, n - 3);
}

TEST(QuantReportTest, EdgeCases) {
  QuantReport r;
  const size_t exact = r.add_value(value("exact"));
  const size_t zeros = r.add_value(value("zeros"));
  const size_t zero_ref = r.add_value(value("zero_ref"));
  const size_t nan = r.add_value(value("nan"));
  const float f[] = {1, 2}, z[] = {0, 0};
  const int8_t q[] = {1, 2}, qz[] = {0, 0};
  r.observe(exact, f, q);
  r.observe(zeros, z, qz);
  r.observe(zero_ref, z, q);
  const float with_nan[] = {1, std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity()};
  const int8_t q3[] = {1, 0, 127};
  r.observe(nan, with_nan, q3);
  for (const LayerError& l : r.ranked()) {
    if (l.value.name == "exact") {
      EXPECT_EQ(l.sqnr_db(), kInf);
      EXPECT_EQ(l.cosine(), 1);
    } else if (l.value.name == "zeros") {
      EXPECT_EQ(l.sqnr_db(), kInf);  // nothing to get wrong, and nothing wrong
      EXPECT_EQ(l.cosine(), 1);
    } else if (l.value.name == "zero_ref") {
      EXPECT_EQ(l.sqnr_db(), -kInf);
      EXPECT_EQ(l.cosine(), 0);
    } else {
      EXPECT_EQ(l.elements, 1u);
      EXPECT_EQ(l.skipped, 2u);
      EXPECT_EQ(l.sqnr_db(), kInf);
    }
  }
}

TEST(QuantReportTest, WorstFirstWithNameTieBreak) {
  QuantReport r;
  // Added in an order unrelated to the expected one.
  for (const char* name : {"perfect", "c", "a", "b", "hopeless"}) r.add_value(value(name));
  const float f[] = {1, 2, 3}, z[] = {0, 0, 0};
  const int8_t good[] = {1, 2, 3}, bad[] = {1, 2, 2}, worse[] = {0, 0, 0};
  r.observe(0, f, good);   // perfect: inf
  r.observe(1, f, bad);    // c: 11.46
  r.observe(2, f, bad);    // a: 11.46
  r.observe(3, f, worse);  // b: 0 dB
  r.observe(4, z, bad);    // hopeless: -inf
  std::vector<std::string> order;
  for (const auto& l : r.ranked()) order.push_back(l.value.name);
  EXPECT_EQ(order, (std::vector<std::string>{"hopeless", "b", "a", "c", "perfect"}));
}

TEST(QuantReportTest, ObserveTensorsChecksTypesAndShapes) {
  QuantReport r;
  const size_t i = r.add_value(value("t"));
  Tensor f{"t", DType::kFloat32, {1, 3}, std::vector<uint8_t>(12)};
  const float values[] = {1, 2, 3};
  std::memcpy(f.data.data(), values, 12);
  Tensor q{"t_int8", DType::kInt8, {1, 3}, {1, 2, 2}};
  r.observe(i, f, q);
  EXPECT_NEAR(r.ranked()[0].sqnr_db(), 11.4613, 1e-4);

  Tensor wrong_shape = q;
  wrong_shape.shape = {3, 1};
  EXPECT_THROW(r.observe(i, f, wrong_shape), std::invalid_argument);
  Tensor wrong_type = q;
  wrong_type.dtype = DType::kUInt8;
  EXPECT_THROW(r.observe(i, f, wrong_type), std::invalid_argument);
  EXPECT_THROW(r.observe(7, f, q), std::invalid_argument);
  const float two[] = {1, 2};
  const int8_t three[] = {1, 2, 3};
  EXPECT_THROW(r.observe(i, two, three), std::invalid_argument);
}

QuantReport small_report() {
  QuantReport r;
  r.set_samples(1);
  const size_t relu = r.add_value(value("relu_out", 1, 0, "relu", "Relu"));
  const size_t fc1 = r.add_value(value("fc1_out", 1, 0, "fc1", "Gemm"));
  const float f[] = {1, 2, 3};
  const int8_t exact[] = {1, 2, 3};
  r.observe(relu, f, exact);
  observe_123(r, fc1);
  r.add_float32_node({"nms", "NonMaxSuppression", "no int8 form"});
  return r;
}

TEST(QuantReportTest, TerminalSummary) {
  EXPECT_EQ(small_report().summary(),
            "Accuracy: 2 int8 values over 1 sample, worst first:\n"
            "  value    node op   alone dB SQNR dB   cosine max abs err\n"
            "  fc1_out  fc1  Gemm        -   11.46 0.979958           1\n"
            "  relu_out relu Relu        -     inf 1.000000           0\n"
            "Kept in float32: 1 node\n"
            "  node op                reason\n"
            "  nms  NonMaxSuppression no int8 form\n");
}

TEST(QuantReportTest, SummaryShowsTheWorstN) {
  QuantReport r = small_report();
  r.add_float32_node({"topk", "TopK", "no int8 form"});
  EXPECT_EQ(r.summary(1),
            "Accuracy: 2 int8 values over 1 sample; the 1 worst:\n"
            "  value   node op   alone dB SQNR dB   cosine max abs err\n"
            "  fc1_out fc1  Gemm        -   11.46 0.979958           1\n"
            "Kept in float32: 2 nodes\n"
            "  node op                reason\n"
            "  nms  NonMaxSuppression no int8 form\n"
            "  ... and 1 more\n");
  EXPECT_EQ(QuantReport().summary(), "Accuracy: 0 int8 values over 0 samples\n");
}

TEST(QuantReportTest, SummaryShortensLongNamesTheJsonKeepsThem) {
  QuantReport r;
  const std::string name = "StatefulPartitionedCall/model/" + std::string(100, 'x') + "/Conv2D:0";
  r.add_float32_node({name, "Cos", "no int8 form"});
  const std::string text = r.summary();
  EXPECT_NE(text.find("  StatefulPartitionedCall/mode...xxxxxxxxxxxxxxxxxxxx/Conv2D:0 Cos"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(name), std::string::npos);
  EXPECT_NE(r.json_text().find(name), std::string::npos);
}

TEST(QuantReportTest, JsonDocument) {
  const std::string text = small_report().json_text();
  EXPECT_EQ(text.back(), '\n');
  const auto j = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(j["format"], 1);
  EXPECT_EQ(j["samples"], 1);
  ASSERT_EQ(j["layers"].size(), 2u);
  const auto& worst = j["layers"][0];
  std::vector<std::string> keys;
  for (const auto& [k, v] : worst.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"value", "node", "op_type", "scale", "zero_point",
                                            "output_sqnr_db", "sqnr_db", "cosine", "max_abs_error",
                                            "mean_squared_error", "observations", "elements",
                                            "skipped", "sums"}));
  EXPECT_EQ(worst["value"], "fc1_out");
  EXPECT_EQ(worst["node"], "fc1");
  EXPECT_EQ(worst["op_type"], "Gemm");
  EXPECT_DOUBLE_EQ(worst["sqnr_db"].get<double>(), 10 * std::log10(14.0));
  EXPECT_DOUBLE_EQ(worst["cosine"].get<double>(), 11 / std::sqrt(126.0));
  EXPECT_EQ(worst["sums"]["f2"], 14.0);
  EXPECT_EQ(worst["sums"]["noise2"], 1.0);
  EXPECT_EQ(worst["elements"], 3);
  EXPECT_EQ(j["layers"][1]["sqnr_db"], "inf");  // JSON has no infinity
  ASSERT_EQ(j["float32_nodes"].size(), 1u);
  EXPECT_EQ(j["float32_nodes"][0]["node"], "nms");
  EXPECT_EQ(j["float32_nodes"][0]["op_type"], "NonMaxSuppression");
  EXPECT_EQ(j["float32_nodes"][0]["reason"], "no int8 form");
  // Deterministic: the same report gives the same bytes.
  EXPECT_EQ(small_report().json_text(), text);
}

TEST(QuantReportTest, WritesJsonAtomically) {
  const char* env = std::getenv("EULERNPU_TEST_TMP");
  const fs::path dir =
      fs::path(env && *env ? env : fs::temp_directory_path().string()) / "quant_report_write";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const QuantReport r = small_report();
  r.write_json(dir / "report.json");
  std::ifstream in(dir / "report.json");
  std::stringstream body;
  body << in.rdbuf();
  EXPECT_EQ(body.str(), r.json_text());
  // Only the report itself: no temporary file left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  try {
    r.write_json(dir / "missing" / "report.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.title(), "cannot write output file");
  }
  EXPECT_FALSE(fs::exists(dir / "missing"));
  fs::remove_all(dir);
}

TEST(QuantReportTest, OutputSqnrRanksFirstWhereMeasured) {
  QuantReport r;
  // "a" is noisier in its own terms, but "b" costs the outputs more.
  const size_t a = r.add_value({"a", "na", "Gemm", 1.0, 0});
  const size_t b = r.add_value({"b", "nb", "Gemm", 1.0, 0});
  const size_t c = r.add_value({"c", "nc", "Gemm", 1.0, 0});
  const std::vector<float> f{1, 2, 3};
  r.observe(a, f, std::vector<int8_t>{1, 2, 2});  // 11.46 dB
  r.observe(b, f, std::vector<int8_t>{1, 2, 3});  // inf
  r.observe(c, f, std::vector<int8_t>{0, 2, 3});  // 11.46 dB, no output figure
  r.set_output_sqnr(a, 40.0);
  r.set_output_sqnr(b, 3.5);
  const auto ranked = r.ranked();
  EXPECT_EQ(ranked[0].value.name, "b");
  EXPECT_EQ(ranked[1].value.name, "a");
  EXPECT_EQ(ranked[2].value.name, "c");
  EXPECT_THROW(r.set_output_sqnr(3, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace eulernpu::host
