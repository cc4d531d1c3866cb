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
// What the tags do not order is source data a transfer names by offset: the GPU writes its data,
// then __threadfence_system(), then the slot words (fence + strong store: a release pattern); a host
// producer uses release stores. The proxy reads the words with acquire, then hands the descriptor
// to the issuer, so a write never copies data older than its slot. On an H100 that fence costs
// ~0.74 us (docs/cuda.md), more than the proxy's whole share of issue 32's budget.
//
// Inline payloads (issue 32; NCCL's LL protocol and RDMA inline sends do the same) need no fence:
// a write of at most SlotCodec::kInlineMax bytes travels inside the descriptor. It spans n
// consecutive slots (seq .. seq + n - 1, n <= kMaxInlineSlots, from its length); word 0 of the
// first is seq + 1 with kInlineBit set, and every other word of slot i carries 48 bits of the
// descriptor's stream and the tag of seq + i. The stream is 16 bytes of fields (remote_offset,
// length, imm, expect, flag_slot) and then the payload bytes, chopped into 48-bit chunks (word 0
// of a later slot is a chunk like any other, so the proxy tells a new slot at tail from the
// previous lap's by word 0's tag, never by its value). Each
// slot position is still written once per lap, by the descriptor that owns that seq, so the tag
// argument above holds slot by slot: the proxy takes the descriptor only when every word of all n
// slots carries its own slot's tag, and then every payload byte it decodes is the one the
// producer stored for this seq, whatever order the GPU's stores arrived in. The data never exists
// anywhere but in the tagged words, so nothing has to be ordered before them: no fence. The
// producer waits until tail leaves room for all n slots before its first store; the proxy copies
// the payload out of the slots before its release store of tail (+n), so the producer never
// overwrites a slot whose payload is still being read. The proxy's copy then goes to the issuer
// (WriteIssuer::post_inline), which must be done with the bytes when it returns: it injects them
// (fi_inject_writedata: the provider has copied them on return) or copies them into a registered
// staging buffer owned by that write's operation context, which returns to the free list only when
// the initiator's CQ reports the write complete (FabricWriteIssuer), so no staging buffer is
// reused while the provider may still read it.
//
// Tail and flags: the proxy reads a slot, then writes tail with release; the GPU re-reads tail with
// ld.acquire.sys only when its cached copy says the ring has no room, and its stores to the slot
// come after that acquire, so it never overwrites a slot the proxy still reads. The proxy writes
// landed data, then the flag with release; the GPU reads the flag with ld.acquire.sys, so it never
// reads landed data older than its flag.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#if defined(__CUDACC__)
#define RAILCHECK_HD __host__ __device__
#else
#define RAILCHECK_HD
#endif

namespace railcheck::hw::cuda {

// What the proxy hands to a WriteIssuer: one WRITE with immediate.
struct WriteDescriptor {
  std::uint64_t seq = 0;            // producer's running number (checked by the proxy: no gaps)
  std::uint64_t local_offset = 0;   // in the registered source buffer, < 2^48 (unused when inline)
  std::uint64_t remote_offset = 0;  // in the peer's registered destination buffer, < 2^48
  std::uint32_t length = 0;         // bytes; 0 is a legal zero-length write (imm only)
  std::uint32_t imm = 0;            // the ImmCounter value this write counts towards
  std::uint32_t expect = 0;         // > 0 on the one descriptor that registers "expect N writes with imm"
  std::uint32_t flag_slot = 0;      // which completion flag to raise when imm completes
  bool inline_payload = false;      // the bytes travel in the descriptor's own slots (SlotCodec::fits_inline)
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
// An inline descriptor (header comment) instead: word 0 of its first slot seq + 1 | kInlineBit;
// every other word w of slot i, in order (slot 0 words 1..7, then slot 1 words 0..7, ...), the next
// 48-bit chunk of its stream << 16 | tag(seq + i). The stream, little-endian: bytes 0-5
// remote_offset, 6-7 length, 8-11 imm, 12-13 expect, 14-15 flag_slot, then the payload; chunk c is
// stream bits [48c, 48c + 48).
struct SlotCodec {
  static constexpr std::uint64_t kTagMask = 0xffff;
  static constexpr std::uint64_t kMaxOffset = (std::uint64_t{1} << 48) - 1;
  static constexpr std::uint64_t kInlineBit = std::uint64_t{1} << 63;
  // The inline limit, kInlineMax = 122 bytes: what three slots hold. With the fields in words of
  // their own (as in `encode`) the first slot would hold 12 payload bytes and 64 bytes would need
  // three slots; packed into 16 stream bytes, one slot holds 26, two hold 74 (a 64-byte payload),
  // three 122. Each slot more is four more GPU stores and one more line the proxy reads; the
  // fence it replaces costs ~0.74 us. docs/cuda.md measures 1, 2 and 3 slots against the fenced
  // path just above the limit.
  static constexpr std::uint32_t kMaxInlineSlots = 3;
  static constexpr std::uint32_t kInlineFieldBytes = 16;
  static constexpr std::uint32_t kChunkBytes = 6;
  static constexpr std::uint32_t kFirstSlotBytes = 7 * kChunkBytes - kInlineFieldBytes;              // 26
  static constexpr std::uint32_t kSlotBytes = 8 * kChunkBytes;                                       // 48
  static constexpr std::uint32_t kInlineMax = kFirstSlotBytes + (kMaxInlineSlots - 1) * kSlotBytes;  // 122
  // The stream as 64-bit words: the two field words, then the payload, rounded up to whole words
  // and one more, so that every chunk's bits lie inside it.
  static constexpr std::uint32_t kStreamWords = 2 + (kInlineMax + 7) / 8;
  static_assert(kStreamWords * 64 >= (7 + 8 * (kMaxInlineSlots - 1)) * 48);

  RAILCHECK_HD static constexpr std::uint64_t tag(std::uint64_t seq) { return (seq + 1) & kTagMask; }
  RAILCHECK_HD static constexpr bool fits(const WriteDescriptor& d) {
    return d.local_offset <= kMaxOffset && d.remote_offset <= kMaxOffset;
  }
  RAILCHECK_HD static constexpr bool fits_inline(const WriteDescriptor& d) {
    return d.length <= kInlineMax && d.remote_offset <= kMaxOffset && d.expect <= 0xffff && d.flag_slot <= 0xffff;
  }
  RAILCHECK_HD static constexpr std::uint32_t inline_slots(std::uint32_t length) {
    return length <= kFirstSlotBytes ? 1 : 1 + (length - kFirstSlotBytes + kSlotBytes - 1) / kSlotBytes;
  }
  // Ring slots the descriptor occupies (seq .. seq + slots - 1).
  RAILCHECK_HD static constexpr std::uint32_t slots(const WriteDescriptor& d) {
    return d.inline_payload ? inline_slots(d.length) : 1;
  }

  // Precondition: fits(d) (the producer's offsets are inside its registered buffers), !d.inline_payload.
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

  // Inline encoding in two steps, so that a GPU thread can keep everything in registers (fully
  // unrolled, constant indices): the stream from the fields and the payload (payload[j] holds
  // bytes 8j .. 8j + 7, little-endian; words past the length are not read, bytes past it dropped),
  // then each slot word from the stream. Precondition: fits_inline(d).
  RAILCHECK_HD static constexpr void inline_stream(const WriteDescriptor& d, const std::uint64_t* payload,
                                                   std::uint64_t (&stream)[kStreamWords]) {
    stream[0] = d.remote_offset | std::uint64_t{d.length} << 48;
    stream[1] = std::uint64_t{d.imm} | std::uint64_t{d.expect} << 32 | std::uint64_t{d.flag_slot} << 48;
    for (std::uint32_t j = 0; j + 2 < kStreamWords; ++j) {
      const std::uint32_t at = 8 * j;
      const std::uint32_t left = d.length > at ? d.length - at : 0;
      stream[j + 2] = left == 0 ? 0 : left >= 8 ? payload[j] : payload[j] & ((std::uint64_t{1} << (8 * left)) - 1);
    }
  }
  // Word k of slot i (i < inline_slots(length)) of the inline descriptor `seq`.
  RAILCHECK_HD static constexpr std::uint64_t inline_word(std::uint64_t seq,
                                                          const std::uint64_t (&stream)[kStreamWords], std::uint32_t i,
                                                          std::uint32_t k) {
    if (i == 0 && k == 0) return (seq + 1) | kInlineBit;
    const std::uint32_t c = i == 0 ? k - 1 : 7 + 8 * (i - 1) + k;
    const std::uint32_t bit = 48 * c, j = bit / 64, shift = bit % 64;
    std::uint64_t chunk = stream[j] >> shift;
    if (shift > 16) chunk |= stream[j + 1] << (64 - shift);
    return (chunk & kMaxOffset) << 16 | tag(seq + i);
  }
  // Host-side: the slots of an inline descriptor, `payload` its d.length bytes.
  static std::array<SlotWords, kMaxInlineSlots> encode_inline(const WriteDescriptor& d,
                                                              std::span<const std::uint8_t> payload);

  // The descriptor when every word carries word 0's tag and no 32-bit field overflows; nothing
  // when the slot is still (partly) old, was never written, or is an inline descriptor's (those
  // are decode_inline's). Whether it is the seq the consumer expects is the consumer's check (a
  // gap is an error, not "not yet").
  static std::optional<WriteDescriptor> decode(const SlotWords& s);
  // How many slots the inline descriptor whose first slot this is spans (its length field read
  // alone); nothing when the length is beyond kInlineMax (no producer writes that).
  static std::optional<std::uint32_t> inline_slots_of(const SlotWords& first);
  // The inline descriptor in slots[0 .. n) when word 0 has kInlineBit, every word of slot i
  // carries tag(seq + i), and the length needs exactly n slots; its payload into `payload`
  // (may be null: checked, not copied). Nothing otherwise.
  static std::optional<WriteDescriptor> decode_inline(const SlotWords* slots, std::uint32_t n, std::uint8_t* payload);
};

// An inline descriptor's bytes as the proxy hands them on (the issuer copies them before it returns).
using InlineBytes = std::array<std::uint8_t, SlotCodec::kInlineMax>;

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
  // power of two, at most kMaxCapacity (inline descriptors need at least their slot count).
  static DescriptorRing format(void* memory, std::uint64_t capacity);
  static DescriptorRing attach(void* memory);

  // Consumer side (the proxy): the descriptor at tail once all of its words (all of its slots',
  // for an inline one) carry their tags, else nothing; an inline descriptor's bytes go to
  // `payload` (may be null: checked, not copied). Tail moves by the slots it spanned.
  std::optional<WriteDescriptor> try_pop(InlineBytes* payload = nullptr);
  // Producer side on the host (tests, CPU-initiated writes). False when the ring has no room for
  // all of the descriptor's slots. Precondition: SlotCodec::fits(d), or for an inline one
  // SlotCodec::fits_inline(d) and payload.size() == d.length.
  bool try_push(const WriteDescriptor& d, std::span<const std::uint8_t> payload = {});

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
