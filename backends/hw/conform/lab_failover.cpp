// One failover scenario between the netns lab's sides (lab_failover.hpp).
#include "backends/hw/conform/lab_failover.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "backends/hw/conform/child_process.hpp"
#include "backends/hw/conform/peer_channel.hpp"
#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/libfabric/provider_query.hpp"

namespace railcheck::conform {
namespace {

using Clock = std::chrono::steady_clock;

long long stamp(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

FabricOptions options_for(const NetnsSide& side, const LabFailoverPlan& plan) {
  FabricOptions o;
  o.provider = plan.provider;
  o.rails = 2;
  o.rail_addresses = {side.rails[0].address, side.rails[1].address};
  o.tunables = plan.tunables;
  return o;
}

// NCCL's proxy thread polls on a core of its own; the nearest a process gets to that is
// SCHED_FIFO with a short nap per loop, which leaves the rest of the machine running (no RT
// throttling) and keeps the scheduler's share of a side's stall under a millisecond (0.6 ms
// measured on a loaded 2-core machine; docs/failover.md).
constexpr auto kProxyNap = std::chrono::microseconds(20);

bool run_like_a_proxy_thread() {
  sched_param p{};
  p.sched_priority = 1;
  return sched_setscheduler(0, SCHED_FIFO, &p) == 0;
}

void nap_if_realtime(bool realtime) {
  if (realtime) std::this_thread::sleep_for(kProxyNap);
}

// Calls into the engine and provider that took at least kStallFloor (a steady-state step takes
// microseconds): when they began and how long they took, the first kMaxStalls of them. The
// provider's own stalls around a fault are what the sim must model (docs/validation.md).
constexpr long long kStallFloor = 1'000'000;
constexpr std::size_t kMaxStalls = 32;

struct Stalls {
  std::vector<std::pair<long long, long long>> seen;  // (start ns, duration ns)
  void note(Clock::time_point before, Clock::time_point after) {
    const long long d = stamp(after) - stamp(before);
    if (d >= kStallFloor && seen.size() < kMaxStalls) seen.emplace_back(stamp(before), d);
  }
  std::string text() const {  // "start:duration,start:duration" (ns), "-" when none
    std::string out;
    for (const auto& [at, d] : seen) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", at, d);
    return out.empty() ? "-" : out;
  }
};

struct Pipes {
  int handle[2] = {-1, -1};  // side b -> side a: the engine's handle
  int mark[2] = {-1, -1};    // side b -> parent: "fault" when a StopReceiver fault is due
  int stop[2] = {-1, -1};    // parent -> side b: the sender finished, stop progressing
  int rx_report[2] = {-1, -1};
  int tx_report[2] = {-1, -1};
};

// Side b: listens, hands its handle to side a, receives and verifies. `plan.fault.at` after its
// first verified delivery it takes rail 0's link down itself, or tells the parent to stop it.
int receive_side(const NetnsSide& b, const LabFailoverPlan& plan, const Pipes& p) {
  if (auto in = enter_netns(b.netns); !in) return fail_with(10, in.error().message());
  // A lab serves several runs: whatever the last one took down comes back up first.
  for (const auto& rail : b.rails)
    if (auto up = set_link_up(rail.if_name, true); !up) return fail_with(17, up.error().message());
  const bool realtime = run_like_a_proxy_thread();
  std::vector<std::uint8_t> handle;
  auto c = FabricConnection::listen(options_for(b, plan), handle);
  if (!c) return fail_with(11, "listen: " + c.error().message());
  if (write(p.handle[1], handle.data(), handle.size()) != static_cast<ssize_t>(handle.size()))
    return fail_with(12, "writing the handle");
  FabricConnection& conn = *c.value();
  StreamReceiver rx(conn, plan.spec);
  long long start_ns = -1, fault_ns = -1, first_replayed_ns = -1, end_ns = -1, longest_step_ns = 0;
  std::uint64_t seen = 0, at_fault = 0, at_switch = 0;
  auto last_progress = Clock::now();
  Stalls stalls;
  while (!rx.done()) {
    const auto before = Clock::now();
    if (!rx.step()) return fail_with(13, "receiver: " + rx.error());
    stalls.note(before, Clock::now());
    if (fault_ns >= 0) longest_step_ns = std::max(longest_step_ns, stamp(Clock::now()) - stamp(before));
    nap_if_realtime(realtime);
    const auto now = Clock::now();
    if (rx.verified() == seen) {
      if (now - last_progress > plan.give_up)
        return fail_with(14, "receiver: the stream stalled at message " + std::to_string(seen));
    } else {
      seen = rx.verified();
      last_progress = now;
      end_ns = stamp(now);
      if (start_ns < 0) start_ns = end_ns;
      if (first_replayed_ns < 0 && conn.failovers() > 0) {
        first_replayed_ns = end_ns;
        at_switch = seen - 1;
      }
    }
    if (fault_ns < 0 && plan.fault.kind != LabFault::Kind::None && start_ns >= 0 &&
        stamp(now) - start_ns >= plan.fault.at.count()) {
      fault_ns = stamp(now);
      at_fault = seen;
      if (plan.fault.kind == LabFault::Kind::LinkDown) {
        if (auto down = set_link_up(b.rails[0].if_name, false); !down) return fail_with(15, down.error().message());
      }
      (void)PeerChannel(p.mark[1]).send_line("fault");
    }
  }
  // The sender still waits for the acknowledgements of the last messages: progress until the
  // parent says it finished.
  for (pollfd q{p.stop[0], POLLIN, 0}; poll(&q, 1, 0) == 0 && Clock::now() - last_progress < plan.give_up;) {
    conn.progress();
    nap_if_realtime(realtime);
  }
  const ConnectionStats st = conn.stats();
  std::ostringstream line;
  line << "start_ns " << start_ns << " fault_ns " << fault_ns << " first_replayed_ns " << first_replayed_ns
       << " end_ns " << end_ns << " verified " << seen << " at_fault " << at_fault << " at_switch " << at_switch
       << " failovers " << st.failovers << " active " << st.active_rail << " longest_step_ns " << longest_step_ns
       << " realtime " << realtime << " stalls " << stalls.text();
  return PeerChannel(p.rx_report[1]).send_line(line.str()) ? 0 : fail_with(16, "writing the report");
}

// Side a: connects with b's handle and sends; reports the first failover (when, and what started
// it) and the probes per rail.
int send_side(const NetnsSide& a, const LabFailoverPlan& plan, const Pipes& p) {
  if (auto in = enter_netns(a.netns); !in) return fail_with(20, in.error().message());
  const bool realtime = run_like_a_proxy_thread();
  std::vector<std::uint8_t> handle(256);
  pollfd q{p.handle[0], POLLIN, 0};
  if (poll(&q, 1, 10000) != 1) return fail_with(21, "no handle from side b");
  const ssize_t n = read(p.handle[0], handle.data(), handle.size());
  if (n <= 0) return fail_with(21, "no handle from side b");
  handle.resize(static_cast<std::size_t>(n));
  auto c = FabricConnection::connect(options_for(a, plan), handle);
  if (!c) return fail_with(22, "connect: " + c.error().message());
  FabricConnection& conn = *c.value();
  StreamSender tx(conn, plan.spec);
  long long longest_step_ns = 0;  // until the first failover: one call into the provider at most
  std::uint64_t done = 0;
  auto last_progress = Clock::now();
  Stalls stalls;
  while (!tx.done()) {
    const auto before = Clock::now();
    if (!tx.step()) return fail_with(23, "sender: " + tx.error());
    stalls.note(before, Clock::now());
    if (conn.failovers() == 0) longest_step_ns = std::max(longest_step_ns, stamp(Clock::now()) - stamp(before));
    nap_if_realtime(realtime);
    if (tx.completed() != done) {
      done = tx.completed();
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress > plan.give_up) {
      return fail_with(24, "sender: the stream stalled at message " + std::to_string(done));
    }
  }
  const ConnectionStats st = conn.stats();
  std::ostringstream line;
  line << "stalls " << stalls.text() << " longest_step_ns " << longest_step_ns << " realtime " << realtime
       << " failovers " << st.failovers << " liveness " << st.liveness << " failover_ns "
       << (st.first_failover_at ? stamp(*st.first_failover_at) : -1LL);
  for (std::size_t r = 0; r < st.rails.size(); ++r)
    line << " probes" << r << " " << st.rails[r].probes_sent << " answered" << r << " " << st.rails[r].probes_answered;
  line << " why " << st.first_failover_why;
  return PeerChannel(p.tx_report[1]).send_line(line.str()) ? 0 : fail_with(25, "writing the report");
}

LabSideReport parse_report(const std::string& line) {
  LabSideReport r;
  std::istringstream in(line);
  std::string key;
  while (in >> key) {
    if (key == "why") {
      std::getline(in >> std::ws, r.why);
      break;
    }
    if (key == "stalls") {
      std::string list;
      in >> list;
      for (std::size_t pos = 0; list != "-" && pos < list.size();) {
        const auto comma = std::min(list.find(',', pos), list.size());
        const std::string one = list.substr(pos, comma - pos);
        const auto colon = one.find(':');
        if (colon != std::string::npos)
          r.stalls.emplace_back(std::stoll(one.substr(0, colon)), std::stoll(one.substr(colon + 1)));
        pos = comma + 1;
      }
      continue;
    }
    long long v = 0;
    in >> v;
    r.values[key] = v;
  }
  return r;
}

double gbps(std::uint64_t messages, std::size_t bytes, long long from_ns, long long to_ns) {
  if (from_ns < 0 || to_ns <= from_ns) return 0;
  return static_cast<double>(messages) * static_cast<double>(bytes) * 8.0 / static_cast<double>(to_ns - from_ns);
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

}  // namespace

long long LabSideReport::get(const std::string& key, long long missing) const {
  auto it = values.find(key);
  return it == values.end() ? missing : it->second;
}

Result<LabFailoverResult> run_lab_failover(const NetnsLab& lab, const LabFailoverPlan& plan) {
  Pipes p;
  for (int* fds : {p.handle, p.mark, p.stop, p.rx_report, p.tx_report})
    if (pipe2(fds, O_CLOEXEC) != 0) return Error{"lab: pipe2 failed", "too many open files?"};
  const auto alarm_s = static_cast<unsigned>(plan.give_up.count() * 3 + 30);
  const pid_t rx = fork_child([&] { return receive_side(lab.side(1), plan, p); }, alarm_s);
  const pid_t tx = fork_child([&] { return send_side(lab.side(0), plan, p); }, alarm_s);
  close_all({p.handle[0], p.handle[1], p.mark[1], p.stop[0], p.rx_report[1], p.tx_report[1]});
  PeerChannel mark(p.mark[0]), tx_report(p.tx_report[0]), rx_report(p.rx_report[0]);
  LabFailoverResult r;
  if (plan.fault.kind == LabFault::Kind::StopReceiver && mark.read_line(plan.give_up).value_or("") == "fault") {
    const auto stopped = Clock::now();
    kill(rx, SIGSTOP);
    std::this_thread::sleep_for(plan.fault.stop_for);
    kill(rx, SIGCONT);
    r.stopped_ms = std::chrono::duration<double, std::milli>(Clock::now() - stopped).count();
  }
  const std::string tx_line = tx_report.read_line(plan.give_up * 2 + std::chrono::seconds(10)).value_or("");
  r.sender_exit = wait_child(tx);
  (void)PeerChannel(p.stop[1]).send_line("stop");  // side b may stop progressing now
  const std::string rx_line = rx_report.read_line(std::chrono::seconds(10)).value_or("");
  r.receiver_exit = wait_child(rx);
  r.sender = parse_report(tx_line);
  r.receiver = parse_report(rx_line);
  r.realtime = r.sender.get("realtime") == 1 && r.receiver.get("realtime") == 1;
  r.start_ns = r.receiver.get("start_ns");
  r.fault_ns = r.receiver.get("fault_ns");
  r.detected_ns = r.sender.get("failover_ns");
  r.first_replayed_ns = r.receiver.get("first_replayed_ns");
  r.end_ns = r.receiver.get("end_ns");
  r.messages = plan.spec.messages;
  r.verified = static_cast<std::uint64_t>(std::max(0LL, r.receiver.get("verified", 0)));
  r.verified_at_fault = static_cast<std::uint64_t>(std::max(0LL, r.receiver.get("at_fault", 0)));
  r.verified_at_switch = static_cast<std::uint64_t>(std::max(0LL, r.receiver.get("at_switch", 0)));
  r.failovers = static_cast<std::uint32_t>(std::max(0LL, r.sender.get("failovers", 0)));
  r.detected_by = r.sender.why;
  const std::size_t bytes = plan.spec.fixed_size.value_or(plan.spec.max_size);
  r.gbps_before = gbps(r.verified_at_fault, bytes, r.start_ns, r.fault_ns);
  r.gbps_after = gbps(r.verified - r.verified_at_switch, bytes, r.first_replayed_ns, r.end_ns);
  return r;
}

Result<bool> provider_usable_in_lab(const NetnsLab& lab, const std::string& provider) {
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) return Error{"lab: pipe2 failed", ""};
  const int code = run_in_child([&] {
    close(err[0]);
    if (auto in = enter_netns(lab.side(0).netns); !in) return fail_with(1, in.error().message());
    auto q = fabric::query_provider(provider, lab.side(0).rails[0].address);
    if (q) return 0;
    (void)PeerChannel(err[1]).send_line(q.error().message());
    return 2;
  });
  close(err[1]);
  const std::string why = PeerChannel(err[0]).read_line(std::chrono::seconds(1)).value_or("");
  if (code != 0)
    return Error{fmt::format("{} is not usable in the lab's namespaces (exit {}){}", provider, code,
                             why.empty() ? "" : ": " + why),
                 ""};
  return true;
}

}  // namespace railcheck::conform
