// The static arena planner: every tensor the schedule writes gets one
// offset in one arena, reused once the tensor is dead. Deterministic, so the
// same graph gives the same plan (and artifact) on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eulernpu::kit {

// Offsets and the arena size are multiples of this (a cache line, and the
// widest vector load the kernels issue).
inline constexpr int64_t kArenaAlignment = 64;

// One tensor's buffer: its size and the schedule steps it is live in.
// first == -1 for a graph input (written before the first step); last is the
// step count for a graph output (read after the last).
struct Lifetime {
  std::string tensor;
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  int64_t offset = 0;  // set by plan_arena()
};

// Places each buffer at the lowest aligned offset not used by a buffer whose
// lifetime overlaps it, in the order given (lowering passes them in the
// order they are first written), and returns the arena's size, rounded up
// to kArenaAlignment.
int64_t plan_arena(std::vector<Lifetime>& buffers);

}  // namespace eulernpu::kit
