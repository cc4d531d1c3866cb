// NetComm, the plugin's comm, driven directly over a FabricConnection pair on tcp;ofi_rxm
// loopback: what one NCCL test() call costs in progress calls (issue 42, docs/nccl-plugin.md,
// "Where a small message's time goes").
#include "backends/hw/nccl/net_comm.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "backends/hw/libfabric/provider_query.hpp"
#include "backends/hw/nccl/background_progress.hpp"

using namespace railcheck;
using namespace railcheck::nccl;

namespace {

constexpr const char* kProvider = "tcp;ofi_rxm";  // the provider of issue 42 (delivery acks on)

// A send comm and a receive comm connected to each other, with a registered buffer each. The raw
// connection pointers stay valid: each NetComm owns its connection for the fixture's life.
struct CommPair {
  FabricConnection* tx_conn = nullptr;
  FabricConnection* rx_conn = nullptr;
  std::unique_ptr<NetComm> tx, rx;
  std::vector<std::uint8_t> out = std::vector<std::uint8_t>(64, 0x5a), in = std::vector<std::uint8_t>(64, 0);
  void* smh = nullptr;
  void* rmh = nullptr;
};

std::unique_ptr<CommPair> open_comms(std::size_t staged_bytes = 0, std::optional<FaultPlan> fault = std::nullopt) {
  FabricOptions o;
  o.staged_send_bytes = staged_bytes;
  o.staged_send_slots = 8;
  o.provider = kProvider;
  o.rails = 2;
  o.rail_addresses.assign(2, "127.0.0.1");
  o.tunables.soft_rto = std::chrono::milliseconds(2000);  // CI's two shared cores: no false alarms
  o.tunables.control_timeout = std::chrono::milliseconds(3000);
  std::vector<std::uint8_t> handle;
  auto rx = StripedConnection::listen(o, StripeLayout{}, handle);
  REQUIRE(rx.ok());
  auto tx = StripedConnection::connect(o, handle);
  REQUIRE(tx.ok());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(tx.value()->ready() && rx.value()->ready())) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    tx.value()->progress();
    rx.value()->progress();
  }
  auto p = std::make_unique<CommPair>();
  p->tx_conn = &tx.value()->head_stream();
  p->rx_conn = &rx.value()->head_stream();
  p->tx = std::make_unique<NetComm>(CommSide::Send, 1, std::move(tx).value(), 32, 8, false, fault);
  p->rx = std::make_unique<NetComm>(CommSide::Recv, 2, std::move(rx).value(), 32, 8, false, std::nullopt);
  REQUIRE(p->tx->reg_mr(p->out.data(), p->out.size(), nccl_abi::kPtrHost, &p->smh) == nccl_abi::kSuccess);
  REQUIRE(p->rx->reg_mr(p->in.data(), p->in.size(), nccl_abi::kPtrHost, &p->rmh) == nccl_abi::kSuccess);
  return p;
}

NetRequest* post_send(CommPair& p) {
  void* req = nullptr;
  REQUIRE(p.tx->isend(p.out.data(), p.out.size(), 0, p.smh, &req) == nccl_abi::kSuccess);
  REQUIRE(req != nullptr);
  return static_cast<NetRequest*>(req);
}

NetRequest* post_recv(CommPair& p) {
  void* data[1] = {p.in.data()};
  const std::size_t sizes[1] = {p.in.size()};
  const int tags[1] = {0};
  void* mhs[1] = {p.rmh};
  void* req = nullptr;
  REQUIRE(p.rx->irecv(1, data, sizes, tags, mhs, &req) == nccl_abi::kSuccess);
  REQUIRE(req != nullptr);
  return static_cast<NetRequest*>(req);
}

// One test() call: whether it reported done, and how many progress calls it made.
struct TestCall {
  bool done = false;
  std::uint64_t progress_calls = 0;
};

TestCall test_once(NetComm& comm, FabricConnection& conn, NetRequest& req) {
  const std::uint64_t before = conn.stats().progress_calls;
  int done = 0;
  int sizes[1] = {-1};
  REQUIRE(comm.test(req, &done, sizes) == nccl_abi::kSuccess);
  return {done == 1, conn.stats().progress_calls - before};
}

// test() until done; every call of it checked to make at most one progress call.
void test_until_done(NetComm& comm, FabricConnection& conn, NetRequest& req) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    const TestCall t = test_once(comm, conn, req);
    CHECK(t.progress_calls <= 1);
    if (t.done) return;
    REQUIRE(std::chrono::steady_clock::now() < until);
  }
}

}  // namespace

TEST_CASE("a plugin test() progresses its connection once for an unfinished request and not at all for a finished one",
          "[nccl][comm]") {
  if (auto ok = fabric::query_provider(kProvider, "127.0.0.1"); !ok) {
    WARN("provider " << kProvider << " is not usable here: " << ok.error().message());
    return;
  }
  auto p = open_comms();
  // Nothing posted at the receiver yet: the send cannot finish, and each test is one progress.
  NetRequest* first = post_send(*p);
  for (int i = 0; i < 3; ++i) {
    const TestCall t = test_once(*p->tx, *p->tx_conn, *first);
    CHECK_FALSE(t.done);
    CHECK(t.progress_calls == 1);
  }
  test_until_done(*p->rx, *p->rx_conn, *post_recv(*p));
  test_until_done(*p->tx, *p->tx_conn, *first);

  // Two messages delivered and acknowledged, the sender's connection progressed until it has
  // read everything (as another test() of the comm would have): both sends are reported done
  // without a progress call.
  NetRequest* r1 = post_recv(*p);
  NetRequest* r2 = post_recv(*p);
  NetRequest* s1 = post_send(*p);
  NetRequest* s2 = post_send(*p);
  test_until_done(*p->rx, *p->rx_conn, *r1);
  test_until_done(*p->rx, *p->rx_conn, *r2);
  const auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < settle) p->tx_conn->progress();
  for (NetRequest* s : {s1, s2}) {
    const TestCall t = test_once(*p->tx, *p->tx_conn, *s);
    CHECK(t.done);
    CHECK(t.progress_calls == 0);
  }
}

TEST_CASE("a staged send NCCL stopped testing is replayed by the background thread when its rail dies",
          "[nccl][comm][staging][threads]") {
  if (auto ok = fabric::query_provider(kProvider, "127.0.0.1"); !ok) {
    WARN("provider " << kProvider << " is not usable here: " << ok.error().message());
    return;
  }
  // The fault clock cuts the primary 1.5 s after the comm became ready, inside a poll(): with the
  // test calling neither comm by then, only the background thread can run it, and the failover
  // and replay after it. (1.5 s, not less: under TSan on a loaded 2-core machine the steps before
  // the check below took over 300 ms.)
  constexpr int kCutAfterMs = 1500;
  auto p = open_comms(4096, FaultPlan{FaultTrigger::AfterMillis, kCutAfterMs, 0});
  for (std::size_t i = 0; i < p->out.size(); ++i) p->out[i] = static_cast<std::uint8_t>(i + 1);
  NetRequest* send = post_send(*p);
  // Done on the local completion (the receiver never ran); then NCCL reuses the buffer.
  test_until_done(*p->tx, *p->tx_conn, *send);
  std::fill(p->out.begin(), p->out.end(), std::uint8_t{0xee});
  {
    const ConnectionStats st = p->tx_conn->stats();
    REQUIRE(st.staged_early == 1);
    REQUIRE_FALSE(st.rails.at(0).cut);  // not cut yet: the test ran faster than the fault clock
    REQUIRE(p->tx_conn->unacknowledged_sends() == 1);
  }
  BackgroundProgress background(std::chrono::microseconds(1000));
  background.add(p->tx.get());  // the send comm only: the receiver stays silent until the cut
  std::this_thread::sleep_for(std::chrono::milliseconds(kCutAfterMs + 300));
  NetRequest* recv = post_recv(*p);
  test_until_done(*p->rx, *p->rx_conn, *recv);
  for (std::size_t i = 0; i < p->in.size(); ++i) REQUIRE(p->in[i] == static_cast<std::uint8_t>(i + 1));
  // The ack of the replay reaches the sender through the thread as well.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    bool acked = false;
    {
      // The test reads the connection only with the comm out of the thread's reach.
      background.remove(p->tx.get());
      acked = p->tx_conn->unacknowledged_sends() == 0;
      if (!acked) background.add(p->tx.get());
    }
    if (acked) break;
    REQUIRE(std::chrono::steady_clock::now() < until);
    p->rx_conn->progress();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const ConnectionStats st = p->tx_conn->stats();
  CHECK(st.rails.at(0).cut);
  CHECK(st.failovers >= 1);
  CHECK(background.progressed() > 0);
}
