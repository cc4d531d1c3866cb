#include "backends/hw/cuda/descriptor_ring.hpp"

#include <cassert>
#include <new>

namespace railcheck::hw::cuda {

DescriptorRing DescriptorRing::format(void* memory, std::uint64_t capacity) {
  assert(capacity > 0 && (capacity & (capacity - 1)) == 0 && "capacity must be a power of two");
  auto* h = new (memory) RingHeader();
  h->capacity = capacity;
  auto* slots = reinterpret_cast<WriteDescriptor*>(static_cast<char*>(memory) + sizeof(RingHeader));
  for (std::uint64_t i = 0; i < capacity; ++i) new (&slots[i]) WriteDescriptor();
  return DescriptorRing(h, slots);
}

DescriptorRing DescriptorRing::attach(void* memory) {
  auto* h = static_cast<RingHeader*>(memory);
  return DescriptorRing(h, reinterpret_cast<WriteDescriptor*>(static_cast<char*>(memory) + sizeof(RingHeader)));
}

std::optional<WriteDescriptor> DescriptorRing::try_pop() {
  std::uint64_t tail = header_->tail;  // only we write it
  std::uint64_t head = std::atomic_ref<std::uint64_t>(header_->head).load(std::memory_order_acquire);
  if (tail == head) return std::nullopt;
  WriteDescriptor d = slots_[tail & (header_->capacity - 1)];
  std::atomic_ref<std::uint64_t>(header_->tail).store(tail + 1, std::memory_order_release);
  return d;
}

bool DescriptorRing::try_push(const WriteDescriptor& d) {
  std::uint64_t head = header_->head;  // only we write it
  std::uint64_t tail = std::atomic_ref<std::uint64_t>(header_->tail).load(std::memory_order_acquire);
  if (head - tail == header_->capacity) return false;
  slots_[head & (header_->capacity - 1)] = d;
  std::atomic_ref<std::uint64_t>(header_->head).store(head + 1, std::memory_order_release);
  return true;
}

}  // namespace railcheck::hw::cuda
