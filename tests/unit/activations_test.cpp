// Recording every float value of a model on cpu_ref: the digits MLP, whose
// numpy reference logits are committed with it.
#include "quant/activations.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "formats/npz.hpp"
#include "ir/finalize.hpp"
#include "plugins/frontend_calls.hpp"

namespace eulernpu::host {
namespace {

float at(const Tensor& t, size_t i) {
  float v = 0;
  std::memcpy(&v, t.data.data() + 4 * i, 4);
  return v;
}

// The digits MLP lowered for recording on cpu_ref, and its held-out inputs.
class ActivationsTest : public ::testing::Test {
 protected:
  static ImportedModel mlp(const PluginRegistry& registry) {
    ImportOptions options;
    options.options = {{"input_shape.input", "1,1,8,8"}};
    return import_model(registry, digits / "mlp.onnx", options);
  }
  // Held-out sample k as the model's input.
  Tensor sample(size_t k) const {
    Tensor t{"input", DType::kFloat32, {1, 1, 8, 8}, {}};
    t.data.assign(inputs.data.begin() + static_cast<long>(64 * 4 * k),
                  inputs.data.begin() + static_cast<long>(64 * 4 * (k + 1)));
    return t;
  }

  static inline const std::filesystem::path digits =
      std::filesystem::path(EULERNPU_TEST_SOURCE_DIR) / "examples" / "digits";
  const PluginRegistry registry = PluginRegistry::discover({EULERNPU_TEST_PLUGIN_DIR}, "", "");
  const ImportedModel m = mlp(registry);
  const ActivationRecorder recorder{registry.backend("cpu_ref"), m.model, {}};
  const Tensor inputs = read_npz(digits / "test_inputs.npz").at(0);
};

TEST_F(ActivationsTest, RecordsEveryFloatValueOfTheDigitsMlp) {
  // The input first, then each node's float output in order, logits last.
  const auto& names = recorder.names();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names.front(), "input");
  EXPECT_EQ(names.back(), "logits");
  EXPECT_EQ(names.size(), static_cast<size_t>(m.model.graph().node_size()) + 1);

  // First held-out sample: its recorded logits are numpy's.
  const Tensor reference = read_npz(digits / "fp32_logits_mlp.npz").at(0);
  const std::vector<Tensor> values = recorder.record({sample(0)});
  ASSERT_EQ(values.size(), names.size());
  EXPECT_EQ(values.front().data, sample(0).data);
  const Tensor& logits = values.back();
  ASSERT_EQ(logits.shape, (std::vector<int64_t>{1, 10}));
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_NEAR(at(logits, i), at(reference, i), 1e-5 + 1e-4 * std::fabs(at(reference, i)));
  }
  // A Relu output is never negative.
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k].find("relu") != std::string::npos) {
      for (size_t i = 0; i < values[k].element_count(); ++i) EXPECT_GE(at(values[k], i), 0.0f);
    }
  }
  // Recording is deterministic.
  EXPECT_EQ(recorder.record({sample(0)})[names.size() - 2].data, values[names.size() - 2].data);
}

TEST_F(ActivationsTest, RecordingIntoAnEarlierSamplesBuffersGivesTheNewSamplesValues) {
  const std::vector<Tensor> fresh0 = recorder.record({sample(0)});
  const std::vector<Tensor> fresh1 = recorder.record({sample(1)});
  // Sample 1 recorded into sample 0's buffers: sample 1's bytes (none of
  // sample 0's left behind), in the same memory for every computed value.
  std::vector<Tensor> values = recorder.record({sample(0)});
  std::vector<const uint8_t*> memory;
  for (const Tensor& t : values) memory.push_back(t.data.data());
  values = recorder.record({sample(1)}, std::move(values));
  ASSERT_EQ(values.size(), fresh1.size());
  for (size_t k = 0; k < values.size(); ++k) {
    EXPECT_EQ(values[k].name, fresh1[k].name);
    EXPECT_EQ(values[k].shape, fresh1[k].shape);
    EXPECT_EQ(values[k].data, fresh1[k].data) << values[k].name;
    // values[0] is the input, copied from the caller's tensor.
    if (k > 0) {
      EXPECT_EQ(values[k].data.data(), memory[k]) << values[k].name;
    }
  }
  EXPECT_NE(fresh0.back().data, fresh1.back().data);  // the samples differ
}

TEST_F(ActivationsTest, ViewsReadCpuRefsOutputsInPlaceWithRecordsBytes) {
  // Both samples recorded first, then viewed in the other order: a view
  // that read what the session computed last, rather than running, fails.
  const std::vector<std::vector<Tensor>> given{{sample(0)}, {sample(1)}};
  const std::vector<std::vector<Tensor>> copies{recorder.record(given[0]),
                                                recorder.record(given[1])};
  // Another session runs between each view and its reads, as the accuracy
  // report's int8 recording does.
  const ActivationRecorder other(registry.backend("cpu_ref"), m.model, {});
  ActivationRecorder::Views views;
  for (const size_t k : {size_t{0}, size_t{1}}) {
    recorder.view(given[k], views);
    (void)other.record(given[1 - k]);
    const std::vector<Tensor>& copied = copies[k];
    // cpu_ref keeps every computed value in its session's arena (ABI 1.8):
    // nothing copied, and each view has the copy's name, shape and bytes.
    EXPECT_TRUE(views.storage.copied.empty());
    EXPECT_EQ(views.storage.lasting.size(), recorder.names().size() - 1);
    ASSERT_EQ(views.values.size(), copied.size());
    for (size_t i = 0; i < copied.size(); ++i) {
      const enp_tensor_t& v = views.values[i];
      EXPECT_EQ(std::string(v.name), copied[i].name);
      EXPECT_EQ(std::vector<int64_t>(v.dims, v.dims + v.rank), copied[i].shape);
      ASSERT_EQ(v.size_bytes, copied[i].data.size());
      EXPECT_EQ(std::memcmp(v.data, copied[i].data.data(), v.size_bytes), 0) << copied[i].name;
    }
  }
}

}  // namespace
}  // namespace eulernpu::host
