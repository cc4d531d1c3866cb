// What a cut rail leaves behind at the peer (issue 33). ofi_rxm (libfabric 1.17) keeps a message
// that arrived before a matching receive (an "unexpected" one: for a rendezvous message, only the
// request to read it) in its endpoint's queue, tied to the connection it came on, and does not
// purge that queue when the connection closes. A cut that closed the sender's endpoint made the
// receiver's rxm drop the connection under those messages; the next receive the receiver posted
// on that rail, before the sender's failover notice reached it, matched one and crashed inside
// libfabric (a NULL page of rxm's connection index, or the freed connection itself: glibc's
// "corrupted size vs. prev_size"). A cut now silences the endpoint, as a dead link does (no FIN
// or RST reaches the peer), and closes it with the connection.
//
// One rail, so no failover notice can reach the receiver first: the order that NCCL's proxy
// threads hit by chance (sendrecv_perf, 2 GPUs, one process) happens here every time, with each
// end driven by its own thread as there. Each case runs in a forked child: a crash inside
// libfabric must fail the case, not end the test binary. Before the fix the child died of SIGSEGV
// at the same instruction as the GPU run's (libfabric.so.1+0xb7a70) on every run.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "stream_fixture.hpp"
#include "support/fabric_providers.hpp"

using namespace railcheck;
using namespace railcheck::test;

namespace {

constexpr int kChildOk = 0;
constexpr int kChildFailed = 3;  // not 1: Catch2 in the child ends a fatal signal with 1
constexpr int kChildNoProvider = 77;
// Above rxm's 16 KiB eager limit: each message waits at the receiver as a rendezvous request.
constexpr std::size_t kMessage = 200000;
constexpr int kMessages = 3;

void pump_for(std::chrono::milliseconds d, FabricConnection& c) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) c.progress();
}

// Each end on its own thread, as NCCL's proxy threads drive the two ends of a connection between
// two GPUs of one process; the atomics only fix the order the crash needs.
int child(const char* provider) {
  if (!provider_here(provider)) return kChildNoProvider;
  Pair p = open_pair(loopback_options(provider, 1));
  std::vector<std::uint8_t> out(kMessage * kMessages, 0x5a);
  std::vector<std::uint8_t> in(kMessage, 0);
  std::atomic<bool> tx_ready{false}, rx_ready{false}, cut{false};
  std::atomic<int> failed{kChildOk};
  std::thread sender([&] {
    if (!pump([&] { p.tx->progress(); }, [&] { return p.tx->ready() && rx_ready.load(); })) {
      failed = kChildFailed;
      return;
    }
    tx_ready = true;
    auto mr = p.tx->register_memory(out.data(), out.size());
    if (!mr) {
      failed = kChildFailed;
      return;
    }
    for (int k = 0; k < kMessages; ++k)
      if (!p.tx->isend(out.data() + static_cast<std::size_t>(k) * kMessage, kMessage, 1, mr.value()))
        failed = kChildFailed;
    // The rendezvous requests go out; the receiver posts nothing yet, so they wait there, unexpected.
    pump_for(std::chrono::milliseconds(100), *p.tx);
    p.tx->cut_rail(PathIndex{0});
    cut = true;
  });
  std::thread receiver([&] {
    if (!pump([&] { p.rx->progress(); }, [&] { return p.rx->ready(); })) {
      failed = kChildFailed;
      return;
    }
    rx_ready = true;
    auto mr = p.rx->register_memory(in.data(), in.size());
    if (!mr) {
      failed = kChildFailed;
      return;
    }
    pump([&] { p.rx->progress(); }, [&] { return cut.load() || failed.load() != kChildOk; });
    // Long enough for rxm's connection manager (it runs at most every 10 ms) to see the cut.
    pump_for(std::chrono::milliseconds(100), *p.rx);
    void* data[1] = {in.data()};
    const std::size_t sizes[1] = {in.size()};
    const std::uint64_t tags[1] = {1};
    MemoryRegion* mrs[1] = {mr.value()};
    auto req = p.rx->irecv(data, sizes, tags, mrs);  // before the fix: SIGSEGV in libfabric here
    if (!req) {
      failed = kChildFailed;
      return;
    }
    // The silenced sender's provider is not progressed, so the receive should wait; whatever it
    // does, it must never land wrong bytes.
    pump_for(std::chrono::milliseconds(100), *p.rx);
    if (auto r = p.rx->test(req.value()); r && r->ok)
      for (std::size_t i = 0; i < r->sizes.at(0); ++i)
        if (in[i] != 0x5a) {
          std::fprintf(stderr, "cut_lifetime: byte %zu of a landed message is wrong\n", i);
          failed = kChildFailed;
          return;
        }
  });
  sender.join();
  receiver.join();
  return failed.load();
}

}  // namespace

TEST_CASE("two threads drive the two ends and a receive posted after the only rail was cut does not crash the provider",
          "[fabric][cut][threads]") {
  for (const char* prov : kLoopbackProviders) {
    DYNAMIC_SECTION(prov) {
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        ::alarm(60);
        std::_Exit(child(prov));
      }
      int status = 0;
      ::waitpid(pid, &status, 0);
      const bool exited = WIFEXITED(status);
      const int code = exited ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (code == kChildNoProvider) {
        WARN(prov << " is not usable here");
        continue;
      }
      INFO(prov << ": child " << (exited ? "exited with " : "killed by signal ") << (exited ? code : code - 128));
      CHECK(code == kChildOk);
    }
  }
}
