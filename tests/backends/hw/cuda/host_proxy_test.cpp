#include "backends/hw/cuda/host_proxy.hpp"

#include <catch2/catch.hpp>

#include <cstring>
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

TEST_CASE("a full ring refuses the producer until the proxy frees a slot", "[cuda][ring]") {
  RingMemory m(2);
  auto ring = DescriptorRing::format(m.mem, 2);
  CHECK(ring.try_push(WriteDescriptor{.seq = 0}));
  CHECK(ring.try_push(WriteDescriptor{.seq = 1}));
  CHECK_FALSE(ring.try_push(WriteDescriptor{.seq = 2}));
  CHECK(ring.try_pop()->seq == 0);
  CHECK(ring.try_push(WriteDescriptor{.seq = 2}));
}

TEST_CASE("a producer thread and the proxy thread move every write exactly once under shuffled landings",
          "[cuda][proxy]") {
  // The producer thread stands in for the GPU: it stamps data, posts a transfer of `writes`
  // descriptors, waits for its flag, and checks the data landed before the flag rose.
  for (std::uint64_t seed : {1ull, 7ull, 42ull}) {
    INFO("seed " << seed << " (replay: run this test; the seed list is in the test)");
    constexpr std::uint32_t kTransfers = 300, kWrites = 5, kBytes = 32;
    std::vector<std::uint8_t> src(kWrites * kBytes), dst(kWrites * kBytes);
    RingMemory m(8);
    auto ring = DescriptorRing::format(m.mem, 8);
    std::uint64_t flags[4] = {};
    ShuffledCopyIssuer issuer(src.data(), dst.data(), seed, 6);
    HostProxy proxy(ring, flags, 4, issuer);
    proxy.start();
    std::uint32_t missing = 0;
    std::thread gpu([&] {
      std::uint64_t seq = 0;
      for (std::uint32_t t = 0; t < kTransfers; ++t) {
        std::uint64_t first = seq;
        for (std::uint32_t w = 0; w < kWrites; ++w) {
          std::uint64_t stamp = t + 1;
          std::memcpy(&src[w * kBytes], &stamp, sizeof stamp);
          WriteDescriptor d{.seq = seq++, .local_offset = w * kBytes, .remote_offset = w * kBytes, .length = kBytes,
                            .imm = t % 3, .expect = w == 0 ? kWrites : 0, .flag_slot = t % 4};
          while (!ring.try_push(d)) std::this_thread::yield();
        }
        while (read_flag(flags, t % 4) != first + 1) std::this_thread::yield();
        for (std::uint32_t w = 0; w < kWrites; ++w) {
          std::uint64_t got = 0;
          std::memcpy(&got, &dst[w * kBytes], sizeof got);
          if (got != t + 1) ++missing;
        }
      }
    });
    gpu.join();
    proxy.stop();
    REQUIRE_FALSE(proxy.error());
    CHECK(missing == 0);
    auto s = proxy.stats();
    CHECK(s.descriptors == kTransfers * kWrites);
    CHECK(s.landed == kTransfers * kWrites);
    CHECK(s.flags_raised == kTransfers);
  }
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
