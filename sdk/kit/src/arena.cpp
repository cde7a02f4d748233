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
  // Only buffers still alive can be in the way. When the buffers come
  // sorted by their first step (lowering passes them so), one that ended
  // before this one starts is in the way of no later one either: dropping
  // it keeps the placement the same, and planning takes time linear in the
  // buffers times those alive at once, not quadratic. In any other order
  // every placed buffer is kept.
  const bool by_first =
      std::is_sorted(buffers.begin(), buffers.end(),
                     [](const Lifetime& a, const Lifetime& b) { return a.first < b.first; });
  std::vector<const Lifetime*> placed;
  for (Lifetime& b : buffers) {
    if (by_first) std::erase_if(placed, [&](const Lifetime* p) { return p->last < b.first; });
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
