// .npz archives and bare .npy arrays, from memory: every input, weight and
// calibration file goes through these readers.
#include "formats/npz.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace eulernpu;
  fuzz::env();
  fuzz::expect_clean([&] { (void)host::read_npz_bytes(data, size, "fuzz.npz"); });
  fuzz::expect_clean([&] { (void)host::parse_npy(data, size, "fuzz.npy"); });
  return 0;
}
