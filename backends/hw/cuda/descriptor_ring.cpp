#include "backends/hw/cuda/descriptor_ring.hpp"

#include <cassert>
#include <new>

namespace railcheck::hw::cuda {

DescriptorRing DescriptorRing::format(void* memory, std::uint64_t capacity) {
  assert(capacity > 0 && (capacity & (capacity - 1)) == 0 && "capacity must be a power of two");
  assert(capacity <= kMaxCapacity && "the 16-bit slot tag must tell a lap from the one before");
  auto* h = new (memory) RingHeader();
  h->capacity = capacity;
  auto* slots = reinterpret_cast<SlotWords*>(static_cast<char*>(memory) + sizeof(RingHeader));
  for (std::uint64_t i = 0; i < capacity; ++i) new (&slots[i]) SlotWords();
  return DescriptorRing(h, slots);
}

DescriptorRing DescriptorRing::attach(void* memory) {
  auto* h = static_cast<RingHeader*>(memory);
  return DescriptorRing(h, reinterpret_cast<SlotWords*>(static_cast<char*>(memory) + sizeof(RingHeader)));
}

std::optional<WriteDescriptor> DescriptorRing::try_pop() {
  const std::uint64_t tail = header_->tail;  // only we write it
  const std::uint64_t cap = header_->capacity;
  SlotWords& slot = slots_[tail & (cap - 1)];
  // Acquire loads (plain loads on x86), pairing with the producer's fence before its slot stores
  // (GPU) or its release stores (host): what the issuer reads at local_offset is at least as new
  // as the slot. Word 0 first: while it still holds the previous lap's seq (the common "nothing
  // new" case) the rest of the line need not be read.
  auto load = [](std::uint64_t& w) { return std::atomic_ref<std::uint64_t>(w).load(std::memory_order_acquire); };
  SlotWords s;
  s.word[0] = load(slot.word[0]);
  if (s.word[0] == 0 || s.word[0] + cap == tail + 1) return std::nullopt;
  for (int k = 1; k < 8; ++k) s.word[k] = load(slot.word[k]);
  auto d = SlotCodec::decode(s);
  if (!d) return std::nullopt;  // some words still of the previous lap: the stores are on their way
  std::atomic_ref<std::uint64_t>(header_->tail).store(tail + 1, std::memory_order_release);
  return d;
}

bool DescriptorRing::try_push(const WriteDescriptor& d) {
  assert(SlotCodec::fits(d) && "offsets beyond 48 bits do not fit a slot");
  const std::uint64_t head = header_->head;  // only we write it
  const std::uint64_t tail = std::atomic_ref<std::uint64_t>(header_->tail).load(std::memory_order_acquire);
  if (head - tail == header_->capacity) return false;
  const SlotWords s = SlotCodec::encode(d);
  SlotWords& slot = slots_[head & (header_->capacity - 1)];
  // Release on each word: the source data written before this call is visible to a consumer that
  // read any of them (and acquires). The words' order among themselves does not matter.
  for (int k = 0; k < 8; ++k) std::atomic_ref<std::uint64_t>(slot.word[k]).store(s.word[k], std::memory_order_release);
  header_->head = head + 1;
  return true;
}

}  // namespace railcheck::hw::cuda
