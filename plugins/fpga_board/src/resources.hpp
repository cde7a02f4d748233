// Programmable-logic resources, as the vendors' tables and Yosys's
// synth_xilinx count them: LUTs, flip-flops, 36 Kb block RAMs (a RAMB18
// counts a half), UltraRAMs and DSP slices.
#pragma once

#include <array>
#include <string>

namespace eulernpu::fpga_board {

struct Resources {
  double lut = 0, ff = 0, bram36 = 0, uram = 0, dsp = 0;
};

// The five kinds in one order, for tables, fit checks and errors.
struct ResourceKind {
  const char* key;    // as in board files and plan.json: "lut"
  const char* label;  // as in tables and errors: "LUT"
  double Resources::*member;
};

inline constexpr std::array<ResourceKind, 5> kResourceKinds{{
    {"lut", "LUT", &Resources::lut},
    {"ff", "FF", &Resources::ff},
    {"bram36", "BRAM36", &Resources::bram36},
    {"uram", "URAM", &Resources::uram},
    {"dsp", "DSP", &Resources::dsp},
}};

}  // namespace eulernpu::fpga_board
