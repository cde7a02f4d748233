#include "pipeline.hpp"

#include "checked_int.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace eulernpu::npu_sim {
namespace {

std::int64_t sched_add(std::int64_t a, std::int64_t b) {
  return checked_add(a, b, "failed to schedule tiles", "a cycle count");
}

std::int64_t sched_mul(std::int64_t a, std::int64_t b) {
  return checked_mul(a, b, "failed to schedule tiles", "a cycle count");
}

std::int64_t first_load(const Part& p) {
  return p.leaf ? p.tile.load : first_load(p.parts.front());
}
std::int64_t last_store(const Part& p) {
  return p.leaf ? p.tile.store : last_store(p.parts.back());
}

std::int64_t stages(const std::vector<Part>& parts, std::int64_t store_before,
                    std::int64_t load_after);

// One occurrence of `p`, between a store that precedes it and a load that
// follows it.
std::int64_t once(const Part& p, std::int64_t store_before, std::int64_t load_after) {
  if (p.leaf) return std::max(p.tile.compute, sched_add(load_after, store_before));
  return stages(p.parts, store_before, load_after);
}

// `p` repeated: the first and last occurrences see their outer neighbours,
// the ones between see copies of themselves on both sides.
std::int64_t repeated(const Part& p, std::int64_t store_before, std::int64_t load_after) {
  if (p.repeat == 1) return once(p, store_before, load_after);
  const std::int64_t l = first_load(p);
  const std::int64_t s = last_store(p);
  std::int64_t sum = sched_add(once(p, store_before, l), once(p, s, load_after));
  if (p.repeat > 2) sum = sched_add(sum, sched_mul(p.repeat - 2, once(p, s, l)));
  return sum;
}

std::int64_t stages(const std::vector<Part>& parts, std::int64_t store_before,
                    std::int64_t load_after) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::int64_t before = i == 0 ? store_before : last_store(parts[i - 1]);
    const std::int64_t after = i + 1 == parts.size() ? load_after : first_load(parts[i + 1]);
    sum = sched_add(sum, repeated(parts[i], before, after));
  }
  return sum;
}

void totals(const std::vector<Part>& parts, std::int64_t factor, PipelineResult& r) {
  for (const Part& p : parts) {
    const std::int64_t f = sched_mul(factor, p.repeat);
    if (p.leaf) {
      r.compute = sched_add(r.compute, sched_mul(f, p.tile.compute));
      r.dma = sched_add(r.dma, sched_mul(f, sched_add(p.tile.load, p.tile.store)));
      r.tiles = sched_add(r.tiles, f);
      r.load_bytes = sched_add(r.load_bytes, sched_mul(f, p.tile.load_bytes));
      r.store_bytes = sched_add(r.store_bytes, sched_mul(f, p.tile.store_bytes));
    } else {
      totals(p.parts, f, r);
    }
  }
}

}  // namespace

bool DmaRate::unlimited() const { return !(bytes_per_cycle > 0) || std::isinf(bytes_per_cycle); }

std::int64_t DmaRate::cycles(std::int64_t bytes) const {
  if (unlimited() || bytes <= 0) return 0;
  // Exact for bytes < 2^53; a quotient that is an integer stays one, so the
  // per-tile ceilings sum to at least the ceiling of the summed bytes.
  const double c = std::ceil(static_cast<double>(bytes) / bytes_per_cycle);
  if (!(c < 9.2e18)) {
    throw std::overflow_error("failed to time a DMA transfer of " + std::to_string(bytes) +
                              " bytes: the cycle count does not fit in int64");
  }
  return static_cast<std::int64_t>(c);
}

void Seq::add_tile(const TileCost& tile, std::int64_t repeat) {
  if (repeat < 1) return;
  Part p;
  p.repeat = repeat;
  p.leaf = true;
  p.tile = tile;
  parts.push_back(std::move(p));
}

void Seq::add_seq(Seq seq, std::int64_t repeat) {
  if (repeat < 1 || seq.parts.empty()) return;
  Part p;
  p.repeat = repeat;
  p.leaf = false;
  p.parts = std::move(seq.parts);
  parts.push_back(std::move(p));
}

PipelineResult run_pipeline(const Seq& seq) {
  PipelineResult r;
  if (seq.parts.empty()) return r;
  r.total = sched_add(sched_add(first_load(seq.parts.front()), stages(seq.parts, 0, 0)),
                      last_store(seq.parts.back()));
  totals(seq.parts, 1, r);
  return r;
}

}  // namespace eulernpu::npu_sim
