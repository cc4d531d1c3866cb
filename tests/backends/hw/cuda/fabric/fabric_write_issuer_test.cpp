// The host proxy over a real libfabric provider on loopback: descriptors from a producer thread
// (the GPU's stand-in) become fi_writedata with the imm as remote CQ data; the flag must rise
// only when every write of the transfer has landed in the target buffer.
#include <catch2/catch.hpp>

#ifdef RAILCHECK_HAVE_CUDA_FABRIC

#include <cstring>
#include <thread>
#include <vector>

#include "backends/hw/cuda/fabric_write_issuer.hpp"
#include "backends/hw/cuda/host_proxy.hpp"
#include "backends/hw/libfabric/provider_query.hpp"

using namespace railcheck;
using namespace railcheck::hw::cuda;

namespace {

bool provider_here(const std::string& provider, const std::string& node) {
  auto q = fabric::query_provider(provider, node);
  if (!q) WARN("provider " << provider << " is not usable here: " << q.error().message());
  return q.ok();
}

std::string loopback_node(const std::string& provider) { return fabric::is_shm(provider) ? "" : "127.0.0.1"; }

// A producer thread (the GPU's stand-in) drives `transfers` transfers of `writes` descriptors
// through an 8-slot ring, the proxy and `issuer`: push(t, w, seq) writes write w of transfer t
// into the ring at seq (writing its source data first, or handing over its inline bytes) and
// returns the slots it took; after the transfer's flag, wrong(t) counts what is wrong at the
// target. Checks that nothing was wrong and every descriptor, landing and flag was counted.
template <typename Push, typename Wrong>
void drive(FabricWriteIssuer& issuer, std::uint32_t transfers, std::uint32_t writes, Push push, Wrong wrong) {
  alignas(64) static char ring_mem[ring_bytes(8)];
  auto ring = DescriptorRing::format(ring_mem, 8);
  std::uint64_t flags[2] = {};
  HostProxy proxy(ring, flags, 2, issuer);
  proxy.start();
  std::uint64_t wrong_total = 0;
  std::thread gpu([&] {
    std::uint64_t seq = 0;
    for (std::uint32_t t = 0; t < transfers; ++t) {
      const std::uint64_t first = seq;
      for (std::uint32_t w = 0; w < writes; ++w) seq += push(ring, t, w, seq);
      while (read_flag(flags, t % 2) != first + 1) {
        if (proxy.error()) return;
        std::this_thread::yield();
      }
      wrong_total += wrong(t);
    }
  });
  gpu.join();
  proxy.stop();
  INFO(issuer.name() << " (inject size " << issuer.inject_size()
                     << "): " << (proxy.error() ? proxy.error()->message() : std::string("no error")));
  REQUIRE_FALSE(proxy.error());
  CHECK(wrong_total == 0);
  const auto s = proxy.stats();
  CHECK(s.descriptors == std::uint64_t{transfers} * writes);
  CHECK(s.landed == std::uint64_t{transfers} * writes);
  CHECK(s.flags_raised == transfers);
}

void run_transfers(const std::string& provider) {
  const std::string node = loopback_node(provider);
  if (!provider_here(provider, node)) return;
  constexpr std::uint32_t kTransfers = 200, kWrites = 4, kBytes = 256;
  std::vector<std::uint8_t> src(kWrites * kBytes), dst(kWrites * kBytes);
  auto issuer = FabricWriteIssuer::open(provider, node, src.data(), src.size(), dst.data(), dst.size());
  REQUIRE(issuer.ok());
  auto stamp = [](std::uint32_t t, std::uint32_t w) { return (std::uint64_t(t) << 8) | w; };
  auto push = [&](DescriptorRing& ring, std::uint32_t t, std::uint32_t w, std::uint64_t seq) {
    const std::uint64_t v = stamp(t, w);
    std::memcpy(&src[w * kBytes], &v, sizeof v);
    std::memcpy(&src[w * kBytes + kBytes - 8], &v, sizeof v);  // the last bytes too
    WriteDescriptor d{.seq = seq,
                      .local_offset = w * kBytes,
                      .remote_offset = w * kBytes,
                      .length = kBytes,
                      .imm = t % 3,
                      .expect = w == 0 ? kWrites : 0,
                      .flag_slot = t % 2};
    while (!ring.try_push(d)) std::this_thread::yield();
    return 1u;
  };
  auto wrong = [&](std::uint32_t t) {
    std::uint32_t missing = 0;
    for (std::uint32_t w = 0; w < kWrites; ++w) {
      std::uint64_t head = 0, tail = 0;
      std::memcpy(&head, &dst[w * kBytes], sizeof head);
      std::memcpy(&tail, &dst[w * kBytes + kBytes - 8], sizeof tail);
      missing += head != stamp(t, w) || tail != stamp(t, w);
    }
    return missing;
  };
  drive(*issuer.value(), kTransfers, kWrites, push, wrong);
}

// Inline writes of every length from 0 to the limit, several to a transfer, through the proxy and
// the provider; after each flag every byte at the target is checked against what the producer put
// in the descriptor.
void run_inline_transfers(const std::string& provider, FabricWriteIssuer::InlineWrites mode) {
  const std::string node = loopback_node(provider);
  if (!provider_here(provider, node)) return;
  constexpr std::uint32_t kWrites = 3, kStride = 128;
  constexpr std::uint32_t kTransfers = 2 * (SlotCodec::kInlineMax + 1);  // every length twice per write
  std::vector<std::uint8_t> src(8), dst(kWrites * kStride);
  auto issuer = FabricWriteIssuer::open(provider, node, src.data(), src.size(), dst.data(), dst.size(), mode);
  REQUIRE(issuer.ok());
  auto length = [](std::uint32_t t, std::uint32_t w) { return (t + w * 41) % (SlotCodec::kInlineMax + 1); };
  auto byte = [](std::uint32_t t, std::uint32_t w, std::uint32_t b) {
    return static_cast<std::uint8_t>(t * 29 + w * 101 + b * 13 + 1);
  };
  std::vector<std::uint8_t> bytes;
  auto push = [&](DescriptorRing& ring, std::uint32_t t, std::uint32_t w, std::uint64_t seq) {
    bytes.resize(length(t, w));
    for (std::uint32_t b = 0; b < bytes.size(); ++b) bytes[b] = byte(t, w, b);
    WriteDescriptor d{.seq = seq,
                      .remote_offset = w * kStride,
                      .length = length(t, w),
                      .imm = t % 3,
                      .expect = w == 0 ? kWrites : 0,
                      .flag_slot = t % 2,
                      .inline_payload = true};
    while (!ring.try_push(d, bytes)) std::this_thread::yield();
    return SlotCodec::slots(d);
  };
  auto wrong = [&](std::uint32_t t) {
    std::uint32_t n = 0;
    for (std::uint32_t w = 0; w < kWrites; ++w)
      for (std::uint32_t b = 0; b < length(t, w); ++b) n += dst[w * kStride + b] != byte(t, w, b);
    return n;
  };
  drive(*issuer.value(), kTransfers, kWrites, push, wrong);
  const auto& w = *issuer.value();
  CHECK(w.injected() + w.staged() == kTransfers * kWrites);
  if (mode == FabricWriteIssuer::InlineWrites::Staged) {
    CHECK(w.staged() >= kTransfers * kWrites - 2 * kWrites);  // all but the zero-length ones shm injects
  } else if (w.inject_size() >= SlotCodec::kInlineMax) {
    CHECK(w.injected() == kTransfers * kWrites);
  }
}

}  // namespace

// (No ";" in a test name: CTest would split it.)
TEST_CASE("the host proxy writes through tcp with ofi_rxm and raises each flag after its writes landed",
          "[cuda][fabric]") {
  run_transfers("tcp;ofi_rxm");
}

TEST_CASE("the host proxy writes through shm and raises each flag after its writes landed", "[cuda][fabric]") {
  run_transfers("shm");
}

TEST_CASE("the host proxy moves inline writes of every length through tcp with ofi_rxm, injected",
          "[cuda][fabric][inline]") {
  run_inline_transfers("tcp;ofi_rxm", FabricWriteIssuer::InlineWrites::InjectWhereAllowed);
}

TEST_CASE("the host proxy moves inline writes of every length through tcp with ofi_rxm, from staging buffers",
          "[cuda][fabric][inline]") {
  run_inline_transfers("tcp;ofi_rxm", FabricWriteIssuer::InlineWrites::Staged);
}

TEST_CASE("the host proxy moves inline writes of every length through shm, injected", "[cuda][fabric][inline]") {
  run_inline_transfers("shm", FabricWriteIssuer::InlineWrites::InjectWhereAllowed);
}

TEST_CASE("the host proxy moves inline writes of every length through shm, from staging buffers",
          "[cuda][fabric][inline]") {
  run_inline_transfers("shm", FabricWriteIssuer::InlineWrites::Staged);
}

TEST_CASE("a descriptor outside the registered regions is refused before anything is posted", "[cuda][fabric]") {
  if (!provider_here("tcp;ofi_rxm", "127.0.0.1")) return;
  std::vector<std::uint8_t> src(64), dst(64);
  auto issuer = FabricWriteIssuer::open("tcp;ofi_rxm", "127.0.0.1", src.data(), src.size(), dst.data(), dst.size());
  REQUIRE(issuer.ok());
  auto r = issuer.value()->post(WriteDescriptor{.seq = 3, .remote_offset = 32, .length = 64, .imm = 1, .expect = 1});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Catch::Contains("descriptor 3: 64 bytes at 0 -> 32 fall outside"));
}

#endif  // RAILCHECK_HAVE_CUDA_FABRIC
