#include "eulernpu/kit/arena.hpp"

#include <algorithm>
#include <utility>

namespace eulernpu::kit {
namespace {

int64_t align_up(int64_t v) {
  return (v + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

}  // namespace

int64_t plan_arena(std::vector<Lifetime>& buffers) {
  int64_t arena = 0;
  std::vector<const Lifetime*> placed;
  for (Lifetime& b : buffers) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Lifetime* p : placed) {
      if (p->first <= b.last && b.first <= p->last)
        busy.push_back({p->offset, p->offset + p->bytes});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [start, end] : busy) {
      if (offset + b.bytes <= start) break;
      offset = std::max(offset, align_up(end));
    }
    b.offset = offset;
    arena = std::max(arena, offset + b.bytes);
    placed.push_back(&b);
  }
  return align_up(arena);
}

}  // namespace eulernpu::kit
