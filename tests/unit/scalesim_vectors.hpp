// SCALE-Sim v2's public test vectors (32×32 array, 256 KB per SRAM,
// topology pre-padded), shared by the compute-model and planner tests.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "systolic.hpp"

namespace eulernpu::npu_sim::test {

inline ConvLayer conv(int64_t h, int64_t w, int64_t r, int64_t s, int64_t c, int64_t filters,
                      int64_t stride) {
  return ConvLayer{h, w, r, s, c, filters, stride, stride};
}

inline const ConvLayer kConv1 = conv(18, 18, 3, 3, 3, 16, 1);
inline const ConvLayer kConv2 = conv(18, 18, 3, 3, 16, 32, 2);
inline const ConvLayer kConv3 = conv(10, 10, 3, 3, 32, 64, 1);
inline constexpr Dataflow kOs = Dataflow::kOutputStationary;
inline constexpr Dataflow kWs = Dataflow::kWeightStationary;
inline constexpr Dataflow kIs = Dataflow::kInputStationary;

struct PublicCase {
  const char* name;
  ConvLayer layer;
  Dataflow dataflow;
  int64_t cycles;  // SCALE-Sim's total cycles
};

// So ctest lists a case by name, not as raw bytes.
inline void PrintTo(const PublicCase& c, std::ostream* os) { *os << c.name; }

inline std::vector<PublicCase> public_cases() {
  return {{"conv1_os", kConv1, kOs, 711},  {"conv2_os", kConv2, kOs, 617},
          {"conv3_os", kConv3, kOs, 1399}, {"conv1_ws", kConv1, kWs, 349},
          {"conv2_ws", kConv2, kWs, 874},  {"conv3_ws", kConv3, kWs, 2843},
          {"conv1_is", kConv1, kIs, 879},  {"conv2_is", kConv2, kIs, 1889},
          {"conv3_is", kConv3, kIs, 2843}};
}

}  // namespace eulernpu::npu_sim::test
