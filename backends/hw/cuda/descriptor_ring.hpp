#pragma once
// The GPU -> CPU proxy's descriptor ring (TransferEngine's host proxy; seed rdma-p2p series):
// a GPU thread cannot ring a NIC doorbell through libfabric, so it writes "please WRITE_IMM
// this" descriptors into pinned host memory mapped into its address space, and a CPU thread
// polls them and talks to the NIC. One producer (the GPU, or a host thread in tests), one
// consumer (the proxy).
//
// Layout in mapped memory (all fields little-endian, naturally aligned, so both sides use the
// same struct; this memory never crosses a host, so a layout shared by one build is enough):
//   RingHeader { head (producer), tail (consumer), capacity } on separate 64-byte lines, so a
//   PCIe write of one never invalidates the line the other side polls;
//   WriteDescriptor slots[capacity], capacity a power of two.
//
// Ordering: the producer fills slot head % capacity, then publishes head + 1. On the GPU that is
// three 16-byte write-through stores to the slot, __threadfence_system() (membar.sys: the host
// observes them before anything the thread writes after the fence), then a volatile store of
// head. Without the fence the head may overtake the slot anywhere on the way (the GPU's memory
// system, PCIe relaxed ordering); with it, the slot is visible at system scope first. On the host, head is read with acquire and tail written with
// release (std::atomic_ref); the GPU reads tail and the completion flags with ld.acquire.sys. So
// the proxy never sees a slot before its contents, the producer never overwrites a slot the
// proxy still reads, and the GPU never reads landed data older than the flag that announced it.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace railcheck::hw::cuda {

// 48 bytes, 16-aligned: the GPU writes a slot as three 16-byte stores instead of one store per
// field (each store to mapped memory is its own PCIe write).
struct alignas(16) WriteDescriptor {
  std::uint64_t seq = 0;            // producer's running number (checked by the proxy: no gaps)
  std::uint64_t local_offset = 0;   // in the registered source buffer
  std::uint64_t remote_offset = 0;  // in the peer's registered destination buffer
  std::uint32_t length = 0;         // bytes; 0 is a legal zero-length write (imm only)
  std::uint32_t imm = 0;            // the ImmCounter value this write counts towards
  std::uint32_t expect = 0;         // > 0 on the one descriptor that registers "expect N writes with imm"
  std::uint32_t flag_slot = 0;      // which completion flag to raise when imm completes
  std::uint64_t reserved = 0;       // zero; fills the slot to three whole 16-byte stores
};
static_assert(sizeof(WriteDescriptor) == 48 && alignof(WriteDescriptor) == 16);

struct alignas(64) RingHeader {
  alignas(64) std::uint64_t head = 0;  // written by the producer only
  alignas(64) std::uint64_t tail = 0;  // written by the consumer only
  alignas(64) std::uint64_t capacity = 0;
};

// Bytes a ring of `capacity` slots needs (header + slots).
constexpr std::size_t ring_bytes(std::size_t capacity) { return sizeof(RingHeader) + capacity * sizeof(WriteDescriptor); }

// A view over ring memory (host pointer of the mapped allocation); owns nothing.
class DescriptorRing {
 public:
  // Formats `memory` (ring_bytes(capacity) bytes, 64-byte aligned) as an empty ring.
  static DescriptorRing format(void* memory, std::uint64_t capacity);
  static DescriptorRing attach(void* memory);

  // Consumer side (the proxy).
  std::optional<WriteDescriptor> try_pop();
  // Producer side on the host (tests, CPU-initiated writes). False when the ring is full.
  bool try_push(const WriteDescriptor& d);

  std::uint64_t capacity() const { return header_->capacity; }
  RingHeader* header() const { return header_; }
  WriteDescriptor* slots() const { return slots_; }

 private:
  DescriptorRing(RingHeader* h, WriteDescriptor* s) : header_(h), slots_(s) {}
  RingHeader* header_;
  WriteDescriptor* slots_;
};

// Completion flags the GPU polls: flag[i] holds the seq of the last descriptor whose transfer
// completed on slot i (0: none yet). Written with release by the proxy.
inline void raise_flag(std::uint64_t* flags, std::uint32_t slot, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(flags[slot]).store(value, std::memory_order_release);
}
inline std::uint64_t read_flag(std::uint64_t* flags, std::uint32_t slot) {
  return std::atomic_ref<std::uint64_t>(flags[slot]).load(std::memory_order_acquire);
}

}  // namespace railcheck::hw::cuda
