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

namespace {

std::uint64_t load_acquire(std::uint64_t& w) {
  return std::atomic_ref<std::uint64_t>(w).load(std::memory_order_acquire);
}

bool all_tagged(const SlotWords& s, int from, std::uint64_t tag) {
  for (int k = from; k < 8; ++k)
    if ((s.word[k] & SlotCodec::kTagMask) != tag) return false;
  return true;
}

}  // namespace

std::optional<WriteDescriptor> SlotCodec::decode(const SlotWords& s) {
  if (s.word[0] == 0 || (s.word[0] & kInlineBit) != 0) return std::nullopt;
  const std::uint64_t t = s.word[0] & kTagMask;
  if (!all_tagged(s, 1, t)) return std::nullopt;
  auto u32 = [&](int k) -> std::optional<std::uint32_t> {
    const std::uint64_t v = s.word[k] >> 16;
    if (v > 0xffffffffu) return std::nullopt;
    return static_cast<std::uint32_t>(v);
  };
  auto length = u32(3), imm = u32(4), expect = u32(5), flag_slot = u32(6);
  if (!length || !imm || !expect || !flag_slot || s.word[7] != t) return std::nullopt;
  return WriteDescriptor{s.word[0] - 1, s.word[1] >> 16, s.word[2] >> 16, *length, *imm, *expect, *flag_slot};
}

std::array<SlotWords, SlotCodec::kMaxInlineSlots> SlotCodec::encode_inline(const WriteDescriptor& d,
                                                                           std::span<const std::uint8_t> payload) {
  assert(d.inline_payload && fits_inline(d) && payload.size() == d.length);
  std::uint64_t words[kStreamWords - 2] = {};
  for (std::size_t b = 0; b < payload.size(); ++b) words[b / 8] |= std::uint64_t{payload[b]} << (8 * (b % 8));
  std::uint64_t stream[kStreamWords];
  inline_stream(d, words, stream);
  std::array<SlotWords, kMaxInlineSlots> slots{};
  for (std::uint32_t i = 0; i < inline_slots(d.length); ++i)
    for (std::uint32_t k = 0; k < 8; ++k) slots[i].word[k] = inline_word(d.seq, stream, i, k);
  return slots;
}

std::optional<std::uint32_t> SlotCodec::inline_slots_of(const SlotWords& first) {
  const std::uint32_t length = (first.word[2] >> 16) & 0xffff;  // chunk 1's low 16 bits: stream bytes 6-7
  if (length > kInlineMax) return std::nullopt;
  return inline_slots(length);
}

std::optional<WriteDescriptor> SlotCodec::decode_inline(const SlotWords* slots, std::uint32_t n,
                                                        std::uint8_t* payload) {
  if ((slots[0].word[0] & kInlineBit) == 0 || n == 0 || n > kMaxInlineSlots) return std::nullopt;
  const std::uint64_t seq = (slots[0].word[0] & ~kInlineBit) - 1;
  for (std::uint32_t i = 0; i < n; ++i)
    if (!all_tagged(slots[i], i == 0 ? 1 : 0, tag(seq + i))) return std::nullopt;
  // Chunks back into stream bytes, little-endian, six per word.
  std::uint8_t stream[kStreamWords * 8] = {};
  std::uint32_t at = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t k = i == 0 ? 1 : 0; k < 8; ++k)
      for (std::uint32_t b = 0; b < kChunkBytes; ++b)
        stream[at++] = static_cast<std::uint8_t>(slots[i].word[k] >> (16 + 8 * b));
  auto le = [&](std::uint32_t from, std::uint32_t bytes) {
    std::uint64_t v = 0;
    for (std::uint32_t b = 0; b < bytes; ++b) v |= std::uint64_t{stream[from + b]} << (8 * b);
    return v;
  };
  WriteDescriptor d;
  d.seq = seq;
  d.remote_offset = le(0, 6);
  d.length = static_cast<std::uint32_t>(le(6, 2));
  d.imm = static_cast<std::uint32_t>(le(8, 4));
  d.expect = static_cast<std::uint32_t>(le(12, 2));
  d.flag_slot = static_cast<std::uint32_t>(le(14, 2));
  d.inline_payload = true;
  if (d.length > kInlineMax || inline_slots(d.length) != n) return std::nullopt;
  if (payload)
    for (std::uint32_t b = 0; b < d.length; ++b) payload[b] = stream[kInlineFieldBytes + b];
  return d;
}

std::optional<WriteDescriptor> DescriptorRing::try_pop(InlineBytes* payload) {
  const std::uint64_t tail = header_->tail;  // only we write it
  const std::uint64_t cap = header_->capacity;
  SlotWords& slot = slots_[tail & (cap - 1)];
  // Acquire loads (plain loads on x86), pairing with the producer's fence before its slot stores
  // (GPU) or its release stores (host): what the issuer reads at local_offset is at least as new
  // as the slot. Word 0 first: while it still carries the previous lap's tag (the common "nothing
  // new" case; that lap's seq + 1, or an inline descriptor's chunk there) or is zero (never
  // written), the rest of the line need not be read.
  SlotWords s;
  s.word[0] = load_acquire(slot.word[0]);
  if (s.word[0] == 0 || (s.word[0] & SlotCodec::kTagMask) == SlotCodec::tag(tail - cap)) return std::nullopt;
  for (int k = 1; k < 8; ++k) s.word[k] = load_acquire(slot.word[k]);
  std::optional<WriteDescriptor> d;
  std::uint32_t n = 1;
  if ((s.word[0] & SlotCodec::kInlineBit) == 0) {
    d = SlotCodec::decode(s);
  } else if (all_tagged(s, 1, s.word[0] & SlotCodec::kTagMask)) {
    // The first slot is whole, so its length is this descriptor's: read the slots after it, each
    // of which must carry its own seq's tag (one lap on from what the proxy last read there).
    const auto slots = SlotCodec::inline_slots_of(s);
    if (!slots || *slots > cap) return std::nullopt;  // no producer writes this (fits_inline, format)
    n = *slots;
    SlotWords all[SlotCodec::kMaxInlineSlots];
    all[0] = s;
    for (std::uint32_t i = 1; i < n; ++i) {
      SlotWords& next = slots_[(tail + i) & (cap - 1)];
      for (int k = 0; k < 8; ++k) all[i].word[k] = load_acquire(next.word[k]);
    }
    d = SlotCodec::decode_inline(all, n, payload ? payload->data() : nullptr);
  }
  if (!d) return std::nullopt;  // some words still of the previous lap: the stores are on their way
  // Release: every read of these slots (the payload copied out included) before the producer may
  // write them again.
  std::atomic_ref<std::uint64_t>(header_->tail).store(tail + n, std::memory_order_release);
  return d;
}

bool DescriptorRing::try_push(const WriteDescriptor& d, std::span<const std::uint8_t> payload) {
  const std::uint64_t head = header_->head;  // only we write it
  const std::uint64_t cap = header_->capacity;
  const std::uint32_t n = SlotCodec::slots(d);
  assert(n <= cap && "an inline descriptor needs a ring of at least its slot count");
  const std::uint64_t tail = std::atomic_ref<std::uint64_t>(header_->tail).load(std::memory_order_acquire);
  if (head + n - tail > cap) return false;
  std::array<SlotWords, SlotCodec::kMaxInlineSlots> s{};
  if (d.inline_payload) {
    s = SlotCodec::encode_inline(d, payload);
  } else {
    assert(SlotCodec::fits(d) && "offsets beyond 48 bits do not fit a slot");
    s[0] = SlotCodec::encode(d);
  }
  // Release on each word: the source data written before this call is visible to a consumer that
  // read any of them (and acquires). The words' order among themselves does not matter.
  for (std::uint32_t i = 0; i < n; ++i) {
    SlotWords& slot = slots_[(head + i) & (cap - 1)];
    for (int k = 0; k < 8; ++k)
      std::atomic_ref<std::uint64_t>(slot.word[k]).store(s[i].word[k], std::memory_order_release);
  }
  header_->head = head + n;
  return true;
}

}  // namespace railcheck::hw::cuda
