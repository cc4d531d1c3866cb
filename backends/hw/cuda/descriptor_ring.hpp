#pragma once
// The GPU -> CPU proxy's descriptor ring (TransferEngine's host proxy; seed rdma-p2p series):
// a GPU thread cannot ring a NIC doorbell through libfabric, so it writes "please WRITE_IMM
// this" descriptors into pinned host memory mapped into its address space, and a CPU thread
// polls them and talks to the NIC. One producer (the GPU, or a host thread in tests), one
// consumer (the proxy).
//
// Layout in mapped memory (little-endian, naturally aligned; this memory never crosses a host):
//   RingHeader { head, tail, capacity } on separate 64-byte lines; head is the producer's own
//   count (nobody polls it), tail is the consumer's (the producer reads it only when full);
//   slots[capacity], capacity a power of two up to 2^15, each slot one 64-byte line of eight
//   64-bit words (SlotCodec below).
//
// Publication without a head and without a fence (issue 32, docs/cuda.md): every word of a slot
// carries a 16-bit tag, the low 16 bits of seq + 1, in its own low bits; word 0 is seq + 1
// itself. The GPU writes the words with strong (st.relaxed.sys), naturally aligned 64-bit stores,
// which are single-copy atomic (PTX memory model; on the host, x86 aligned 8-byte accesses), so a
// word the proxy reads is wholly the new one or wholly the old one. The proxy last read this slot
// when it consumed seq - capacity, and per-location coherence never lets it read a word older than
// one it read before, so each word it reads is seq - capacity's (or zero, in the first lap only,
// where seq + 1 <= capacity makes the tag non-zero) or seq's; capacity <= 2^15 makes the two tags
// differ. Hence a slot whose eight words all carry one tag, word 0 not the previous lap's, holds
// one descriptor whole, whatever order the stores arrived in: the proxy never decodes a slot before
// all of its contents are visible, and the GPU needs neither a fence between its slot stores nor a
// head store on a line of its own that the proxy would take a second miss on.
//
// What the tags do not order is the source data a transfer names: the GPU writes its data, then
// __threadfence_system(), then the slot words (fence + strong store: a release pattern); a host
// producer uses release stores. The proxy reads the words with acquire, then hands the descriptor
// to the issuer, so a write never copies data older than its slot. The proxy reads a slot, then
// writes tail with release; the GPU re-reads tail with ld.acquire.sys only when its cached copy says
// the ring is full, and its stores to the slot come after that acquire, so it never overwrites a
// slot the proxy still reads. The proxy writes landed data, then the flag with release; the GPU
// reads the flag with ld.acquire.sys, so it never reads landed data older than its flag.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#if defined(__CUDACC__)
#define RAILCHECK_HD __host__ __device__
#else
#define RAILCHECK_HD
#endif

namespace railcheck::hw::cuda {

// What the proxy hands to a WriteIssuer: one WRITE with immediate.
struct WriteDescriptor {
  std::uint64_t seq = 0;            // producer's running number (checked by the proxy: no gaps)
  std::uint64_t local_offset = 0;   // in the registered source buffer, < 2^48
  std::uint64_t remote_offset = 0;  // in the peer's registered destination buffer, < 2^48
  std::uint32_t length = 0;         // bytes; 0 is a legal zero-length write (imm only)
  std::uint32_t imm = 0;            // the ImmCounter value this write counts towards
  std::uint32_t expect = 0;         // > 0 on the one descriptor that registers "expect N writes with imm"
  std::uint32_t flag_slot = 0;      // which completion flag to raise when imm completes
};

// One slot: eight words, 64-byte aligned so that it is one cache line (one miss for the proxy).
// The GPU writes it as four 16-byte stores of two words each.
struct alignas(64) SlotWords {
  std::uint64_t word[8] = {};
};
static_assert(sizeof(SlotWords) == 64);

// The slot's wire format. Word k, k > 0: payload << 16 | tag(seq); word 0: seq + 1.
//   1: local_offset (48 bits)   2: remote_offset (48 bits)   3: length   4: imm
//   5: expect                   6: flag_slot                 7: zero payload (tag only)
struct SlotCodec {
  static constexpr std::uint64_t kTagMask = 0xffff;
  static constexpr std::uint64_t kMaxOffset = (std::uint64_t{1} << 48) - 1;

  RAILCHECK_HD static constexpr std::uint64_t tag(std::uint64_t seq) { return (seq + 1) & kTagMask; }
  RAILCHECK_HD static constexpr bool fits(const WriteDescriptor& d) {
    return d.local_offset <= kMaxOffset && d.remote_offset <= kMaxOffset;
  }
  // Precondition: fits(d) (the producer's offsets are inside its registered buffers).
  RAILCHECK_HD static constexpr SlotWords encode(const WriteDescriptor& d) {
    const std::uint64_t t = tag(d.seq);
    SlotWords s;
    s.word[0] = d.seq + 1;
    s.word[1] = d.local_offset << 16 | t;
    s.word[2] = d.remote_offset << 16 | t;
    s.word[3] = std::uint64_t{d.length} << 16 | t;
    s.word[4] = std::uint64_t{d.imm} << 16 | t;
    s.word[5] = std::uint64_t{d.expect} << 16 | t;
    s.word[6] = std::uint64_t{d.flag_slot} << 16 | t;
    s.word[7] = t;
    return s;
  }
  // The descriptor when every word carries word 0's tag and no 32-bit field overflows; nothing
  // when the slot is still (partly) old or was never written. Whether it is the seq the consumer
  // expects is the consumer's check (a gap is an error, not "not yet").
  static std::optional<WriteDescriptor> decode(const SlotWords& s) {
    if (s.word[0] == 0) return std::nullopt;
    const std::uint64_t t = s.word[0] & kTagMask;
    for (int k = 1; k < 8; ++k)
      if ((s.word[k] & kTagMask) != t) return std::nullopt;
    auto u32 = [&](int k) -> std::optional<std::uint32_t> {
      const std::uint64_t v = s.word[k] >> 16;
      if (v > 0xffffffffu) return std::nullopt;
      return static_cast<std::uint32_t>(v);
    };
    auto length = u32(3), imm = u32(4), expect = u32(5), flag_slot = u32(6);
    if (!length || !imm || !expect || !flag_slot || s.word[7] != t) return std::nullopt;
    return WriteDescriptor{s.word[0] - 1, s.word[1] >> 16, s.word[2] >> 16, *length, *imm, *expect, *flag_slot};
  }
};

struct alignas(64) RingHeader {
  alignas(64) std::uint64_t head = 0;  // the producer's count of slots written (its own bookkeeping)
  alignas(64) std::uint64_t tail = 0;  // written by the consumer only: slots it has finished reading
  alignas(64) std::uint64_t capacity = 0;
};

// Bytes a ring of `capacity` slots needs (header + slots).
constexpr std::size_t ring_bytes(std::size_t capacity) { return sizeof(RingHeader) + capacity * sizeof(SlotWords); }

// A view over ring memory (host pointer of the mapped allocation); owns nothing.
class DescriptorRing {
 public:
  static constexpr std::uint64_t kMaxCapacity = std::uint64_t{1} << 15;  // tags of seq and seq - capacity differ
  // Formats `memory` (ring_bytes(capacity) bytes, 64-byte aligned) as an empty ring; capacity a
  // power of two, at most kMaxCapacity.
  static DescriptorRing format(void* memory, std::uint64_t capacity);
  static DescriptorRing attach(void* memory);

  // Consumer side (the proxy): the slot at tail once all of its words carry one tag, else nothing.
  std::optional<WriteDescriptor> try_pop();
  // Producer side on the host (tests, CPU-initiated writes). False when the ring is full.
  // Precondition: SlotCodec::fits(d).
  bool try_push(const WriteDescriptor& d);

  std::uint64_t capacity() const { return header_->capacity; }
  RingHeader* header() const { return header_; }
  SlotWords* slots() const { return slots_; }

 private:
  DescriptorRing(RingHeader* h, SlotWords* s) : header_(h), slots_(s) {}
  RingHeader* header_;
  SlotWords* slots_;
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
