#pragma once
// PRIVATE to backends/hw/libfabric: the contexts of the operations the provider holds (the
// engine's WRs and control messages, and write_imm calls), in fixed blocks so their addresses stay
// put. A CQ entry's op_context is recognised as one of them by address range, without a lookup
// table, and once a slab has grown to the number in flight a post costs no allocation (issue 32:
// the context, its hash-map node and the retry std::functions were allocations per 64 B message).
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace railcheck::fabric {

// T: starts with the fi_context2 the provider may use (FI_CONTEXT2 mode, so the context's address
// is what the CQ entry gives back) and has a `bool in_use`.
template <typename T>
class ContextSlab {
 public:
  // A free context with in_use set; its other fields are as its last user left them (the caller
  // sets them: a recycled control buffer keeps its capacity).
  T* acquire() {
    if (free_.empty()) grow();
    T* t = free_.back();
    free_.pop_back();
    t->in_use = true;
    ++live_;
    return t;
  }

  void release(T* t) {
    if (t == nullptr || !t->in_use) return;
    t->in_use = false;
    free_.push_back(t);
    --live_;
  }

  // The context in use at `context`, or nullptr (another slab's, a foreign one, or none).
  T* find(const void* context) const {
    const std::less<const void*> before;
    for (const auto& b : blocks_) {
      const T* lo = b->data();
      if (before(context, lo) || !before(context, lo + kBlock)) continue;
      T* t = &(*b)[static_cast<std::size_t>(static_cast<const T*>(context) - lo)];
      return t == context && t->in_use ? t : nullptr;
    }
    return nullptr;
  }

  std::size_t live() const { return live_; }

 private:
  static constexpr std::size_t kBlock = 128;

  void grow() {
    blocks_.push_back(std::make_unique<std::array<T, kBlock>>());
    for (std::size_t i = kBlock; i-- > 0;) free_.push_back(&(*blocks_.back())[i]);
  }

  std::vector<std::unique_ptr<std::array<T, kBlock>>> blocks_;
  std::vector<T*> free_;
  std::size_t live_ = 0;
};

}  // namespace railcheck::fabric
