#include "backends/hw/cuda/host_proxy.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "backends/hw/cuda/shuffled_copy_issuer.hpp"

using namespace railcheck::hw::cuda;

namespace {
// Ring memory with the alignment the GPU-mapped allocation has (page-aligned there).
struct RingMemory {
  explicit RingMemory(std::uint64_t cap) : bytes(ring_bytes(cap)), mem(static_cast<char*>(::operator new(bytes, std::align_val_t(64)))) {}
  ~RingMemory() { ::operator delete(mem, std::align_val_t(64)); }
  std::size_t bytes;
  char* mem;
};
}  // namespace

TEST_CASE("the descriptor ring hands every slot over once, in order, across wraparound", "[cuda][ring]") {
  RingMemory m(4);
  auto ring = DescriptorRing::format(m.mem, 4);
  std::uint64_t next_pop = 0;
  for (std::uint64_t seq = 0; seq < 10; ++seq) {
    REQUIRE(ring.try_push(WriteDescriptor{.seq = seq}));
    if (seq % 3 == 2) {
      while (auto d = ring.try_pop()) CHECK(d->seq == next_pop++);
    }
  }
  while (auto d = ring.try_pop()) CHECK(d->seq == next_pop++);
  CHECK(next_pop == 10);
}

TEST_CASE("the slot codec carries every field to its limits and says what does not fit", "[cuda][ring]") {
  const WriteDescriptor d{.seq = 0xfffffffffffeull,
                          .local_offset = SlotCodec::kMaxOffset,
                          .remote_offset = 12345,
                          .length = 0xffffffffu,
                          .imm = 0x80000001u,
                          .expect = 7,
                          .flag_slot = 0xffffffffu};
  REQUIRE(SlotCodec::fits(d));
  auto back = SlotCodec::decode(SlotCodec::encode(d));
  REQUIRE(back);
  CHECK(back->seq == d.seq);
  CHECK(back->local_offset == d.local_offset);
  CHECK(back->remote_offset == d.remote_offset);
  CHECK(back->length == d.length);
  CHECK(back->imm == d.imm);
  CHECK(back->expect == d.expect);
  CHECK(back->flag_slot == d.flag_slot);
  CHECK_FALSE(SlotCodec::fits(WriteDescriptor{.local_offset = SlotCodec::kMaxOffset + 1}));
  CHECK_FALSE(SlotCodec::fits(WriteDescriptor{.remote_offset = SlotCodec::kMaxOffset + 1}));
  CHECK_FALSE(SlotCodec::decode(SlotWords{}));  // never written
}

TEST_CASE("a slot is handed over only once all eight of its words carry its tag", "[cuda][ring]") {
  // The GPU's four 16-byte stores may reach host memory in any order; the words of the slot's
  // previous lap (or zeros) must never be mixed into a descriptor.
  RingMemory m(2);
  auto ring = DescriptorRing::format(m.mem, 2);
  for (std::uint64_t seq = 0; seq < 2; ++seq) {  // lap 0, so that lap 1 finds old words in the slots
    REQUIRE(ring.try_push(WriteDescriptor{.seq = seq, .imm = 1}));
    REQUIRE(ring.try_pop());
  }
  const SlotWords next = SlotCodec::encode(WriteDescriptor{.seq = 2, .local_offset = 64, .length = 8, .imm = 9});
  SlotWords& slot = ring.slots()[2 & 1];
  for (int k : {7, 3, 1, 5, 2, 6, 4}) {  // every word but word 0, one at a time
    slot.word[k] = next.word[k];
    CHECK_FALSE(ring.try_pop());
  }
  slot.word[0] = next.word[0];
  auto d = ring.try_pop();
  REQUIRE(d);
  CHECK(d->seq == 2);
  CHECK(d->local_offset == 64);
  CHECK(d->imm == 9);

  // Word 0 first, then the rest: also nothing until the last word is there.
  const SlotWords after = SlotCodec::encode(WriteDescriptor{.seq = 3, .imm = 10});
  SlotWords& slot3 = ring.slots()[3 & 1];
  slot3.word[0] = after.word[0];
  for (int k = 1; k < 8; ++k) {
    CHECK_FALSE(ring.try_pop());
    slot3.word[k] = after.word[k];
  }
  REQUIRE(ring.try_pop());
}

TEST_CASE("the slot tag tells a lap from the one before across the 16-bit wrap", "[cuda][ring]") {
  // 70000 descriptors through 4 slots: the tag (low 16 bits of seq + 1) wraps once; every slot
  // must still be taken exactly when its own descriptor is complete.
  RingMemory m(4);
  auto ring = DescriptorRing::format(m.mem, 4);
  std::uint64_t next_pop = 0;
  for (std::uint64_t seq = 0; seq < 70000; ++seq) {
    REQUIRE(ring.try_push(WriteDescriptor{.seq = seq, .imm = static_cast<std::uint32_t>(seq * 3)}));
    if (seq % 4 == 3) {
      while (auto d = ring.try_pop()) {
        REQUIRE(d->seq == next_pop);
        REQUIRE(d->imm == static_cast<std::uint32_t>(next_pop * 3));
        ++next_pop;
      }
    }
  }
  CHECK(next_pop == 70000);
  CHECK_FALSE(ring.try_pop());
}

TEST_CASE("a consumer thread decodes every slot exactly when a producer thread's words land in random order",
          "[cuda][ring]") {
  // The producer writes each slot word by word in a seeded random order, the way the GPU's
  // stores may arrive; the consumer polls concurrently (also the TSan case for the slot words).
  for (std::uint64_t seed : {3ull, 19ull}) {
    INFO("seed " << seed << " (replay: run this test; the seed list is in the test)");
    constexpr std::uint64_t kCount = 20000;
    RingMemory m(4);
    auto ring = DescriptorRing::format(m.mem, 4);
    std::thread producer([&] {
      std::mt19937_64 rng(seed);
      int order[8] = {0, 1, 2, 3, 4, 5, 6, 7};
      for (std::uint64_t seq = 0; seq < kCount; ++seq) {
        while (seq - std::atomic_ref<std::uint64_t>(ring.header()->tail).load(std::memory_order_acquire) == 4)
          std::this_thread::yield();
        const SlotWords s = SlotCodec::encode(
            WriteDescriptor{.seq = seq, .local_offset = seq * 8, .length = static_cast<std::uint32_t>(seq), .imm = 5});
        std::shuffle(order, order + 8, rng);
        SlotWords& slot = ring.slots()[seq & 3];
        for (int k : order) std::atomic_ref<std::uint64_t>(slot.word[k]).store(s.word[k], std::memory_order_release);
      }
    });
    std::uint64_t next = 0, wrong = 0;
    while (next < kCount) {
      if (auto d = ring.try_pop()) {
        wrong += d->seq != next || d->local_offset != next * 8 || d->length != next || d->imm != 5;
        ++next;
      } else {
        std::this_thread::yield();
      }
    }
    producer.join();
    CHECK(wrong == 0);
  }
}

TEST_CASE("a full ring refuses the producer until the proxy frees a slot", "[cuda][ring]") {
  RingMemory m(2);
  auto ring = DescriptorRing::format(m.mem, 2);
  CHECK(ring.try_push(WriteDescriptor{.seq = 0}));
  CHECK(ring.try_push(WriteDescriptor{.seq = 1}));
  CHECK_FALSE(ring.try_push(WriteDescriptor{.seq = 2}));
  CHECK(ring.try_pop()->seq == 0);
  CHECK(ring.try_push(WriteDescriptor{.seq = 2}));
}

TEST_CASE("the proxy stops with an error on a gap in the descriptor sequence", "[cuda][proxy]") {
  RingMemory m(4);
  auto ring = DescriptorRing::format(m.mem, 4);
  std::uint64_t flags[1] = {};
  std::uint8_t buf[8] = {};
  ShuffledCopyIssuer issuer(buf, buf, 1, 1);
  HostProxy proxy(ring, flags, 1, issuer);
  REQUIRE(ring.try_push(WriteDescriptor{.seq = 0, .imm = 1, .expect = 1}));
  REQUIRE(ring.try_push(WriteDescriptor{.seq = 2, .imm = 2, .expect = 1}));
  auto r = proxy.run_once();
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("seq 2 where 1 was next"));
}

TEST_CASE("a flag slot outside the flag array is refused, not written", "[cuda][proxy]") {
  RingMemory m(2);
  auto ring = DescriptorRing::format(m.mem, 2);
  std::uint64_t flags[2] = {};
  std::uint8_t buf[8] = {};
  ShuffledCopyIssuer issuer(buf, buf, 1, 1);
  HostProxy proxy(ring, flags, 2, issuer);
  REQUIRE(ring.try_push(WriteDescriptor{.seq = 0, .imm = 1, .expect = 1, .flag_slot = 2}));
  auto r = proxy.run_once();
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("flag slot 2 of 2"));
  CHECK(flags[0] == 0);
  CHECK(flags[1] == 0);
}

// ---- inline payloads (descriptor_ring.hpp: the payload rides in the tagged words, no fence) ----

namespace {
// Payload bytes that differ per descriptor and per byte.
std::vector<std::uint8_t> pattern(std::uint64_t seq, std::uint32_t length) {
  std::vector<std::uint8_t> b(length);
  for (std::uint32_t i = 0; i < length; ++i) b[i] = static_cast<std::uint8_t>(seq * 131 + i * 7 + 1);
  return b;
}
}  // namespace

TEST_CASE("inline descriptors carry every length from 0 to the limit intact, in 1, 2 or 3 slots",
          "[cuda][ring][inline]") {
  STATIC_REQUIRE(SlotCodec::kInlineMax >= 64);
  CHECK(SlotCodec::inline_slots(0) == 1);
  CHECK(SlotCodec::inline_slots(26) == 1);
  CHECK(SlotCodec::inline_slots(27) == 2);
  CHECK(SlotCodec::inline_slots(64) == 2);
  CHECK(SlotCodec::inline_slots(74) == 2);
  CHECK(SlotCodec::inline_slots(75) == 3);
  CHECK(SlotCodec::inline_slots(SlotCodec::kInlineMax) == 3);
  RingMemory m(8);
  auto ring = DescriptorRing::format(m.mem, 8);
  std::uint64_t seq = 0;
  for (int round = 0; round < 3; ++round)  // three passes: every length at several ring offsets
    for (std::uint32_t len = 0; len <= SlotCodec::kInlineMax; ++len) {
      INFO("length " << len << ", seq " << seq);
      const WriteDescriptor d{.seq = seq,
                              .remote_offset = SlotCodec::kMaxOffset - len,
                              .length = len,
                              .imm = 0xfffffff0u + len % 16,
                              .expect = 0xffff,
                              .flag_slot = 0xffff,
                              .inline_payload = true};
      REQUIRE(SlotCodec::fits_inline(d));
      const auto bytes = pattern(seq, len);
      REQUIRE(ring.try_push(d, bytes));
      InlineBytes got{};
      auto back = ring.try_pop(&got);
      REQUIRE(back);
      CHECK(back->seq == seq);
      CHECK(back->inline_payload);
      CHECK(back->remote_offset == d.remote_offset);
      CHECK(back->length == len);
      CHECK(back->imm == d.imm);
      CHECK(back->expect == d.expect);
      CHECK(back->flag_slot == d.flag_slot);
      CHECK(std::equal(bytes.begin(), bytes.end(), got.begin()));
      CHECK(ring.header()->tail == seq + SlotCodec::inline_slots(len));
      seq += SlotCodec::inline_slots(len);
    }
  CHECK_FALSE(ring.try_pop());
  CHECK_FALSE(SlotCodec::fits_inline(WriteDescriptor{.length = SlotCodec::kInlineMax + 1}));
  CHECK_FALSE(SlotCodec::fits_inline(WriteDescriptor{.expect = 0x10000}));
  CHECK_FALSE(SlotCodec::fits_inline(WriteDescriptor{.flag_slot = 0x10000}));
  CHECK_FALSE(SlotCodec::fits_inline(WriteDescriptor{.remote_offset = SlotCodec::kMaxOffset + 1}));
}

TEST_CASE("an inline descriptor is never taken while any word of any of its slots is the previous lap's",
          "[cuda][ring][inline]") {
  // Lap 0 fills the 4 slots (one 3-slot inline descriptor and a plain one), so that lap 1 finds
  // tagged old words everywhere, including an old continuation slot where the new first slot goes.
  for (std::uint64_t seed : {2ull, 5ull, 23ull}) {
    INFO("seed " << seed << " (replay: run this test; the seed list is in the test)");
    RingMemory m(4);
    auto ring = DescriptorRing::format(m.mem, 4);
    REQUIRE(ring.try_push(WriteDescriptor{.seq = 0, .length = 100, .imm = 1, .inline_payload = true}, pattern(0, 100)));
    REQUIRE(ring.try_push(WriteDescriptor{.seq = 3, .imm = 2}));
    REQUIRE(ring.try_pop());
    REQUIRE(ring.try_pop());
    // Lap 1 starts at seq 4 (slot 0): a plain one there, then a 3-slot inline one over slots 1-3.
    REQUIRE(ring.try_push(WriteDescriptor{.seq = 4, .imm = 3}));
    REQUIRE(ring.try_pop());
    ring.header()->head = 5;
    const WriteDescriptor d{
        .seq = 5, .remote_offset = 8, .length = 122, .imm = 77, .expect = 1, .inline_payload = true};
    const auto bytes = pattern(5, 122);
    const auto slots = SlotCodec::encode_inline(d, bytes);
    std::vector<std::pair<int, int>> order;  // (slot, word)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 8; ++k) order.emplace_back(i, k);
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    InlineBytes got{};
    for (std::size_t n = 0; n < order.size(); ++n) {
      CHECK_FALSE(ring.try_pop(&got));
      const auto [i, k] = order[n];
      ring.slots()[(5 + i) & 3].word[k] = slots[i].word[k];
    }
    auto back = ring.try_pop(&got);
    REQUIRE(back);
    CHECK(back->seq == 5);
    CHECK(back->imm == 77);
    CHECK(std::equal(bytes.begin(), bytes.end(), got.begin()));
    CHECK(ring.header()->tail == 8);
  }
}

TEST_CASE("inline descriptors of 1 to 3 slots cross the 16-bit tag wrap in a 4-slot ring", "[cuda][ring][inline]") {
  RingMemory m(4);
  auto ring = DescriptorRing::format(m.mem, 4);
  std::uint64_t seq = 0, popped = 0, wrong = 0;
  std::uint32_t len = 0;
  while (seq < 140000) {  // the tag wraps twice
    const WriteDescriptor d{.seq = seq, .length = len, .imm = static_cast<std::uint32_t>(seq), .inline_payload = true};
    const auto bytes = pattern(seq, len);
    if (!ring.try_push(d, bytes)) {
      InlineBytes got{};
      auto back = ring.try_pop(&got);
      REQUIRE(back);
      const auto want = pattern(back->seq, back->length);
      wrong += back->seq != popped || back->imm != static_cast<std::uint32_t>(back->seq) ||
               !std::equal(want.begin(), want.end(), got.begin());
      popped += SlotCodec::slots(*back);
      continue;
    }
    seq += SlotCodec::slots(d);
    len = (len + 37) % (SlotCodec::kInlineMax + 1);
  }
  while (auto back = ring.try_pop()) popped += SlotCodec::slots(*back);
  CHECK(wrong == 0);
  CHECK(popped == seq);
}

TEST_CASE("a consumer thread takes every inline descriptor whole while a producer thread's words land in random order",
          "[cuda][ring][inline]") {
  // All words of all of a descriptor's slots in one shuffled order, against a polling consumer
  // (also the TSan case for inline slots).
  for (std::uint64_t seed : {4ull, 31ull}) {
    INFO("seed " << seed << " (replay: run this test; the seed list is in the test)");
    constexpr std::uint64_t kCount = 20000;
    RingMemory m(8);
    auto ring = DescriptorRing::format(m.mem, 8);
    std::thread producer([&] {
      std::mt19937_64 rng(seed);
      std::uint64_t seq = 0;
      for (std::uint64_t i = 0; i < kCount; ++i) {
        const auto len = static_cast<std::uint32_t>(rng() % (SlotCodec::kInlineMax + 1));
        const WriteDescriptor d{.seq = seq, .remote_offset = i, .length = len, .imm = 9, .inline_payload = true};
        const std::uint32_t n = SlotCodec::slots(d);
        while (seq + n - std::atomic_ref<std::uint64_t>(ring.header()->tail).load(std::memory_order_acquire) > 8)
          std::this_thread::yield();
        const auto slots = SlotCodec::encode_inline(d, pattern(i, len));
        std::vector<std::pair<std::uint32_t, int>> order;
        for (std::uint32_t s = 0; s < n; ++s)
          for (int k = 0; k < 8; ++k) order.emplace_back(s, k);
        std::shuffle(order.begin(), order.end(), rng);
        for (auto [s, k] : order)
          std::atomic_ref<std::uint64_t>(ring.slots()[(seq + s) & 7].word[k])
              .store(slots[s].word[k], std::memory_order_relaxed);
        seq += n;
      }
    });
    std::uint64_t taken = 0, next_seq = 0, wrong = 0;
    InlineBytes got{};
    while (taken < kCount) {
      if (auto d = ring.try_pop(&got)) {
        const auto want = pattern(d->remote_offset, d->length);
        wrong += d->seq != next_seq || d->remote_offset != taken || d->imm != 9 ||
                 !std::equal(want.begin(), want.end(), got.begin());
        next_seq += SlotCodec::slots(*d);
        ++taken;
      } else {
        std::this_thread::yield();
      }
    }
    producer.join();
    CHECK(wrong == 0);
  }
}

TEST_CASE(
    "a producer thread and the proxy thread move every write exactly once, byte for byte, under shuffled landings",
    "[cuda][proxy][inline]") {
  // The producer thread stands in for the GPU: it posts transfers of several writes, inline ones
  // of every length and ones from its source buffer mixed, waits for each transfer's flag, and
  // checks that every byte landed before the flag rose.
  for (std::uint64_t seed : {1ull, 7ull, 42ull}) {
    INFO("seed " << seed << " (replay: run this test; the seed list is in the test)");
    constexpr std::uint32_t kTransfers = 400, kWrites = 5, kStride = 256;
    std::vector<std::uint8_t> src(kWrites * kStride), dst(kWrites * kStride);
    RingMemory m(8);
    auto ring = DescriptorRing::format(m.mem, 8);
    std::uint64_t flags[4] = {};
    ShuffledCopyIssuer issuer(src.data(), dst.data(), seed, 6);
    HostProxy proxy(ring, flags, 4, issuer);
    proxy.start();
    std::uint32_t wrong_bytes = 0;
    std::thread gpu([&] {
      std::uint64_t seq = 0;
      for (std::uint32_t t = 0; t < kTransfers; ++t) {
        const std::uint64_t first = seq;
        std::uint32_t lengths[kWrites];
        for (std::uint32_t w = 0; w < kWrites; ++w) {
          const bool inl = (t + w) % 4 != 3;
          lengths[w] = inl ? (t * 7 + w * 41) % (SlotCodec::kInlineMax + 1) : 200;
          const auto bytes = pattern(t * kWrites + w, lengths[w]);
          WriteDescriptor d{.seq = seq,
                            .local_offset = w * kStride,
                            .remote_offset = w * kStride,
                            .length = lengths[w],
                            .imm = t % 3,
                            .expect = w == 0 ? kWrites : 0,
                            .flag_slot = t % 4,
                            .inline_payload = inl};
          if (!inl) std::copy(bytes.begin(), bytes.end(), src.begin() + w * kStride);
          while (!ring.try_push(d, inl ? std::span<const std::uint8_t>(bytes) : std::span<const std::uint8_t>{}))
            std::this_thread::yield();
          seq += SlotCodec::slots(d);
        }
        while (read_flag(flags, t % 4) != first + 1) {
          if (proxy.error()) return;
          std::this_thread::yield();
        }
        for (std::uint32_t w = 0; w < kWrites; ++w) {
          const auto want = pattern(t * kWrites + w, lengths[w]);
          for (std::uint32_t b = 0; b < lengths[w]; ++b) wrong_bytes += dst[w * kStride + b] != want[b];
        }
      }
    });
    gpu.join();
    proxy.stop();
    REQUIRE_FALSE(proxy.error());
    CHECK(wrong_bytes == 0);
    const auto s = proxy.stats();
    CHECK(s.descriptors == kTransfers * kWrites);
    CHECK(s.landed == kTransfers * kWrites);
    CHECK(s.flags_raised == kTransfers);
  }
}
