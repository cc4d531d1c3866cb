// The rail-liveness detector on a real transport (issue 28 item 4): tcp;ofi_rxm over the netns
// lab's two veth rails, the detector's probes answered by the peer's kernel
// (backends/hw/libfabric/tcp_rail_probe.hpp). Two measurements, both pass/fail:
//   - rail 0's link taken down under a running stream: the detector (not the soft RTO, not an
//     error completion) starts the failover, and the first replayed message is delivered on the
//     standby within the 100 ms of the link going down;
//   - the receiving process stopped (SIGSTOP) for 200 ms mid-stream: no failover, because its
//     kernel keeps answering the probes while its process answers nothing.
// The detector's timing comes from the engine's defaults (HaTunables), never from this file.
// Each side runs in a forked child that enters its namespace before libfabric is touched; ctest
// runs every test case in its own process, so the parent has never initialised libfabric (which
// does not survive fork). docs/failover.md records the numbers these print.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "backends/hw/conform/message_stream.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "netns_lab_fixture.hpp"

using namespace railcheck;
using namespace railcheck::test;

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kProvider = "tcp;ofi_rxm";
#ifdef RAILCHECK_SANITIZE
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// steady_clock is CLOCK_MONOTONIC: one clock for every process on the host, namespaces or not,
// so the two sides' instants compare directly.
long long stamp(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

double millis_between(long long from_ns, long long to_ns) { return static_cast<double>(to_ns - from_ns) / 1e6; }

enum class Fault { LinkDown, StopReceiver };

struct LabPlan {
  Fault fault = Fault::LinkDown;
  conform::StreamSpec spec;
  std::uint64_t fault_after = 0;  // messages verified before the fault
};

LabPlan plan_for(Fault f) {
  LabPlan p;
  p.fault = f;
  p.spec.seed = 28;
  p.spec.messages = 10000;
  p.spec.fixed_size = 1024;
  p.spec.window = 16;
  p.spec.max_group = 1;  // one message per receive: its delivery is its request's completion
  p.fault_after = 500;
  return p;
}

FabricOptions options_for(const conform::NetnsSide& side) {
  FabricOptions o;
  o.provider = kProvider;
  o.rails = 2;
  o.rail_addresses = {side.rails[0].address, side.rails[1].address};
  o.tunables = HaTunables{};  // the engine's defaults: the detector on, as shipped
  return o;
}

bool write_line(int fd, const std::string& line) {
  const std::string l = line + "\n";
  return write(fd, l.data(), l.size()) == static_cast<ssize_t>(l.size());
}

// One line from `fd` within `wait_ms`, or empty.
std::string read_line(int fd, int wait_ms) {
  std::string line;
  const auto until = Clock::now() + std::chrono::milliseconds(wait_ms);
  char ch = 0;
  while (Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) != 1) continue;
    if (read(fd, &ch, 1) != 1) break;
    if (ch == '\n') return line;
    line.push_back(ch);
  }
  return {};
}

// Scheduling. On this project's CI machine (2 vCPUs, HZ=100, load ~9 from parallel builds) a
// busy-polling process at normal priority waits 40-120 ms for a core now and then (measured
// 2026-11-26, at nice -10 as well), and every hop of the failover exchange pays it: no detector
// can beat that, and the lab would measure the build, not the transport. NCCL's proxy thread
// polls on a core of its own; the nearest a test gets to that is SCHED_FIFO with a 20 us nap per
// loop, which leaves the rest of the machine running (no RT throttling) and keeps the scheduler's
// share of a side's stall under a millisecond (0.6 ms measured). The stalls that remain (fi_cq_read
// calls of 9-10 ms) are the provider's: docs/failover.md, "Real transports". Without
// the privilege the lab runs at normal priority and asserts only the generous bounds.
constexpr auto kProxyNap = std::chrono::microseconds(20);

bool run_like_a_proxy_thread() {
  sched_param p{};
  p.sched_priority = 1;
  return sched_setscheduler(0, SCHED_FIFO, &p) == 0;
}

void nap_if_realtime(bool realtime) {
  if (realtime) std::this_thread::sleep_for(kProxyNap);
}

// Side b: listens, hands its handle to side a, receives and verifies. At `fault_after` verified
// messages it takes rail 0's link down itself (LinkDown) or tells the parent to stop it
// (StopReceiver). Reports: when the fault began, and when the first message after its engine
// switched to the standby (the first replayed one) was delivered.
int receive_side(const conform::NetnsSide& b, const LabPlan& plan, int handle_fd, int mark_fd, int stop_fd,
                 int report_fd) {
  if (auto in = conform::enter_netns(b.netns); !in) return fail_with(10, in.error().message());
  const bool realtime = run_like_a_proxy_thread();
  std::vector<std::uint8_t> handle;
  auto c = FabricConnection::listen(options_for(b), handle);
  if (!c) return fail_with(11, "listen: " + c.error().message());
  if (write(handle_fd, handle.data(), handle.size()) != static_cast<ssize_t>(handle.size()))
    return fail_with(12, "writing the handle");
  FabricConnection& conn = *c.value();
  conform::StreamReceiver rx(conn, plan.spec);
  long long fault_ns = -1;
  long long first_replayed_ns = -1;
  std::uint64_t seen = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(15);
  long long longest_step_ns = 0;  // after the fault: how long one call into the provider can take
  while (!rx.done()) {
    const auto before = Clock::now();
    if (!rx.step()) return fail_with(13, "receiver: " + rx.error());
    if (fault_ns >= 0) longest_step_ns = std::max(longest_step_ns, stamp(Clock::now()) - stamp(before));
    nap_if_realtime(realtime);
    if (Clock::now() > give_up) return fail_with(14, "receiver: the stream stalled at " + std::to_string(seen));
    if (rx.verified() == seen) continue;
    seen = rx.verified();
    if (first_replayed_ns < 0 && conn.failovers() > 0) first_replayed_ns = stamp(Clock::now());
    if (fault_ns < 0 && seen >= plan.fault_after) {
      fault_ns = stamp(Clock::now());
      if (plan.fault == Fault::LinkDown) {
        if (auto down = conform::set_link_up(b.rails[0].if_name, false); !down)
          return fail_with(15, down.error().message());
      }
      (void)write_line(mark_fd, "fault");
    }
  }
  // The sender still waits for the acknowledgements of the last messages: progress until the
  // parent says it finished.
  for (pollfd p{stop_fd, POLLIN, 0}; poll(&p, 1, 0) == 0 && Clock::now() < give_up;) {
    conn.progress();
    nap_if_realtime(realtime);
  }
  const ConnectionStats st = conn.stats();
  std::ostringstream line;
  line << "fault_ns " << fault_ns << " first_replayed_ns " << first_replayed_ns << " failovers " << st.failovers
       << " active " << st.active_rail << " longest_step_ns " << longest_step_ns << " realtime " << realtime;
  return write_line(report_fd, line.str()) ? 0 : fail_with(16, "writing the report");
}

// Side a: connects with b's handle and sends; reports the first failover (when, and what started
// it) and the probes per rail.
int send_side(const conform::NetnsSide& a, const LabPlan& plan, int handle_fd, int report_fd) {
  if (auto in = conform::enter_netns(a.netns); !in) return fail_with(20, in.error().message());
  const bool realtime = run_like_a_proxy_thread();
  std::vector<std::uint8_t> handle(256);
  pollfd p{handle_fd, POLLIN, 0};
  if (poll(&p, 1, 10000) != 1) return fail_with(21, "no handle from side b");
  const ssize_t n = read(handle_fd, handle.data(), handle.size());
  if (n <= 0) return fail_with(21, "no handle from side b");
  handle.resize(static_cast<std::size_t>(n));
  auto c = FabricConnection::connect(options_for(a), handle);
  if (!c) return fail_with(22, "connect: " + c.error().message());
  FabricConnection& conn = *c.value();
  conform::StreamSender tx(conn, plan.spec);
  const auto give_up = Clock::now() + std::chrono::seconds(15);
  long long longest_step_ns = 0;  // until the first failover: one call into the provider at most
  while (!tx.done()) {
    const auto before = Clock::now();
    if (!tx.step()) return fail_with(23, "sender: " + tx.error());
    if (conn.failovers() == 0) longest_step_ns = std::max(longest_step_ns, stamp(Clock::now()) - stamp(before));
    nap_if_realtime(realtime);
    if (Clock::now() > give_up) return fail_with(24, "sender: the stream stalled at " + std::to_string(tx.completed()));
  }
  const ConnectionStats st = conn.stats();
  std::ostringstream line;
  line << "longest_step_ns " << longest_step_ns << " realtime " << realtime << " failovers " << st.failovers
       << " liveness " << st.liveness << " failover_ns "
       << (st.first_failover_at ? stamp(*st.first_failover_at) : -1LL);
  for (std::size_t r = 0; r < st.rails.size(); ++r)
    line << " probes" << r << " " << st.rails[r].probes_sent << " answered" << r << " " << st.rails[r].probes_answered;
  line << " why " << st.first_failover_why;
  return write_line(report_fd, line.str()) ? 0 : fail_with(25, "writing the report");
}

// "key value key value ... why <rest of line>".
struct Report {
  std::map<std::string, long long> values;
  std::string why;
  long long at(const std::string& k) const {
    auto it = values.find(k);
    if (it == values.end()) FAIL("the report has no '" << k << "'");
    return it->second;
  }
};

Report parse(const std::string& line) {
  Report r;
  std::istringstream in(line);
  std::string key;
  while (in >> key) {
    if (key == "why") {
      std::getline(in >> std::ws, r.why);
      break;
    }
    long long v = 0;
    in >> v;
    r.values[key] = v;
  }
  return r;
}

struct LabRun {
  int sender_exit = -1;
  int receiver_exit = -1;
  double stopped_ms = 0;  // StopReceiver: how long side b really stayed stopped
  Report sender;
  Report receiver;
};

// Runs one stream between the lab's sides with `plan`'s fault; StopReceiver: the parent stops
// side b for `stop` when it reports the fault point.
LabRun run_lab(const conform::NetnsLab& lab, const LabPlan& plan, std::chrono::milliseconds stop) {
  int handle_pipe[2], mark_pipe[2], stop_pipe[2], rx_report[2], tx_report[2];
  for (int* p : {handle_pipe, mark_pipe, stop_pipe, rx_report, tx_report}) REQUIRE(pipe2(p, O_CLOEXEC) == 0);
  const pid_t rx = fork_child(
      [&] { return receive_side(lab.side(1), plan, handle_pipe[1], mark_pipe[1], stop_pipe[0], rx_report[1]); });
  const pid_t tx = fork_child([&] { return send_side(lab.side(0), plan, handle_pipe[0], tx_report[1]); });
  for (int fd : {handle_pipe[0], handle_pipe[1], mark_pipe[1], stop_pipe[0], rx_report[1], tx_report[1]}) close(fd);
  double stopped_ms = 0;
  if (plan.fault == Fault::StopReceiver && read_line(mark_pipe[0], 15000) == "fault") {
    const auto stopped = Clock::now();
    kill(rx, SIGSTOP);
    std::this_thread::sleep_for(stop);
    kill(rx, SIGCONT);
    stopped_ms = std::chrono::duration<double, std::milli>(Clock::now() - stopped).count();
  }
  LabRun run;
  run.stopped_ms = stopped_ms;
  const std::string tx_line = read_line(tx_report[0], 20000);
  run.sender_exit = wait_child(tx);
  (void)write_line(stop_pipe[1], "stop");  // side b may stop progressing now (it holds a write end too)
  close(stop_pipe[1]);
  const std::string rx_line = read_line(rx_report[0], 5000);
  run.receiver_exit = wait_child(rx);
  for (int fd : {mark_pipe[0], rx_report[0], tx_report[0]}) close(fd);
  std::printf("sender: %s\nreceiver: %s\n", tx_line.c_str(), rx_line.c_str());
  INFO("sender: exit " << run.sender_exit << ", '" << tx_line << "'; receiver: exit " << run.receiver_exit << ", '"
                       << rx_line << "' (exit codes: fail_with calls in this file)");
  REQUIRE(run.sender_exit == 0);
  REQUIRE(run.receiver_exit == 0);
  run.sender = parse(tx_line);
  run.receiver = parse(rx_line);
  return run;
}

bool provider_usable_in_lab(const conform::NetnsLab& lab) {
  const int code = run_in_child([&] {
    if (auto in = conform::enter_netns(lab.side(0).netns); !in) return fail_with(1, in.error().message());
    auto q = fabric::query_provider(kProvider, lab.side(0).rails[0].address);
    return q ? 0 : fail_with(2, q.error().message());
  });
  if (code != 0) WARN(kProvider << " is not usable in the lab (exit " << code << "): skipped");
  return code == 0;
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
  const LabRun run = run_lab(*lab, plan_for(Fault::LinkDown), std::chrono::milliseconds(0));
  const long long cut = run.receiver.at("fault_ns");
  const long long detected = run.sender.at("failover_ns");
  const long long replayed = run.receiver.at("first_replayed_ns");
  INFO("sender's failover: " << run.sender.why);
  REQUIRE(cut > 0);
  REQUIRE(detected > 0);
  REQUIRE(replayed > 0);
  const double to_detect = millis_between(cut, detected);
  const double to_replayed = millis_between(cut, replayed);
  const bool realtime = run.sender.at("realtime") == 1 && run.receiver.at("realtime") == 1;
  // The sanitizer trees slow every call into the engine several times over: they check the
  // behaviour (the detector decides, delivery resumes), not the millisecond target.
  const bool timed = realtime && !kSanitized;
  // Printed for docs/failover.md ("The detector on real transports").
  std::printf(
      "liveness lab, link down (%s): detection %.1f ms, first replayed delivery %.1f ms after the cut "
      "(%.1f ms after detection); probes rail 0 %lld sent %lld answered; longest step %.1f ms (sender), "
      "%.1f ms (receiver)\n",
      realtime ? "SCHED_FIFO sides" : "normal priority", to_detect, to_replayed, to_replayed - to_detect,
      run.sender.at("probes0"), run.sender.at("answered0"), run.sender.at("longest_step_ns") / 1e6,
      run.receiver.at("longest_step_ns") / 1e6);
  CHECK(run.sender.at("liveness") == 1);
  CHECK(run.sender.at("failovers") == 1);
  CHECK(run.receiver.at("active") == 1);
  // The detector decided: not the soft RTO (1 s and more), not an error completion.
  CHECK_THAT(run.sender.why, Catch::StartsWith("rail liveness"));
  CHECK(run.sender.at("probes0") >= t.liveness_misses);
  CHECK(to_detect >= 0);
  CHECK(to_replayed > to_detect);
  if (timed) {
    // A silent rail is dead (misses + 1) probe timeouts after its last sign of life
    // (rail_liveness.hpp); the timeout sits at its floor on a veth whose round trip is ~0.1 ms.
    // 30 ms more: the sender's last data completion may come up to a few ms after the cut, and
    // two processes on a loaded two-core machine.
    CHECK(to_detect < to_millis((t.liveness_misses + 1) * t.liveness_floor) + 30.0);
    CHECK(to_replayed < 100.0);  // issue 28's target, from the link going down
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
  const LabRun run = run_lab(*lab, plan_for(Fault::StopReceiver), std::chrono::milliseconds(200));
  std::printf("liveness lab, receiver stopped %.1f ms: %lld failovers; probes rail 0 %lld sent %lld answered\n",
              run.stopped_ms, run.sender.at("failovers"), run.sender.at("probes0"), run.sender.at("answered0"));
  INFO("sender's failover, if any: " << run.sender.why);
  CHECK(run.stopped_ms >= 200.0);
  CHECK(run.sender.at("liveness") == 1);
  CHECK(run.sender.at("failovers") == 0);
  CHECK(run.receiver.at("failovers") == 0);
  CHECK(run.sender.at("failover_ns") == -1);
  // The stop really stalled the stream and the detector really probed through it: a 200 ms stall
  // is many probe timeouts, each one probe, and the stopped peer's kernel answered them.
  CHECK(run.sender.at("probes0") >= HaTunables{}.liveness_misses);
  CHECK(run.sender.at("answered0") >= HaTunables{}.liveness_misses);
}
