// StripedConnection (striped_connection.hpp): a comm's messages over several streams on
// tcp;ofi_rxm loopback, each stream a whole HA connection and the tails moved by the pump thread.
// Tagged [threads]: the pumps run beside the test's thread, so these run under TSan too.
#include "backends/hw/nccl/striped_connection.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "backends/hw/libfabric/provider_query.hpp"
#include "engine/handshake/handle_codec.hpp"

using namespace railcheck;
using namespace railcheck::nccl;

namespace {

constexpr const char* kStripedProvider = "tcp;ofi_rxm";

bool striped_provider_usable() {
  if (auto ok = fabric::query_provider(kStripedProvider, "127.0.0.1"); !ok) {
    WARN("provider " << kStripedProvider << " is not usable here: " << ok.error().message());
    return false;
  }
  return true;
}

FabricOptions striped_options(std::size_t staged_bytes) {
  FabricOptions o;
  o.provider = kStripedProvider;
  o.rails = 2;
  o.rail_addresses.assign(2, "127.0.0.1");
  o.staged_send_bytes = staged_bytes;
  o.staged_send_slots = staged_bytes > 0 ? 16 : 0;
  // A tail's send completes only once the receiver has its head, i.e. after every earlier head on
  // stream 0: under TSan on two shared cores a window of 1 MiB messages took over 2 s, and the
  // sender's soft RTO then failed a stream over for nothing (twice: no rail left).
  o.tunables.soft_rto = std::chrono::milliseconds(10000);
  o.tunables.soft_rto_max = std::chrono::milliseconds(20000);
  o.tunables.control_timeout = std::chrono::milliseconds(3000);
  return o;
}

struct StripedPair {
  std::unique_ptr<StripedConnection> tx, rx;
  std::vector<std::uint8_t> handle;
};

StripedPair open_striped_pair(const StripeLayout& layout, std::size_t staged_bytes = 0) {
  StripedPair p;
  auto rx = StripedConnection::listen(striped_options(staged_bytes), layout, p.handle);
  REQUIRE(rx.ok());
  auto tx = StripedConnection::connect(striped_options(staged_bytes), p.handle);
  REQUIRE(tx.ok());
  p.rx = std::move(rx).value();
  p.tx = std::move(tx).value();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(p.tx->ready() && p.rx->ready())) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    p.tx->progress();
    p.rx->progress();
  }
  return p;
}

// Message k's byte j: unique enough that a chunk landing in the wrong place, or twice, shows.
std::uint8_t striped_stamp(std::size_t k, std::size_t j) {
  return static_cast<std::uint8_t>(k * 131 + j * 7 + (j >> 12));
}

// Sends `sizes` in order with up to `window` in flight, each into a receive buffer of `posted`
// bytes, and checks every size and byte; `on_sent(k)` runs after message k was posted.
template <class OnSent>
void striped_exchange(StripedPair& p, const std::vector<std::size_t>& sizes, std::size_t posted, std::size_t window,
                      OnSent on_sent) {
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<std::vector<std::uint8_t>> out(window, std::vector<std::uint8_t>(std::max<std::size_t>(largest, 1)));
  std::vector<std::vector<std::uint8_t>> in(window, std::vector<std::uint8_t>(posted));
  std::vector<StripedMemory*> smr, rmr;
  for (std::size_t w = 0; w < window; ++w) {
    smr.push_back(p.tx->register_memory(out[w].data(), out[w].size()).value());
    rmr.push_back(p.rx->register_memory(in[w].data(), in[w].size()).value());
  }
  std::deque<std::pair<std::size_t, RequestId>> sends, recvs;
  std::size_t next = 0, received = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (received < sizes.size()) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    while (next < sizes.size() && sends.size() < window && recvs.size() < window && next - received < window) {
      const std::size_t w = next % window;
      void* data[1] = {in[w].data()};
      const std::size_t size[1] = {posted};
      const std::uint64_t tag[1] = {7};
      StripedMemory* m[1] = {rmr[w]};
      auto r = p.rx->irecv(data, size, tag, m);
      REQUIRE(r.ok());
      recvs.emplace_back(next, r.value());
      for (std::size_t j = 0; j < sizes[next]; ++j) out[w][j] = striped_stamp(next, j);
      auto s = p.tx->isend(out[w].data(), sizes[next], 7, smr[w]);
      REQUIRE(s.ok());
      sends.emplace_back(next, s.value());
      on_sent(next);
      ++next;
    }
    p.tx->progress();
    p.rx->progress();
    while (!sends.empty()) {
      auto r = p.tx->finished(sends.front().second);
      if (!r) break;
      INFO("send " << sends.front().first << ": " << r->error);
      REQUIRE(r->ok);
      REQUIRE(r->sizes == std::vector<std::size_t>{sizes[sends.front().first]});
      // NCCL may reuse the buffer now: a replay must not read it (staged copies), nor must a
      // chunk still in flight.
      std::fill(out[sends.front().first % window].begin(), out[sends.front().first % window].end(), 0xee);
      sends.pop_front();
    }
    while (!recvs.empty()) {
      auto r = p.rx->finished(recvs.front().second);
      if (!r) break;
      const std::size_t k = recvs.front().first;
      INFO("receive " << k << ": " << r->error);
      REQUIRE(r->ok);
      REQUIRE(r->sizes == std::vector<std::size_t>{sizes[k]});
      // One assertion per message (a per-byte one made the TSan run crawl): the first wrong byte.
      std::size_t wrong = 0;
      while (wrong < sizes[k] && in[k % window][wrong] == striped_stamp(k, wrong)) ++wrong;
      INFO("message " << k << " of " << sizes[k] << " bytes: first wrong byte " << wrong);
      REQUIRE(wrong == sizes[k]);
      recvs.pop_front();
      ++received;
    }
  }
  // The sends' last acks (staged sends complete before them) come with more progress.
  while (!sends.empty()) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    p.tx->progress();
    p.rx->progress();
    if (auto r = p.tx->finished(sends.front().second)) {
      REQUIRE(r->ok);
      sends.pop_front();
    }
  }
  for (std::size_t w = 0; w < window; ++w) {
    REQUIRE(p.tx->deregister_memory(smr[w]).ok());
    REQUIRE(p.rx->deregister_memory(rmr[w]).ok());
  }
}

std::uint32_t handle_u32_at(const std::vector<std::uint8_t>& h, std::size_t at) {
  return std::uint32_t{h[at]} | std::uint32_t{h[at + 1]} << 8 | std::uint32_t{h[at + 2]} << 16 |
         std::uint32_t{h[at + 3]} << 24;
}

}  // namespace

TEST_CASE("a one-stream handle is a plain connection handle and a striped one carries its layout",
          "[nccl][stripe][threads]") {
  if (!striped_provider_usable()) return;
  StripedPair one = open_striped_pair(StripeLayout{1, 65536});
  REQUIRE(one.handle.size() == kHandleMaxSize);
  for (std::size_t i = kHandleWireSize; i < kHandleMaxSize; ++i) REQUIRE(one.handle[i] == 0);
  CHECK(one.tx->layout().streams == 1);

  // The connecting side takes the listener's layout from the handle.
  StripedPair three = open_striped_pair(StripeLayout{3, 8192});
  CHECK(three.handle[kStreamCountOffset] == (kStripeLayoutVersion << 4 | 3));
  CHECK(handle_u32_at(three.handle, kStripeBytesOffset) == 8192);
  CHECK(three.tx->layout().streams == 3);
  CHECK(three.tx->layout().min_bytes == 8192);

  // A listener that cuts messages another way (a plugin from before the layout's version byte
  // wrote the bare count): refused at connect, with what to do, never bytes in the wrong place.
  std::vector<std::uint8_t> older = three.handle;
  older[kStreamCountOffset] = 3;
  auto refused = StripedConnection::connect(striped_options(0), older);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().what, Catch::Contains("stripe layout 0, this plugin with 1"));
  CHECK_THAT(refused.error().hint, Catch::Contains("same plugin build on every rank"));
}

TEST_CASE("striped and unstriped messages arrive whole and in order over three streams", "[nccl][stripe][threads]") {
  if (!striped_provider_usable()) return;
  StripedPair p = open_striped_pair(StripeLayout{3, 4096}, 65536);
  // Around the stripe size, chunks that are eager, segmented and rendezvous in ofi_rxm, and a
  // message whose tails are empty; each into a receive larger than the message.
  const std::vector<std::size_t> sizes = {0,     100,   4096,   4097,    4100, 9000,          12289,
                                          70000, 65536, 200003, 1 << 20, 100,  (1 << 20) + 3, 8};
  striped_exchange(p, sizes, (1 << 20) + 4096, 1, [](std::size_t) {});
  // Receives exactly as large as the largest message: the last stream's tail starts at the end of
  // the buffer, an empty receive there.
  striped_exchange(p, {4097, 8193, 4097, 8193}, 8193, 2, [](std::size_t) {});
  // The same with eight in flight: tails are posted in the order their heads arrive.
  std::vector<std::size_t> many;
  for (int rep = 0; rep < 3; ++rep) many.insert(many.end(), sizes.begin(), sizes.end());
  striped_exchange(p, many, (1 << 20) + 4096, 8, [](std::size_t) {});
  INFO("sender: " << p.tx->stats().first_failover_why << "; receiver: " << p.rx->stats().first_failover_why);
  CHECK(p.tx->failovers() == 0);
  CHECK(p.rx->failovers() == 0);
}

TEST_CASE("a cut of the primary rail under striped messages fails every stream over and loses nothing",
          "[nccl][stripe][failover][threads]") {
  if (!striped_provider_usable()) return;
  StripedPair p = open_striped_pair(StripeLayout{3, 4096}, 65536);
  // Every message has bytes on all three streams; the cut comes with eight of them in flight.
  std::vector<std::size_t> sizes(48, 100 * 1024);
  for (std::size_t k = 0; k < sizes.size(); k += 5) sizes[k] = 300;  // small ones between
  striped_exchange(p, sizes, 128 * 1024, 8, [&](std::size_t k) {
    if (k == 12) p.tx->cut_primary();
  });
  // Each stream failed over once, at both ends.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (p.rx->failovers() < 3) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    p.tx->progress();
    p.rx->progress();
  }
  CHECK(p.tx->failovers() == 3);
  CHECK(p.rx->failovers() == 3);
  CHECK(p.tx->stats().replayed > 0);
  CHECK_FALSE(p.tx->failed());
  CHECK_FALSE(p.rx->failed());
}
