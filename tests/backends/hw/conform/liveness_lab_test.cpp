// The rail-liveness detector on a real transport (issue 28 item 4): tcp;ofi_rxm over the netns
// lab's two veth rails, the detector's probes answered by the peer's kernel
// (backends/hw/libfabric/tcp_rail_probe.hpp). Two measurements, both pass/fail:
//   - rail 0's link taken down under a running stream: the detector (not the soft RTO, not an
//     error completion) starts the failover, and the first replayed message is delivered on the
//     standby within the 100 ms of the link going down;
//   - the receiving process stopped (SIGSTOP) for 200 ms mid-stream: no failover, because its
//     kernel keeps answering the probes while its process answers nothing.
// The detector's timing comes from the engine's defaults (HaTunables), never from this file.
// The lab runner (backends/hw/conform/lab_failover.hpp) forks each side, which enters its
// namespace before libfabric is touched; ctest runs every test case in its own process, so the
// parent has never initialised libfabric (which does not survive fork). docs/failover.md records
// the numbers these print.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "backends/hw/conform/lab_failover.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "netns_lab_fixture.hpp"

using namespace railcheck;
using namespace railcheck::test;

namespace {

constexpr const char* kProvider = "tcp;ofi_rxm";
#ifdef RAILCHECK_SANITIZE
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

double millis_between(long long from_ns, long long to_ns) { return static_cast<double>(to_ns - from_ns) / 1e6; }

// How long a side spent inside calls of 10 ms or more within [from, to] (CLOCK_MONOTONIC ns).
double held_ms(const conform::LabSideReport& side, long long from, long long to) {
  long long held = 0;
  for (const auto& [at, d] : side.stalls)
    if (d >= 10'000'000) held += std::max(0LL, std::min(at + d, to) - std::max(at, from));
  return static_cast<double>(held) / 1e6;
}

constexpr auto kFaultAt = std::chrono::milliseconds(100);

// A 1 KiB stream, window 16, the engine's defaults (the detector on, as shipped); the fault 100 ms
// into the stream (about 500 messages at this machine's rate).
conform::LabFailoverPlan plan_for(conform::LabFault fault) {
  conform::LabFailoverPlan p;
  p.provider = kProvider;
  p.spec.seed = 28;
  p.spec.messages = 10000;
  p.spec.fixed_size = 1024;
  p.spec.window = 16;
  p.spec.max_group = 1;  // one message per receive: its delivery is its request's completion
  p.tunables = HaTunables{};
  p.fault = std::move(fault);
  return p;
}

conform::LabFailoverResult run_lab(const conform::NetnsLab& lab, const conform::LabFailoverPlan& plan) {
  auto r = conform::run_lab_failover(lab, plan);
  REQUIRE(r.ok());
  INFO("sender: exit " << r->sender_exit << ", why '" << r->sender.why << "'; receiver: exit " << r->receiver_exit
                       << " (exit codes: fail_with calls in backends/hw/conform/lab_failover.cpp)");
  REQUIRE(r->sender_exit == 0);
  REQUIRE(r->receiver_exit == 0);
  return std::move(r).value();
}

bool provider_usable_in_lab(const conform::NetnsLab& lab) {
  auto usable = conform::provider_usable_in_lab(lab, kProvider);
  if (!usable) WARN(usable.error().message() << ": skipped");
  return usable.ok();
}

}  // namespace

TEST_CASE(
    "liveness lab: rail 0's link going down is found by the kernel-answered probe and the first replayed "
    "message lands on the standby within 100 ms",
    "[netns][liveness]") {
  auto lab = lab_or_skip();
  if (!lab || !provider_usable_in_lab(*lab)) return;
  const HaTunables t;
  REQUIRE(t.liveness);
  const auto run = run_lab(*lab, plan_for(conform::LabFault::link_down(kFaultAt)));
  const long long cut = run.fault_ns;
  const long long detected = run.detected_ns;
  const long long replayed = run.first_replayed_ns;
  INFO("sender's failover: " << run.sender.why);
  REQUIRE(cut > 0);
  REQUIRE(detected > 0);
  REQUIRE(replayed > 0);
  const double to_detect = millis_between(cut, detected);
  const double to_replayed = millis_between(cut, replayed);
  const bool realtime = run.realtime;
  // The sanitizer trees slow every call into the engine several times over: they check the
  // behaviour (the detector decides, delivery resumes), not the millisecond target.
  const bool timed = realtime && !kSanitized;
  // Printed for docs/failover.md ("The detector on real transports").
  std::printf(
      "liveness lab, link down (%s): detection %.1f ms, first replayed delivery %.1f ms after the cut "
      "(%.1f ms after detection); probes rail 0 %lld sent %lld answered; longest step %.1f ms (sender), "
      "%.1f ms (receiver)\n",
      realtime ? "SCHED_FIFO sides" : "normal priority", to_detect, to_replayed, to_replayed - to_detect,
      run.sender.get("probes0"), run.sender.get("answered0"), run.sender.get("longest_step_ns") / 1e6,
      run.receiver.get("longest_step_ns") / 1e6);
  // Side b made the fault itself: when its ioctl began and returned are both known, the fault's
  // instant is the return and the call's length is the window a lab time is judged within.
  REQUIRE(run.action_begun_ns.size() == 1);
  CHECK(run.action_begun_ns[0] > 0);
  CHECK(run.action_begun_ns[0] <= run.action_ns[0]);
  CHECK(run.action_ns[0] == cut);
  CHECK(run.fault_window_ns() == cut - run.action_begun_ns[0]);
  // Where a side was held up (calls of 10 ms or more), relative to the cut: printed, to tell a
  // late detection caused by a blocked side from one the detector made.
  for (const auto* side : {&run.sender, &run.receiver})
    for (const auto& [at, d] : side->stalls)
      if (d >= 10'000'000)
        std::printf("  %s held %.1f ms from %+.1f ms (the ioctl that cut the link: %+.1f to 0 ms)\n",
                    side == &run.sender ? "sender" : "receiver", d / 1e6, millis_between(cut, at),
                    -millis_between(run.action_begun_ns[0], cut));
  CHECK(run.sender.get("liveness") == 1);
  CHECK(run.sender.get("failovers") == 1);
  CHECK(run.receiver.get("active") == 1);
  // The detector decided: not the soft RTO (1 s and more), not an error completion.
  CHECK_THAT(run.sender.why, Catch::StartsWith("rail liveness"));
  CHECK(run.sender.get("probes0") >= t.liveness_misses);
  CHECK(to_detect >= 0);
  CHECK(to_replayed > to_detect);
  if (timed) {
    // A silent rail is dead (misses + 1) probe timeouts after its last sign of life
    // (rail_liveness.hpp); the timeout sits at its floor on a veth whose round trip is ~0.1 ms.
    // 30 ms more: the sender's last data completion may come up to a few ms after the cut, and
    // two processes on a loaded two-core machine. Plus the time a side was held inside one call
    // (10 ms or more, recorded by the side itself): on a 2-core machine with builds beside them
    // both SCHED_FIFO sides were seen held ~70 ms at a time, before the cut as after it, the
    // detector's own account unchanged ("no sign of life for 20.4 ms"): the machine's time, not
    // the engine's (docs/validation.md).
    const double sender_held = held_ms(run.sender, cut, detected);
    const double either_held = std::max(held_ms(run.sender, cut, replayed), held_ms(run.receiver, cut, replayed));
    INFO("held inside calls: sender " << sender_held << " ms before detection, up to " << either_held
                                      << " ms before the first replayed delivery");
    CHECK(to_detect < to_millis((t.liveness_misses + 1) * t.liveness_floor) + 30.0 + sender_held);
    CHECK(to_replayed < 100.0 + either_held);  // issue 28's target, from the link going down
  } else {
    // Normal priority on a loaded machine: each side may wait 100 ms for a core, several times.
    // Still far inside the soft RTO that found this failure before the detector (1074 ms).
    WARN((kSanitized ? "a sanitizer build" : "the lab's sides could not run SCHED_FIFO")
         << ": only the generous bounds are checked");
    CHECK(to_replayed < to_millis(t.initial_soft_rto()) / 2);
  }
}

TEST_CASE(
    "liveness lab: the receiving process stopped for 200 ms causes no failover because its kernel answers the "
    "probes",
    "[netns][liveness]") {
  auto lab = lab_or_skip();
  if (!lab || !provider_usable_in_lab(*lab)) return;
  const auto run = run_lab(*lab, plan_for(conform::LabFault::stop_receiver(kFaultAt, std::chrono::milliseconds(200))));
  std::printf("liveness lab, receiver stopped %.1f ms: %lld failovers; probes rail 0 %lld sent %lld answered\n",
              run.stopped_ms, run.sender.get("failovers"), run.sender.get("probes0"), run.sender.get("answered0"));
  INFO("sender's failover, if any: " << run.sender.why);
  CHECK(run.stopped_ms >= 200.0);
  CHECK(run.sender.get("liveness") == 1);
  CHECK(run.sender.get("failovers") == 0);
  CHECK(run.receiver.get("failovers") == 0);
  CHECK(run.sender.get("failover_ns") == -1);
  // The stop really stalled the stream and the detector really probed through it: a 200 ms stall
  // is many probe timeouts, each one probe, and the stopped peer's kernel answered them.
  CHECK(run.sender.get("probes0") >= HaTunables{}.liveness_misses);
  CHECK(run.sender.get("answered0") >= HaTunables{}.liveness_misses);
}
