// Calibration data (quantize --calib-data-path): a list file and the
// directory it lies in. Parts: the list file's text, then any number of
// "<path>\n<bytes>" files (.npy, .npz) in the same directory. Each input is
// read for a model of one input and for one of two.
#include "fuzz_support.hpp"
#include "quant/calib_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  using host::DType;
  fuzz::env();
  const auto parts = fuzz::split_parts(data, size);
  const auto dir = fuzz::fresh_dir("calib");
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string path;
    std::string_view content;
    if (fuzz::named_part(parts[i], path, content)) fuzz::write_file(dir / path, content);
  }
  fuzz::write_file(dir / "list.txt", parts[0]);
  static const std::vector<host::CalibInput> one = {{"input", DType::kFloat32, {1, 4}}};
  static const std::vector<host::CalibInput> two = {{"image", DType::kFloat32, {2, 3}},
                                                    {"ids", DType::kInt64, {1, 5}}};
  host::CalibOptions options;
  options.max_total_bytes = 64ull << 20;  // samples here are tiny; a long run stays small
  for (const auto* inputs : {&one, &two}) {
    fuzz::expect_clean(
        [&] { (void)host::load_calibration_data(dir / "list.txt", *inputs, options); });
    fuzz::expect_clean([&] { (void)host::load_calibration_data(dir, *inputs, options); });
  }
  return 0;
}
