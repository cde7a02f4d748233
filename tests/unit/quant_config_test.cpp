// Quantization config files and presets: every key, every error a user's
// file can cause, the options handed to the quantizer and the canonical text.
#include "quant/quant_config.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace eulernpu::host {
namespace {

namespace fs = std::filesystem;

using Options = std::vector<std::pair<std::string, std::string>>;

CompileConfig parse(const std::string& text) { return parse_compile_config(text, "q.yaml"); }

// The error a config text causes; fails the test if it parses.
UserError parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return UserError("none", "", "");
}

TEST(QuantConfigTest, EmptyFileIsTheDefaultPreset) {
  for (const char* text : {"", "# nothing yet\n", "calibration:\n"}) {
    const CompileConfig c = parse(text);
    EXPECT_EQ(c.name(), "q.yaml");
    EXPECT_FALSE(c.from_preset);
    EXPECT_EQ(c.canonical_text(), preset_config("default").canonical_text()) << text;
  }
}

TEST(QuantConfigTest, EveryKey) {
  const CompileConfig c = parse(R"(
calibration:
  method: percentile
  percentile: 99.9
  samples: 64
quantization:
  weights: per_tensor
  float_outputs: all
  rounding: adaptive
layers:
  fc1: {keep_fp32: true}
  /features/0/Conv: {per_tensor: true}
  fc2: {keep_fp32: false, per_tensor: false}
backend:
  threads: "2"
  tile: 16
)");
  EXPECT_EQ(c.method, "percentile");
  EXPECT_EQ(c.percentile, 99.9);
  EXPECT_EQ(c.samples, 64);
  EXPECT_FALSE(c.per_channel_weights);
  ASSERT_EQ(c.layers.size(), 3u);
  EXPECT_TRUE(c.layers.at("fc1").keep_fp32);
  EXPECT_TRUE(c.layers.at("/features/0/Conv").per_tensor);
  EXPECT_EQ(c.to_options(), (Options{{"method", "percentile"},
                                     {"percentile", "99.9"},
                                     {"weights", "per_tensor"},
                                     {"float_outputs", "all"},
                                     {"rounding", "adaptive"},
                                     {"layer./features/0/Conv.per_tensor", "1"},
                                     {"layer.fc1.keep_fp32", "1"}}));
  EXPECT_EQ(c.backend_options(), (Options{{"threads", "2"}, {"tile", "16"}}));
}

TEST(QuantConfigTest, Presets) {
  ASSERT_EQ(compile_presets().size(), 5u);
  EXPECT_STREQ(compile_presets()[0].name, "default");
  const struct {
    const char* name;
    Options options;
  } cases[] = {
      {"default", {{"method", "percentile"}, {"percentile", "99.99"}, {"weights", "per_channel"}}},
      {"fast", {{"method", "minmax"}, {"weights", "per_channel"}}},
      {"entropy", {{"method", "entropy"}, {"weights", "per_channel"}}},
      {"mse", {{"method", "mse"}, {"weights", "per_channel"}}},
      {"best", {{"method", "best"}, {"weights", "per_channel"}}},
  };
  for (const auto& c : cases) {
    const CompileConfig config = preset_config(c.name);
    EXPECT_EQ(config.name(), c.name);
    EXPECT_TRUE(config.from_preset);
    EXPECT_EQ(config.to_options(), c.options) << c.name;
    EXPECT_TRUE(config.backend_options().empty());
  }
  // Every preset named in the table exists.
  for (const auto& p : compile_presets()) EXPECT_NO_THROW(preset_config(p.name));
}

TEST(QuantConfigTest, UnknownPreset) {
  try {
    preset_config("fastest");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.title(), "unknown quantization preset");
    EXPECT_NE(e.where().find("'fastest'"), std::string::npos);
    EXPECT_NE(e.where().find("default, fast, entropy, mse"), std::string::npos);
    EXPECT_EQ(e.see(), "docs/errors.md#unknown-quantization-preset");
  }
}

TEST(QuantConfigTest, CanonicalText) {
  EXPECT_EQ(
      preset_config("default").canonical_text(),
      R"({"backend":{},"calibration":{"method":"percentile","percentile":99.99,"samples":0},)"
      R"("layers":{},"quantization":{"bias_correction":false,"float_outputs":"none","rounding":"nearest","weights":"per_channel"}})");
  // Method without a percentile: null, so a stray default can't change the hash.
  EXPECT_EQ(
      preset_config("fast").canonical_text(),
      R"({"backend":{},"calibration":{"method":"minmax","percentile":null,"samples":0},)"
      R"("layers":{},"quantization":{"bias_correction":false,"float_outputs":"none","rounding":"nearest","weights":"per_channel"}})");
  // Key order in the file, quoting and no-op overrides do not matter.
  const CompileConfig a = parse(
      "layers: {b: {keep_fp32: true}, a: {per_tensor: true}, c: {}}\n"
      "backend: {y: \"1\", x: 2}\n");
  const CompileConfig b = parse(
      "backend: {x: \"2\", y: 1}\n"
      "layers: {a: {per_tensor: true}, b: {keep_fp32: true}}\n");
  EXPECT_EQ(a.canonical_text(), b.canonical_text());
  EXPECT_EQ(
      a.canonical_text(),
      R"({"backend":{"x":"2","y":"1"},)"
      R"("calibration":{"method":"percentile","percentile":99.99,"samples":0},)"
      R"("layers":{"a":{"keep_fp32":false,"per_tensor":true},)"
      R"("b":{"keep_fp32":true,"per_tensor":false}},)"
      R"("quantization":{"bias_correction":false,"float_outputs":"none","rounding":"nearest","weights":"per_channel"}})");
  // The name is not part of it: a file equal to a preset hashes alike.
  EXPECT_EQ(parse("calibration: {method: entropy}").canonical_text(),
            preset_config("entropy").canonical_text());
}

TEST(QuantConfigTest, CliSampleLimitOverridesTheFile) {
  CompileConfig c = parse("calibration: {samples: 64}");
  EXPECT_EQ(c.samples, 64);
  c.samples = 8;  // what `--calib-samples 8` does
  EXPECT_NE(c.canonical_text().find(R"("samples":8)"), std::string::npos);
}

TEST(QuantConfigTest, PercentileRange) {
  EXPECT_EQ(parse("calibration: {percentile: 100}").percentile, 100.0);
  EXPECT_EQ(parse("calibration: {percentile: 0.001}").percentile, 0.001);
  EXPECT_EQ(parse("calibration: {percentile: 99.999}").to_options()[1].second, "99.999");
}

struct ErrorCase {
  const char* text;
  const char* where;  // a part of the where line
};

TEST(QuantConfigTest, Errors) {
  const ErrorCase cases[] = {
      // Structure.
      {"- a\n- b\n", "q.yaml:1: the config must be a mapping"},
      {"calibraton: {}\n",
       "unknown key 'calibraton' (allowed in the file: calibration, "
       "quantization, layers, backend)"},
      {"calibration: {method: minmax, methd: mse}\n",
       "unknown key 'calibration.methd' (allowed in calibration: method, percentile, samples)"},
      {"calibration: [minmax]\n", "calibration: must be a mapping"},
      {"calibration:\n  method: mse\n  method: minmax\n",
       "q.yaml:3: calibration.method: is given twice"},
      {"a: 1\n---\nb: 2\n", "holds 2 YAML documents"},
      {"calibration: {method: [\n", "q.yaml:"},
      // Values.
      {"calibration: {method: kl}\n",
       "calibration.method: unknown calibration method 'kl' (one of: minmax, percentile, entropy, "
       "mse, best)"},
      {"calibration: {method: {a: 1}}\n", "calibration.method: must be one of"},
      {"calibration: {percentile: 0}\n", "calibration.percentile: 0 is outside (0, 100]"},
      {"calibration: {percentile: 100.5}\n", "calibration.percentile: 100.5 is outside (0, 100]"},
      {"calibration: {percentile: -1}\n", "calibration.percentile: -1 is outside"},
      {"calibration: {percentile: .nan}\n", "calibration.percentile: .nan is outside"},
      {"calibration: {percentile: high}\n", "calibration.percentile: 'high' is not a number"},
      {"calibration: {percentile: \"99.9\"}\n", "calibration.percentile: must be a number"},
      {"calibration:\n  method: entropy\n  percentile: 99.9\n",
       "q.yaml:3: calibration.percentile: applies to method percentile only; the method is "
       "entropy"},
      {"calibration: {samples: 0}\n", "calibration.samples: 0 is not a positive number"},
      {"calibration: {samples: 6.5}\n", "calibration.samples: '6.5' is not a whole number"},
      {"calibration: {samples: 99999999999999999999}\n", "is not a whole number"},
      {"quantization: {weights: per_row}\n",
       "quantization.weights: unknown weight scheme 'per_row' (one of: per_channel, per_tensor)"},
      {"quantization: {bits: 4}\n", "unknown key 'quantization.bits'"},
      {"quantization: {float_outputs: yes}\n",
       "quantization.float_outputs: unknown float_outputs 'yes' (one of: none, inner, all)"},
      {"quantization: {rounding: up}\n",
       "quantization.rounding: unknown rounding 'up' (one of: nearest, adaptive)"},
      {"layers: [fc1]\n", "layers: must be a mapping"},
      {"layers: {fc1: true}\n", "layers.fc1: must be a mapping"},
      {"layers: {fc1: {keep_fp32: yes}}\n",
       "layers.fc1.keep_fp32: must be true or false, not 'yes'"},
      {"layers: {fc1: {keep_fp32: \"true\"}}\n", "layers.fc1.keep_fp32: must be true or false"},
      {"layers: {fc1: {keep: true}}\n",
       "unknown key 'layers.fc1.keep' (allowed in layers.fc1: keep_fp32, per_tensor)"},
      {"layers: {fc1: {keep_fp32: true, per_tensor: true}}\n",
       "layers.fc1: keep_fp32 and per_tensor exclude each other"},
      {"layers: {\"\": {keep_fp32: true}}\n", "a node name must be non-empty"},
      {"layers: {\"a\\nb\": {keep_fp32: true}}\n", "no control characters"},
      {"layers: {[a]: {keep_fp32: true}}\n", "layers: keys must be plain names"},
      {"backend: {threads: [1, 2]}\n", "backend.threads: must be a single-line string"},
      {"backend: {threads: \"1\\n2\"}\n", "backend.threads: must be a single-line string"},
      {"backend: [threads]\n", "backend: must be a mapping"},
  };
  for (const auto& c : cases) {
    const UserError e = parse_error(c.text);
    EXPECT_EQ(e.title(), "quantization config is invalid") << c.text;
    EXPECT_NE(e.where().find(c.where), std::string::npos)
        << c.text << "\nwhere: " << e.where() << "\nexpected: " << c.where;
    EXPECT_EQ(e.where().rfind("q.yaml", 0), 0u) << e.where();
    EXPECT_EQ(e.see(), "docs/errors.md#quantization-config-is-invalid");
  }
}

class QuantConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env = std::getenv("EULERNPU_TEST_TMP");
    dir_ =
        fs::path(env && *env ? env : fs::temp_directory_path().string()) /
        ("qconfig_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }

  fs::path dir_;
};

TEST_F(QuantConfigFileTest, ReadsAFile) {
  const fs::path p = write("q.yaml", "calibration:\n  method: mse\n");
  const CompileConfig c = read_compile_config(p);
  EXPECT_EQ(c.method, "mse");
  EXPECT_EQ(c.name(), p.string());
  EXPECT_FALSE(c.from_preset);
}

TEST_F(QuantConfigFileTest, ErrorsNameTheFileAndLine) {
  const fs::path p = write("bad.yaml", "calibration:\n  method: minmax\n  percentile: 99\n");
  try {
    read_compile_config(p);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().rfind(p.string() + ":3: calibration.percentile:", 0), 0u) << e.where();
  }
}

TEST_F(QuantConfigFileTest, MissingFileOrDirectory) {
  for (const fs::path& p : {dir_ / "nope.yaml", dir_}) {
    try {
      read_compile_config(p);
      FAIL() << p;
    } catch (const UserError& e) {
      EXPECT_EQ(e.title(), "file not found");
      EXPECT_NE(e.where().find(p.string()), std::string::npos);
    }
  }
}

TEST_F(QuantConfigFileTest, SizeLimit) {
  // At the limit: a comment-only file is read (and is the default).
  const std::string at(kMaxConfigBytes, '#');
  EXPECT_EQ(read_compile_config(write("at.yaml", at)).method, "percentile");
  try {
    read_compile_config(write("over.yaml", at + "#"));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.title(), "quantization config is invalid");
    EXPECT_NE(e.where().find("larger than 1048576 bytes"), std::string::npos) << e.where();
  }
}

TEST_F(QuantConfigFileTest, DeepNestingIsAnErrorNotACrash) {
  const UserError e = parse_error(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(e.title(), "quantization config is invalid");
  EXPECT_NE(e.where().find("not valid YAML: nested deeper than"), std::string::npos) << e.where();
}

TEST_F(QuantConfigFileTest, ConfigOrPreset) {
  const fs::path p = write("q.yaml", "calibration: {method: entropy}\n");
  EXPECT_EQ(load_compile_config(std::nullopt, std::nullopt).name(), "default");
  EXPECT_EQ(load_compile_config(std::nullopt, std::nullopt).to_options(),
            preset_config("default").to_options());
  EXPECT_EQ(load_compile_config(std::nullopt, "fast").method, "minmax");
  EXPECT_EQ(load_compile_config(p.string(), std::nullopt).method, "entropy");
  try {
    load_compile_config(p.string(), "fast");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.title(), "invalid command line");
    EXPECT_NE(e.where().find("exclude each other"), std::string::npos);
  }
  EXPECT_THROW(load_compile_config(std::nullopt, "nope"), UserError);
}

}  // namespace
}  // namespace eulernpu::host
