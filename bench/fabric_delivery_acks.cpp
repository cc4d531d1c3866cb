// What the delivery acks cost (docs/hardware.md, "RC completion semantics"). On tcp;ofi_rxm a
// send's success waits for the receiver's acknowledgement of the message, as on RC for the ACK;
// without it a failover can lose messages the sender saw complete. Same FabricConnection pair,
// same messages, acks on and off, side by side in one run:
//   rate:     `window` sends and as many receives kept posted; messages/s until all completed
//             at both ends
//   latency:  one message at a time, isend to the sender's completion (what NCCL waits for
//             before it reuses a buffer), mean
// Both connections live in this process on loopback, driven from one thread, so each figure
// includes the other side's polling. Each run starts with 32 untimed messages.
//   build/bench/fabric_delivery_acks [--quick]
#include <fmt/format.h>
#include <rdma/fabric.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "bench/machine_line.hpp"

using namespace railcheck;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kWarmup = 32;
const std::string kProvider = "tcp;ofi_rxm";

struct Load {
  std::size_t size;
  std::uint64_t messages;  // rate run
  std::uint32_t window;
  std::uint64_t pings;  // latency run
};

struct Figures {
  double msgs_per_s = 0;
  double lat_us = 0;
  std::string error;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One sender/receiver pair and the requests in flight on it.
class Pair {
 public:
  Result<bool> open(bool acks, std::size_t size) {
    FabricOptions o;
    o.provider = kProvider;
    o.rails = 2;
    o.rail_addresses.assign(2, "127.0.0.1");
    o.delivery_acks = acks;
    std::vector<std::uint8_t> handle;
    auto rx = FabricConnection::listen(o, handle);
    if (!rx) return rx.error();
    auto tx = FabricConnection::connect(o, handle);
    if (!tx) return tx.error();
    rx_ = std::move(rx).value();
    tx_ = std::move(tx).value();
    const auto t0 = Clock::now();
    while (!(tx_->ready() && rx_->ready())) {
      tx_->progress();
      rx_->progress();
      if (seconds_since(t0) > 30) return Error{"the connection never became ready", ""};
    }
    src_.assign(std::max<std::size_t>(size, 1), 0x5a);
    dst_.assign(std::max<std::size_t>(size, 1), 0);
    size_ = size;
    auto s = tx_->register_memory(src_.data(), src_.size());
    auto d = rx_->register_memory(dst_.data(), dst_.size());
    if (!s || !d) return Error{"register_memory failed", ""};
    smr_ = s.value();
    dmr_ = d.value();
    return true;
  }

  bool post_send() {
    auto id = tx_->isend(src_.data(), size_, 0, smr_);
    if (!id) return false;
    sends_.push_back(id.value());
    return true;
  }
  bool post_recv() {
    void* data[] = {dst_.data()};
    const std::size_t sizes[] = {dst_.size()};
    const std::uint64_t tags[] = {0};
    MemoryRegion* mrs[] = {dmr_};
    auto id = rx_->irecv(data, sizes, tags, mrs);
    if (!id) return false;
    recvs_.push_back(id.value());
    return true;
  }
  // Progress both sides; count finished requests in order. False when one failed.
  bool reap() {
    tx_->progress();
    rx_->progress();
    while (!sends_.empty()) {
      auto r = tx_->test(sends_.front());
      if (!r) break;
      if (!r->ok) return false;
      sends_.pop_front();
      ++sent;
    }
    while (!recvs_.empty()) {
      auto r = rx_->test(recvs_.front());
      if (!r) break;
      if (!r->ok) return false;
      recvs_.pop_front();
      ++received;
    }
    return true;
  }
  std::size_t sends_in_flight() const { return sends_.size(); }
  std::size_t recvs_in_flight() const { return recvs_.size(); }

  std::uint64_t sent = 0, received = 0;

 private:
  std::unique_ptr<FabricConnection> rx_, tx_;
  std::vector<std::uint8_t> src_, dst_;
  std::size_t size_ = 0;
  MemoryRegion* smr_ = nullptr;
  MemoryRegion* dmr_ = nullptr;
  std::deque<RequestId> sends_, recvs_;
};

Figures run(bool acks, const Load& l) {
  Pair p;
  if (auto ok = p.open(acks, l.size); !ok) return {0, 0, ok.error().message()};
  // `count` messages, each waited for at the sender before the next (its receive posted first).
  auto one_at_a_time = [&](std::uint64_t count) -> bool {
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t want = p.sent + 1;
      if (!p.post_recv() || !p.post_send()) return false;
      while (p.sent < want)
        if (!p.reap()) return false;
    }
    // Receives of the last messages may still be completing: not part of the next phase.
    while (p.recvs_in_flight() > 0)
      if (!p.reap()) return false;
    return true;
  };
  if (!one_at_a_time(kWarmup)) return {0, 0, "warm-up failed"};
  const std::uint64_t base_sent = p.sent, base_received = p.received;
  const auto t0 = Clock::now();
  std::uint64_t posted = 0;
  while (p.sent - base_sent < l.messages || p.received - base_received < l.messages) {
    while (posted < l.messages && p.sends_in_flight() < l.window && p.recvs_in_flight() < l.window) {
      if (!p.post_recv() || !p.post_send()) return {0, 0, "a post was refused"};
      ++posted;
    }
    if (!p.reap()) return {0, 0, "a request failed"};
    if (seconds_since(t0) > 120) return {0, 0, "rate run timed out"};
  }
  Figures f;
  f.msgs_per_s = static_cast<double>(l.messages) / seconds_since(t0);
  const auto t1 = Clock::now();
  if (!one_at_a_time(l.pings)) return {0, 0, "latency run failed"};
  f.lat_us = seconds_since(t1) * 1e6 / static_cast<double>(l.pings);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  fmt::print("fabric_delivery_acks: {} | libfabric {}.{} | {}\n", bench::machine_summary(), FI_MAJOR(fi_version()),
             FI_MINOR(fi_version()), kProvider);
  fmt::print("both connections in one process on loopback, one thread; latency = isend to the sender's completion\n\n");
  if (auto ok = fabric::query_provider(kProvider, "127.0.0.1"); !ok) {
    fmt::print("{} is not usable here: {}\n", kProvider, ok.error().message());
    return 1;
  }
  const std::uint64_t q = quick ? 10 : 1;
  const std::vector<Load> loads = {
      {64, 20000 / q, 64, 2000 / q},
      {4096, 10000 / q, 64, 1000 / q},
      {64 << 10, 2000 / q, 16, 500 / q},
  };
  fmt::print(
      "| size | msgs/s, no acks | msgs/s, acks | acks/none | lat us, no acks | lat us, acks | acks/none |\n"
      "|---|---|---|---|---|---|---|\n");
  int rc = 0;
  for (const Load& l : loads) {
    const Figures off = run(false, l);
    const Figures on = run(true, l);
    const std::string label = l.size >= 1024 ? fmt::format("{} KiB", l.size >> 10) : fmt::format("{} B", l.size);
    if (!off.error.empty() || !on.error.empty()) {
      fmt::print("| {} | failed: {} {} |\n", label, off.error, on.error);
      rc = 1;
      continue;
    }
    fmt::print("| {} | {:.0f} | {:.0f} | {:.2f} | {:.1f} | {:.1f} | {:.2f} |\n", label, off.msgs_per_s, on.msgs_per_s,
               on.msgs_per_s / off.msgs_per_s, off.lat_us, on.lat_us, on.lat_us / off.lat_us);
    std::fflush(stdout);
  }
  return rc;
}
