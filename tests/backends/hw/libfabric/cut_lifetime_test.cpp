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
// threads hit by chance (sendrecv_perf, 2 GPUs, one process) happens here every time. Each case
// runs in a forked child: a crash inside libfabric must fail the case, not end the test binary.
#include <sys/wait.h>
#include <unistd.h>

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
constexpr int kChildFailed = 1;
constexpr int kChildNoProvider = 77;
// Above rxm's 16 KiB eager limit: each message waits at the receiver as a rendezvous request.
constexpr std::size_t kMessage = 200000;
constexpr int kMessages = 3;

void pump_for(std::chrono::milliseconds d, FabricConnection& a, FabricConnection* b) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    a.progress();
    if (b != nullptr) b->progress();
  }
}

int child(const char* provider) {
  if (!provider_here(provider)) return kChildNoProvider;
  Pair p = open_pair(loopback_options(provider, 1));
  if (!pump([&] { p.tx->progress(), p.rx->progress(); }, [&] { return p.tx->ready() && p.rx->ready(); })) {
    std::fprintf(stderr, "cut_lifetime: the pair never became ready\n");
    return kChildFailed;
  }
  std::vector<std::uint8_t> out(kMessage * kMessages, 0x5a);
  std::vector<std::uint8_t> in(kMessage, 0);
  auto tx_mr = p.tx->register_memory(out.data(), out.size());
  auto rx_mr = p.rx->register_memory(in.data(), in.size());
  if (!tx_mr || !rx_mr) return kChildFailed;
  for (int k = 0; k < kMessages; ++k)
    if (!p.tx->isend(out.data() + static_cast<std::size_t>(k) * kMessage, kMessage, 1, tx_mr.value()))
      return kChildFailed;
  // The receiver posts nothing yet: the rendezvous requests arrive and wait, unexpected.
  pump_for(std::chrono::milliseconds(100), *p.tx, p.rx.get());
  p.tx->cut_rail(PathIndex{0});
  // The receiver's rxm notices whatever the cut did to the connection.
  pump_for(std::chrono::milliseconds(100), *p.rx, nullptr);
  void* data[1] = {in.data()};
  const std::size_t sizes[1] = {in.size()};
  const std::uint64_t tags[1] = {1};
  MemoryRegion* mrs[1] = {rx_mr.value()};
  auto req = p.rx->irecv(data, sizes, tags, mrs);
  if (!req) return kChildFailed;
  // Before the fix the process died in the irecv above. Now the receive may land (the silenced
  // sender's rxm is not progressed, so it should not) or wait; it must never land wrong bytes.
  pump_for(std::chrono::milliseconds(100), *p.rx, nullptr);
  if (auto r = p.rx->test(req.value()); r && r->ok) {
    for (std::size_t i = 0; i < r->sizes.at(0); ++i)
      if (in[i] != 0x5a) {
        std::fprintf(stderr, "cut_lifetime: byte %zu of a landed message is wrong\n", i);
        return kChildFailed;
      }
  }
  return kChildOk;
}

}  // namespace

TEST_CASE("a receive posted after the peer's only rail was cut does not crash in the provider", "[fabric][cut]") {
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
