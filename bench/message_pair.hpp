#pragma once
// The message-rate and latency loop the transport benches share, and the bare FabricConnection
// pair they measure. A "pair" is one sender and one receiver driven from one thread:
//   post_send() / post_recv()   one request each (false: refused)
//   reap()                      progress both sides, count finished requests in posting order
//                               (false: a request failed)
//   sent, received, sends_in_flight(), recvs_in_flight()
// measure() runs, on one pair:
//   warm-up   `kWarmup` messages one at a time, untimed;
//   rate      `messages` with up to `window` sends and as many receives posted; messages/s
//             until all completed at both ends;
//   latency   `pings` one at a time, isend to the sender's completion (what NCCL waits for
//             before it reuses a buffer), mean.
// With Load::check every latency message carries its own byte (the message's index) in every
// byte, is waited for at the receiver too, and is compared byte by byte: the first wrong byte is
// the run's error (CI runs it so, ctest nccl_plugin_overhead_check; a timed run leaves it off, as
// it adds the receiver's completion to each message). A pair also gives src() and dst().
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "backends/hw/libfabric/fabric_connection.hpp"

namespace railcheck::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Load {
  std::size_t size;
  std::uint64_t messages;  // rate run
  std::uint32_t window;
  std::uint64_t pings;  // latency run
  bool check = false;   // verify every latency message's bytes at the receiver
};

struct Figures {
  double msgs_per_s = 0;
  double lat_us = 0;
  std::string error;
};

inline constexpr std::uint64_t kWarmup = 32;

template <class Pair>
Figures measure(Pair& p, const Load& l) {
  // `count` messages, each waited for at the sender before the next (its receive posted first).
  std::string wrong;
  auto one_at_a_time = [&](std::uint64_t count) -> bool {
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t want = p.sent + 1;
      const auto stamp = static_cast<std::uint8_t>(p.sent);
      if (l.check) std::fill(p.src().begin(), p.src().end(), stamp);
      if (!p.post_recv() || !p.post_send()) return false;
      while (p.sent < want)
        if (!p.reap()) return false;
      if (!l.check) continue;
      // The sender may be done before the receiver (a staged send): NCCL may now reuse its buffer.
      std::fill(p.src().begin(), p.src().end(), static_cast<std::uint8_t>(~stamp));
      while (p.recvs_in_flight() > 0)
        if (!p.reap()) return false;
      for (std::size_t b = 0; b < l.size; ++b)
        if (p.dst()[b] != stamp) {
          wrong = "message " + std::to_string(want) + " byte " + std::to_string(b) + ": received " +
                  std::to_string(p.dst()[b]) + ", sent " + std::to_string(stamp);
          return false;
        }
    }
    // Receives of the last messages may still be completing: not part of the next phase.
    while (p.recvs_in_flight() > 0)
      if (!p.reap()) return false;
    return true;
  };
  if (!one_at_a_time(kWarmup)) return {0, 0, wrong.empty() ? "warm-up failed" : wrong};
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
  if (!one_at_a_time(l.pings)) return {0, 0, wrong.empty() ? "latency run failed" : wrong};
  f.lat_us = seconds_since(t1) * 1e6 / static_cast<double>(l.pings);
  return f;
}

// One FabricConnection sender/receiver pair on loopback, two rails, and its requests in flight.
class FabricPair {
 public:
  Result<bool> open(FabricOptions o, std::size_t size) {
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
  std::vector<std::uint8_t>& src() { return src_; }
  const std::vector<std::uint8_t>& dst() const { return dst_; }

  std::uint64_t sent = 0, received = 0;

 private:
  std::unique_ptr<FabricConnection> rx_, tx_;
  std::vector<std::uint8_t> src_, dst_;
  std::size_t size_ = 0;
  MemoryRegion* smr_ = nullptr;
  MemoryRegion* dmr_ = nullptr;
  std::deque<RequestId> sends_, recvs_;
};

}  // namespace railcheck::bench
