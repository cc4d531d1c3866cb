#include "backends/hw/cuda/proxy_kernels.cuh"

namespace railcheck::hw::cuda {

namespace {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Acquire at system scope (PTX ISA, memory consistency model): what the host wrote before its
// release store of this word (the landed data before the flag; the proxy's reads of a slot
// before the tail) is visible to this thread's later accesses. Generic addressing: the mapped
// allocation's device pointer is a UVA address.
__device__ __forceinline__ std::uint64_t load_acquire_sys(const volatile std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Two slot words in one 16-byte store. Each 64-bit element is a strong (relaxed, system-scope),
// naturally aligned store, so single-copy atomic: the proxy sees each word whole (the tag
// argument in descriptor_ring.hpp); the order of the elements and of the four stores is free.
__device__ __forceinline__ void store_words_sys(std::uint64_t* p, std::uint64_t a, std::uint64_t b) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

// Waits for `want` in *flag, from after the thread's last publication (descriptors or ping).
// Every poll is a PCIe read round trip (~1.25 us on H100 PCIe) that samples host memory part-way
// through, so a poll issued before the publication can have reached the host and been answered
// comes back with the old value and costs a whole extra round trip (docs/cuda.md, issue 32's
// phases: this was the proxy's +1.2 us). __threadfence_system() first returns once the
// publication's stores are acknowledged (~0.7 us), and the first poll then usually sees the
// answer. The floor's ping-pong waits the same way.
__device__ __forceinline__ void wait_for_flag(const volatile std::uint64_t* flag, std::uint64_t want, std::uint64_t t0,
                                              RoundTripPhases* ph) {
  __threadfence_system();
  const std::uint64_t polling_from = global_ns();
  std::uint64_t polls = 1;
  while (load_acquire_sys(flag) != want) ++polls;
  if (ph) {
    ph->polling_from_ns = polling_from - t0;
    ph->seen_ns = global_ns() - t0;
    ph->polls = polls;
  }
}

// An inline descriptor's slots (descriptor_ring.hpp): its payload is built in registers and
// rides in the tagged words, so nothing is fenced before them. Unrolled to the three-slot limit so
// that the stream stays in registers (constant indices); slots past this descriptor's are skipped.
__device__ __forceinline__ void publish_inline(SlotWords* slots, std::uint64_t cap, const WriteDescriptor& d,
                                               std::uint32_t it, std::uint32_t w) {
  std::uint64_t payload[SlotCodec::kStreamWords - 2];
#pragma unroll
  for (std::uint32_t j = 0; j < SlotCodec::kStreamWords - 2; ++j) payload[j] = stamp_word(it, w, j);
  std::uint64_t stream[SlotCodec::kStreamWords];
  SlotCodec::inline_stream(d, payload, stream);
  const std::uint32_t n = SlotCodec::inline_slots(d.length);
#pragma unroll
  for (std::uint32_t i = 0; i < SlotCodec::kMaxInlineSlots; ++i) {
    if (i >= n) break;
    std::uint64_t* slot = slots[(d.seq + i) & (cap - 1)].word;
#pragma unroll
    for (std::uint32_t k = 0; k < 8; k += 2)
      store_words_sys(slot + k, SlotCodec::inline_word(d.seq, stream, i, k),
                      SlotCodec::inline_word(d.seq, stream, i, k + 1));
  }
}

// Stamps that had not landed when the flag said they had: the first 8 bytes of a write from src,
// every byte of an inline one (bytes past its length within the stride are never written: zero).
__device__ __forceinline__ std::uint32_t missing_stamps(const ProxyRoundTripArgs& a, std::uint32_t it,
                                                        bool inline_writes) {
  std::uint32_t missing = 0;
  const std::uint64_t stride = write_stride(a.bytes_per_write);
  const std::uint32_t words = inline_writes ? (a.bytes_per_write + 7) / 8 : a.bytes_per_write >= 8 ? 1 : 0;
  for (std::uint32_t w = 0; w < a.writes_per_transfer; ++w)
    for (std::uint32_t j = 0; j < words; ++j) {
      const std::uint32_t left = a.bytes_per_write - 8 * j;
      const std::uint64_t want =
          left >= 8 ? stamp_word(it, w, j) : stamp_word(it, w, j) & ((std::uint64_t{1} << (8 * left)) - 1);
      missing += *reinterpret_cast<const volatile std::uint64_t*>(a.dst + w * stride + 8 * j) != want;
    }
  return missing;
}

__global__ void proxy_round_trip_kernel(ProxyRoundTripArgs a) {
  // Every read of mapped host memory is a PCIe round trip, so the kernel keeps its own copies:
  // head lives in a register (only this thread writes it) and the consumer's tail is re-read only
  // when the cached value says the ring has no room. Slots need no fence and no head store (each
  // word carries the slot's tag). A write of 1 to SlotCodec::kInlineMax bytes goes inline; a
  // larger one names its data in src, and one fence per transfer orders that data before the slots.
  volatile RingHeader* ring = a.ring;
  const std::uint64_t cap = ring->capacity;
  std::uint64_t head = ring->head;
  std::uint64_t tail_seen = ring->tail;
  // A zero-length write has no data to order: its plain one-slot descriptor is cheaper to build
  // (publish 0.13 against 0.19 us inline; docs/cuda.md).
  const bool inline_writes = a.bytes_per_write > 0 && a.bytes_per_write <= SlotCodec::kInlineMax;
  const bool stamp = !inline_writes && a.bytes_per_write >= 8;
  const std::uint64_t stride = write_stride(a.bytes_per_write);
  for (std::uint32_t it = 0; it < a.iterations; ++it) {
    const std::uint64_t t0 = global_ns();
    const std::uint64_t expect_seq = head;
    if (stamp) {
      for (std::uint32_t w = 0; w < a.writes_per_transfer; ++w)
        *reinterpret_cast<volatile std::uint64_t*>(a.src + w * stride) = stamp_word(it, w, 0);
      __threadfence_system();  // the data before any slot that names it
    }
    for (std::uint32_t w = 0; w < a.writes_per_transfer; ++w) {
      WriteDescriptor d;
      d.seq = head;
      d.local_offset = inline_writes ? 0 : w * stride;
      d.remote_offset = w * stride;
      d.length = a.bytes_per_write;
      d.imm = it;
      d.expect = w == 0 ? a.writes_per_transfer : 0;
      d.flag_slot = 0;
      d.inline_payload = inline_writes;
      const std::uint32_t n = SlotCodec::slots(d);
      // Acquire: the proxy's reads of the slots happen before this thread's stores to them.
      while (head + n - tail_seen > cap) tail_seen = load_acquire_sys(&ring->tail);
      if (inline_writes) {
        publish_inline(a.slots, cap, d, it, w);
      } else {
        const SlotWords s = SlotCodec::encode(d);
        std::uint64_t* slot = a.slots[head & (cap - 1)].word;
#pragma unroll
        for (int k = 0; k < 8; k += 2) store_words_sys(slot + k, s.word[k], s.word[k + 1]);
      }
      head += n;
    }
    RoundTripPhases* ph = a.phases ? a.phases + it : nullptr;
    if (ph) ph->published_ns = global_ns() - t0;
    wait_for_flag(a.flags, expect_seq + 1, t0, ph);
    if (const std::uint32_t missing = missing_stamps(a, it, inline_writes)) *a.errors += missing;
  }
  ring->head = head;  // for a later launch on the same ring
}

__global__ void ping_pong_kernel(volatile std::uint64_t* ping, volatile std::uint64_t* pong, std::uint32_t iterations,
                                 RoundTripPhases* phases) {
  for (std::uint32_t it = 1; it <= iterations; ++it) {
    const std::uint64_t t0 = global_ns();
    *ping = it;
    RoundTripPhases* ph = phases ? phases + (it - 1) : nullptr;
    if (ph) ph->published_ns = global_ns() - t0;
    wait_for_flag(pong, it, t0, ph);
  }
}

}  // namespace

int launch_proxy_round_trip(const ProxyRoundTripArgs& a) {
  proxy_round_trip_kernel<<<1, 1>>>(a);
  return static_cast<int>(cudaGetLastError());
}

int launch_ping_pong(std::uint64_t* ping, std::uint64_t* pong, std::uint32_t iterations, RoundTripPhases* phases) {
  ping_pong_kernel<<<1, 1>>>(ping, pong, iterations, phases);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace railcheck::hw::cuda
