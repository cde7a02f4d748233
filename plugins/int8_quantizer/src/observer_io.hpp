// A TensorObserver as bytes and back: the statistics a calibration shard
// hands on to the merge. Everything in it is exact (the range as float64
// bits, whole counts per bin of the fixed grid), so observers read back
// merge into the very state one observer of all the samples reaches.
//
// Layout, little-endian:
//   u32 magic "EOB1"   i8 kept mantissa bits (-1: no histogram)   u8 seen
//   f64 min   f64 max   u64 count
//   u32 n   then n x (u32 bin key, u64 count), keys ascending, counts > 0
#pragma once

#include <string>
#include <string_view>

#include "calibration.hpp"

namespace eulernpu::int8_quantizer {

std::string encode_observer(const TensorObserver& obs);

// Throws std::invalid_argument saying what is wrong for bytes that are not
// an encoded observer. Every size is checked against the bytes there are
// before anything is allocated.
TensorObserver decode_observer(std::string_view bytes);

}  // namespace eulernpu::int8_quantizer
