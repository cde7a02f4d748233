// Scratch memory that outlives a kernel call. A fresh std::vector of more
// than malloc's mmap threshold (128 KiB to start with) is a fresh mapping
// on every call, and each of its pages faults on first touch: about a
// hundred faults per inference of BlazeFace's int8 graph, a third of
// its run time on a virtual machine. A thread_local vector passed through
// grow() keeps its pages from call to call; what it held is not
// meaningful to the next call, which writes (or clears) what it reads.
#pragma once

#include <cstddef>
#include <vector>

namespace eulernpu::kernels::detail {

// v's storage with room for at least n elements; grows, never shrinks.
template <typename T>
T* grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace eulernpu::kernels::detail
