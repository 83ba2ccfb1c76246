#pragma once
// FIFO ring that grows to the most entries it ever held and then allocates no
// more: the event engine's delay lanes and the fabric's per-port queues of
// in-flight control records use it on the hot path. Capacity is a power of
// two (8, doubling).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace lossless::base {

template <class T>
struct Ring {
  std::vector<T> buf;
  uint32_t head = 0, size = 0;
  // buf.size() - 1, kept so the hot path reads one word (a measured 0.6 %
  // of a collective's instructions); all ones while buf is empty, so that
  // mask + 1 is the capacity, 0, there too.
  uint32_t mask = UINT32_MAX;
  bool empty() const { return size == 0; }
  const T& front() const { return buf[head]; }
  const T& back() const { return at(size - 1); }
  const T& at(uint32_t i) const { return buf[(head + i) & mask]; }
  void pop() {
    head = (head + 1) & mask;
    --size;
  }
  void push(const T& v) {
    if (size == mask + 1) [[unlikely]]
      Grow();
    buf[(head + size) & mask] = v;
    ++size;
  }
  // Out of line: the callers' hot paths keep only the store.
  [[gnu::noinline]] void Grow() {
    std::vector<T> bigger(std::max<size_t>(8, 2 * buf.size()));
    for (uint32_t i = 0; i < size; ++i) bigger[i] = at(i);
    buf.swap(bigger);
    head = 0;
    mask = static_cast<uint32_t>(buf.size() - 1);
  }
  void clear() { head = size = 0; }
};

}  // namespace lossless::base
