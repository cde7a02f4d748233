// Calibration data loading: order, batching, keys, limits and every error a
// user's files can cause.
#include "quant/calib_data.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "formats/npz.hpp"

namespace eulernpu::host {
namespace {

namespace fs = std::filesystem;

// A float32 tensor whose elements count up from `first`.
Tensor floats(const std::string& name, std::vector<int64_t> shape, float first) {
  Tensor t{name, DType::kFloat32, std::move(shape), {}};
  t.data.resize(t.element_count() * 4);
  for (uint64_t i = 0; i < t.element_count(); ++i) {
    const float v = first + static_cast<float>(i);
    std::memcpy(t.data.data() + i * 4, &v, 4);
  }
  return t;
}

float first_float(const Tensor& t) {
  float v = 0;
  std::memcpy(&v, t.data.data(), 4);
  return v;
}

class CalibDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env = std::getenv("EULERNPU_TEST_TMP");
    dir_ =
        fs::path(env && *env ? env : fs::temp_directory_path().string()) /
        ("calib_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void npy(const std::string& name, const Tensor& t) {
    const auto bytes = encode_npy(t);
    std::ofstream(dir_ / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  void npz(const std::string& name, const std::vector<Tensor>& ts) { write_npz(dir_ / name, ts); }
  void text(const std::string& name, const std::string& body) {
    std::ofstream(dir_ / name) << body;
  }

  // The loader must throw a UserError titled `title` whose where names `file`.
  void expect_error(const std::vector<CalibInput>& inputs, const std::string& title,
                    const std::string& where_part, const fs::path& path = {},
                    CalibOptions options = {}) {
    try {
      load_calibration_data(path.empty() ? dir_ : path, inputs, options);
      FAIL() << "expected '" << title << "'";
    } catch (const UserError& e) {
      EXPECT_EQ(e.title(), title);
      EXPECT_NE(e.where().find(where_part), std::string::npos) << e.where();
    }
  }

  fs::path dir_;
  const std::vector<CalibInput> one_{{"x", DType::kFloat32, {1, 3}}};
};

TEST_F(CalibDataTest, DirectoryIsReadInNameOrderAndBatchesSplit) {
  npy("b.npy", floats("", {1, 3}, 100));         // one sample
  npy("a.npy", floats("", {2, 1, 3}, 0));        // a batch of 2 (extra dim)
  npz("c.npz", {floats("arr_0", {3, 3}, 200)});  // np.savez(f, a): 3 rows, input batch 1
  text("notes.txt", "ignored");
  const CalibSet set = load_calibration_data(dir_, one_);
  ASSERT_EQ(set.samples.size(), 6u);
  EXPECT_EQ(set.files, (std::vector<std::string>{"a.npy", "b.npy", "c.npz"}));
  const float expected[] = {0, 3, 100, 200, 203, 206};
  for (size_t i = 0; i < 6; ++i) {
    ASSERT_EQ(set.samples[i].size(), 1u);
    EXPECT_EQ(set.samples[i][0].name, "x");
    EXPECT_EQ(set.samples[i][0].shape, (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(first_float(set.samples[i][0]), expected[i]) << i;
  }
  EXPECT_EQ(set.sha256.size(), 64u);
  // Same data, same digest; other data, another.
  EXPECT_EQ(load_calibration_data(dir_, one_).sha256, set.sha256);
  npy("b.npy", floats("", {1, 3}, 101));
  EXPECT_NE(load_calibration_data(dir_, one_).sha256, set.sha256);
}

TEST_F(CalibDataTest, SampleLimitStopsEarlyAndReportsProgress) {
  npy("a.npy", floats("", {4, 1, 3}, 0));
  npy("b.npy", floats("", {1, 3}, 100));
  CalibOptions options;
  options.max_samples = 3;
  std::vector<size_t> done;
  options.progress = [&](size_t d, size_t total) {
    EXPECT_EQ(total, 2u);
    done.push_back(d);
  };
  const CalibSet set = load_calibration_data(dir_, one_, options);
  EXPECT_EQ(set.samples.size(), 3u);
  EXPECT_EQ(set.files, (std::vector<std::string>{"a.npy"}));
  EXPECT_EQ(done, (std::vector<size_t>{1}));
  options.max_samples = -1;
  expect_error(one_, "invalid command line", "--calib-samples -1", dir_, options);
}

TEST_F(CalibDataTest, ListFileKeepsItsOrderAndResolvesRelativePaths) {
  fs::create_directories(dir_ / "sub");
  npy("sub/z.npy", floats("", {1, 3}, 7));
  npy("a.npy", floats("", {1, 3}, 1));
  text("list.txt", "# calibration order\nsub/z.npy\n\n  a.npy  \r\n");
  const CalibSet set = load_calibration_data(dir_ / "list.txt", one_);
  ASSERT_EQ(set.samples.size(), 2u);
  EXPECT_EQ(first_float(set.samples[0][0]), 7);
  EXPECT_EQ(first_float(set.samples[1][0]), 1);
  EXPECT_EQ(set.files, (std::vector<std::string>{"sub/z.npy", "a.npy"}));

  text("bad.txt", "a.npy\nmissing.npy\n");
  expect_error(one_, "calibration data not found", "bad.txt:2", dir_ / "bad.txt");
  text("odd.txt", "a.npy\nimage.png\n");
  expect_error(one_, "calibration data not found", "odd.txt:2", dir_ / "odd.txt");
}

TEST_F(CalibDataTest, SeveralInputsAreKeyedByName) {
  const std::vector<CalibInput> two{{"img", DType::kFloat32, {1, 2}},
                                    {"mask", DType::kInt64, {1, 2}}};
  Tensor mask{"mask", DType::kInt64, {2, 1, 2}, std::vector<uint8_t>(32, 1)};
  npz("s.npz", {mask, floats("img", {2, 1, 2}, 5)});  // any member order
  const CalibSet set = load_calibration_data(dir_, two);
  ASSERT_EQ(set.samples.size(), 2u);
  EXPECT_EQ(set.samples[1][0].name, "img");
  EXPECT_EQ(first_float(set.samples[1][0]), 7);
  EXPECT_EQ(set.samples[1][1].dtype, DType::kInt64);

  npz("t.npz", {floats("img", {1, 2}, 0), floats("other", {1, 2}, 0)});
  expect_error(two, "calibration data does not fit the model", "t.npz has no array 'mask'");
  fs::remove(dir_ / "t.npz");
  npy("u.npy", floats("", {1, 2}, 0));
  expect_error(two, "calibration data does not fit the model", "u.npy is a .npy file");
  fs::remove(dir_ / "u.npy");
  Tensor short_mask{"mask", DType::kInt64, {1, 2}, std::vector<uint8_t>(16, 1)};
  npz("v.npz", {floats("img", {3, 1, 2}, 0), short_mask});
  expect_error(two, "calibration data does not fit the model", "'mask' holds 1 samples");
}

TEST_F(CalibDataTest, WrongDtypeOrShapeNamesTheFile) {
  Tensor f64{"", DType::kFloat64, {1, 3}, std::vector<uint8_t>(24, 0)};
  npy("d.npy", f64);
  expect_error(one_, "calibration data does not fit the model", "d.npy: 'x' is float64");
  fs::remove(dir_ / "d.npy");
  npy("s.npy", floats("", {1, 4}, 0));
  expect_error(one_, "calibration data does not fit the model", "s.npy: 'x' has shape (1, 4)");
  fs::remove(dir_ / "s.npy");
  // A batch-2 input takes (2, 3) or (N, 2, 3), not rows of 3.
  const std::vector<CalibInput> batch2{{"x", DType::kFloat32, {2, 3}}};
  npy("r.npy", floats("", {4, 3}, 0));
  expect_error(batch2, "calibration data does not fit the model", "(2, 3) or a batch (N, 2, 3)");
}

TEST_F(CalibDataTest, AnArrayNamedOtherwiseThanTheInputIsNotASample) {
  // np.savez(f, y=...) for a model whose input is x: another array, not x.
  npz("o.npz", {floats("y", {1, 3}, 0)});
  expect_error(one_, "calibration data does not fit the model",
               "o.npz has no array 'x' (it holds: y)");
}

TEST_F(CalibDataTest, NonFiniteSamplesAreRefused) {
  Tensor t = floats("x", {3, 3}, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(t.data.data() + 4 * 4, &nan, 4);  // sample 1
  std::memcpy(t.data.data() + 5 * 4, &inf, 4);
  npz("n.npz", {t});
  expect_error(one_, "calibration data does not fit the model",
               "n.npz: 'x' of sample 1 holds 2 NaN or infinite values of 3");
  fs::remove(dir_ / "n.npz");
  // float16 too: 0x7e00 is a NaN, 0x7c00 infinity; 0x7bff is the largest finite.
  Tensor h{"x", DType::kFloat16, {1, 3}, {0xff, 0x7b, 0x00, 0x7c, 0x00, 0x00}};
  npz("h.npz", {h});
  const std::vector<CalibInput> half{{"x", DType::kFloat16, {1, 3}}};
  expect_error(half, "calibration data does not fit the model",
               "holds 1 NaN or infinite value of 3");
}

TEST_F(CalibDataTest, MissingEmptyAndSingleFilePathsAreErrors) {
  expect_error(one_, "calibration data not found", "does not exist", dir_ / "nope");
  expect_error(one_, "no calibration samples", dir_.string());
  npy("a.npy", floats("", {0, 1, 3}, 0));  // a batch of none
  expect_error(one_, "no calibration samples", dir_.string());
  expect_error(one_, "calibration data not found", "single tensor file", dir_ / "a.npy");
}

TEST_F(CalibDataTest, CorruptFilesAndSizeLimitsAreReported) {
  text("a.npy", "not numpy");
  expect_error(one_, "npy array is malformed", "a.npy");
  fs::remove(dir_ / "a.npy");
  npy("b.npy", floats("", {8, 1, 3}, 0));
  CalibOptions options;
  options.max_total_bytes = 40;  // 3 samples of 12 bytes fit, the 4th does not
  expect_error(one_, "calibration data exceeds a size limit", "b.npy", dir_, options);
}

}  // namespace
}  // namespace eulernpu::host
