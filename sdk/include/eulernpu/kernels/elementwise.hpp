// QAdd, QSub and QMul of domain ai.eulernpu (docs/quantization.md): per
// element, A and B broadcast numpy-style to Y's shape.
#pragma once

#include <array>
#include <cstdint>

#include "eulernpu/kernels/runner.hpp"
#include "eulernpu/kernels/shape.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

// The operands' shapes; y is their broadcast.
struct BroadcastShapes {
  Dims a, b, y;
};

// qmath::add of each pair (subtract: a − b); p's input rescales have S >= 31.
void qadd(const BroadcastShapes& s, const sdk::qmath::AddParams& p, bool subtract, const int8_t* a,
          const int8_t* b, int8_t* y, const TaskRunner& r = kSerial);

struct QMulParams {
  int32_t a_zero_point = 0, b_zero_point = 0, y_zero_point = 0;
  int32_t qmin = -128, qmax = 127;
  sdk::qmath::FixedMultiplier multiplier{};
};

// requantize((a − za) · (b − zb)).
void qmul(const BroadcastShapes& s, const QMulParams& p, const int8_t* a, const int8_t* b,
          int8_t* y, const TaskRunner& r = kSerial);

// Every result of an op whose output depends on its two int8 codes alone:
// table[b + 128][a + 128] for codes a and b. QAdd, QSub and QMul through a
// table give the bytes of qadd and qmul (the table holds exactly what they
// compute), at a lookup per output instead of three rescales; building
// one costs about as much as 65536 outputs, so it pays on large tensors
// or where it is kept from run to run.
using PairTable = std::array<std::array<int8_t, 256>, 256>;

void qadd_table(const sdk::qmath::AddParams& p, bool subtract, PairTable& table);
void qmul_table(const QMulParams& p, PairTable& table);

// y = table[b][a] for each broadcast pair (a, b).
void pair_lookup(const BroadcastShapes& s, const PairTable& table, const int8_t* a, const int8_t* b,
                 int8_t* y, const TaskRunner& r = kSerial);

}  // namespace eulernpu::kernels
