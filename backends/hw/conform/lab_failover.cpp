// One failover scenario between the netns lab's sides (lab_failover.hpp).
#include "backends/hw/conform/lab_failover.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <thread>

#include "backends/hw/conform/child_process.hpp"
#include "backends/hw/conform/lab_actions.hpp"
#include "backends/hw/conform/packet_delayer.hpp"
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
  o.rails = static_cast<std::uint32_t>(side.rails.size());
  o.rail_addresses.clear();
  for (const auto& rail : side.rails) o.rail_addresses.push_back(rail.address);
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
// microseconds): when they began and how long they took, the first kMaxStalls of them, and past
// those any of kLongStall or more (a sender on a dead rail makes a 1 ms call every loop, which would
// fill the list before a long stall later in the run). The provider's own stalls around a fault
// are what the sim must model (docs/validation.md).
constexpr long long kStallFloor = 1'000'000;
constexpr long long kLongStall = 10'000'000;
constexpr std::size_t kMaxStalls = 32;
constexpr std::size_t kMaxLongStalls = 64;

struct Stalls {
  std::vector<std::pair<long long, long long>> seen;  // (start ns, duration ns)
  void note(Clock::time_point before, Clock::time_point after) {
    const long long d = stamp(after) - stamp(before);
    if (d >= kStallFloor && (seen.size() < kMaxStalls || (d >= kLongStall && seen.size() < kMaxStalls + kMaxLongStalls)))
      seen.emplace_back(stamp(before), d);
  }
  std::string text() const {  // "start:duration,start:duration" (ns), "-" when none
    std::string out;
    for (const auto& [at, d] : seen) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", at, d);
    return out.empty() ? "-" : out;
  }
};

// The core a side ran on, each time it changed: (when, cpu), the first kMaxCpuMoves of them. Two
// sides on one core take turns (each naps kProxyNap per loop): 1.0-1.4 Gb/s against 1.6-1.9 on
// two cores, measured with the lab pinned to one (docs/validation.md "The lab stream's rate over
// time"), so validate marks the bins where it happened.
constexpr std::size_t kMaxCpuMoves = 256;

struct CpuTrail {
  std::vector<std::pair<long long, long long>> moves;
  int last = -2;
  void note(Clock::time_point now) {
    const int cpu = sched_getcpu();
    if (cpu == last || moves.size() >= kMaxCpuMoves) return;
    last = cpu;
    moves.emplace_back(stamp(now), cpu);
  }
  std::string text() const {
    std::string out;
    for (const auto& [at, cpu] : moves) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", at, cpu);
    return out.empty() ? "-" : out;
  }
};

struct Pipes {
  int handle[2] = {-1, -1};  // side b -> side a: the engine's handle
  int mark[2] = {-1, -1};    // side b -> parent: "start <ns>" at its first verified delivery
  int stop[2] = {-1, -1};    // parent -> side b: "stop <ns>" once the sender finished (<ns>: its first action, or -1)
  int rx_report[2] = {-1, -1};
  int tx_report[2] = {-1, -1};
};

// Side a's exit when its engine reported the connection failed (every path down): the sim's
// "connection-failed", a clean end, not a broken run. Side a's 24 is a stall with no error (hung).
constexpr int kSenderConnectionFailed = 30;
constexpr int kSenderStalled = 24;

// Side b's share of the plan: the link changes, in time order, with their index in the plan.
std::vector<std::size_t> side_b_actions(const LabFault& f) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < f.actions.size(); ++i)
    if (f.actions[i].by_side_b()) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return f.actions[x].at < f.actions[y].at; });
  return order;
}

std::vector<std::size_t> parent_actions(const LabFault& f) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < f.actions.size(); ++i)
    if (!f.actions[i].by_side_b()) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return f.actions[x].at < f.actions[y].at; });
  return order;
}

// "i:ns,i:ns" (plan index : when it took effect), "-" when none.
std::string action_times_text(const std::vector<std::pair<std::size_t, long long>>& done) {
  std::string out;
  for (const auto& [i, at] : done) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", i, at);
  return out.empty() ? "-" : out;
}

// Side b: listens, hands its handle to side a, receives and verifies. Its link changes it makes
// itself, each `at` after its first verified delivery; the parent makes the rest.
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
  const std::vector<std::size_t> links = side_b_actions(plan.fault);
  std::size_t next_link = 0;
  std::vector<std::pair<std::size_t, long long>> links_done;
  std::vector<std::pair<std::size_t, long long>> links_begun;  // when each SIOCSIFFLAGS was called
  std::vector<long long> deliveries;  // when each verified message landed: the count at the fault, once known
  deliveries.reserve(plan.spec.messages);
  long long start_ns = -1, first_replayed_ns = -1, end_ns = -1, longest_step_ns = 0;
  std::uint64_t seen = 0, at_switch = 0;
  auto last_progress = Clock::now();
  Stalls stalls;
  CpuTrail cpus;
  // The parent's "stop" once the sender finished: before the stream is whole only where the
  // sender's connection failed (a clean failure), which leaves side b nothing more to wait for.
  PeerChannel stop(p.stop[0]);
  std::optional<std::string> stop_line;
  long long failed_ns = -1;  // when side b's own engine first said the connection failed
  std::uint64_t loops = 0;
  while (!rx.done()) {
    if (++loops % 64 == 0 && (stop_line = stop.read_line(std::chrono::milliseconds(0)))) break;
    if (failed_ns < 0 && conn.failed()) failed_ns = stamp(Clock::now());
    const auto before = Clock::now();
    if (!rx.step()) {
      if (conn.failed()) {  // nothing wrong was delivered: the engine ended the connection cleanly
        if (failed_ns < 0) failed_ns = stamp(Clock::now());
        while (!(stop_line = stop.read_line(std::chrono::milliseconds(100))) && !stop.closed() &&
               Clock::now() - last_progress < plan.give_up) {
        }
        break;
      }
      return fail_with(13, "receiver: " + rx.error());
    }
    stalls.note(before, Clock::now());
    cpus.note(before);
    if (start_ns >= 0) longest_step_ns = std::max(longest_step_ns, stamp(Clock::now()) - stamp(before));
    nap_if_realtime(realtime);
    const auto now = Clock::now();
    if (rx.verified() == seen) {
      if (now - last_progress > plan.give_up)
        return fail_with(14, "receiver: the stream stalled at message " + std::to_string(seen));
    } else {
      seen = rx.verified();
      last_progress = now;
      end_ns = stamp(now);
      deliveries.resize(seen, end_ns);
      if (start_ns < 0 && seen > plan.warmup) {
        start_ns = end_ns;
        (void)PeerChannel(p.mark[1]).send_line(fmt::format("start {}", start_ns));
      }
      if (first_replayed_ns < 0 && conn.failovers() > 0) {
        first_replayed_ns = end_ns;
        at_switch = seen - 1;
      }
    }
    while (start_ns >= 0 && next_link < links.size() &&
           stamp(now) - start_ns >= plan.fault.actions[links[next_link]].at.count()) {
      const LabAction& a = plan.fault.actions[links[next_link]];
      const auto& rail = b.rails.at(static_cast<std::size_t>(a.rail));
      links_begun.emplace_back(links[next_link], stamp(Clock::now()));
      if (auto set = set_link_up(rail.if_name, a.kind == LabAction::Kind::LinkUp); !set)
        return fail_with(15, set.error().message());
      links_done.emplace_back(links[next_link], stamp(Clock::now()));
      ++next_link;
    }
  }
  // The sender still waits for the acknowledgements of the last messages: progress until the
  // parent says it finished, and when its first action took effect.
  while (!stop_line && !(stop_line = stop.read_line(std::chrono::milliseconds(0))) && !stop.closed() &&
         Clock::now() - last_progress < plan.give_up) {
    conn.progress();
    nap_if_realtime(realtime);
  }
  long long fault_ns = -1;
  if (stop_line && stop_line->rfind("stop ", 0) == 0) fault_ns = std::stoll(stop_line->substr(5));
  if (!links_done.empty() && (fault_ns < 0 || links_done.front().second < fault_ns)) fault_ns = links_done.front().second;
  const auto at_fault = static_cast<std::uint64_t>(
      fault_ns < 0 ? 0 : std::lower_bound(deliveries.begin(), deliveries.end(), fault_ns) - deliveries.begin());
  // When the first action was due: the parent starts making its actions then (an nft or a kill
  // takes milliseconds of a core the sides run on); the stream up to here is undisturbed.
  long long due_ns = -1;
  for (const auto& a : plan.fault.actions)
    if (start_ns >= 0 && (due_ns < 0 || start_ns + a.at.count() < due_ns)) due_ns = start_ns + a.at.count();
  const auto at_due = static_cast<std::uint64_t>(
      due_ns < 0 ? 0 : std::lower_bound(deliveries.begin(), deliveries.end(), due_ns) - deliveries.begin());
  // Messages landed per kLandedBin from the stream's start to its end (the warm-up left out): the
  // rate's shape over time, which calibration and validate print (docs/validation.md "The lab
  // stream's rate over time").
  std::string landed;
  if (start_ns >= 0) {
    std::vector<long> per_bin;
    for (std::size_t i = plan.warmup; i < deliveries.size(); ++i) {
      const auto bin = static_cast<std::size_t>((deliveries[i] - start_ns) / kLandedBin.count());
      if (bin >= kMaxLandedBins) break;
      if (per_bin.size() <= bin) per_bin.resize(bin + 1, 0);
      ++per_bin[bin];
    }
    for (long n : per_bin) landed += fmt::format("{}{}", landed.empty() ? "" : ",", n);
  }
  const ConnectionStats st = conn.stats();
  std::ostringstream line;
  line << "landed " << (landed.empty() ? "-" : landed) << " start_ns " << start_ns << " fault_ns " << fault_ns
       << " first_replayed_ns " << first_replayed_ns << " end_ns " << end_ns << " failed_ns " << failed_ns
       << " verified " << seen << " due_ns " << due_ns << " at_due " << at_due << " at_fault " << at_fault
       << " at_switch " << at_switch << " failovers " << st.failovers << " active " << st.active_rail
       << " longest_step_ns " << longest_step_ns << " realtime " << realtime << " stalls " << stalls.text() << " cpus "
       << cpus.text() << " actions " << action_times_text(links_done) << " actions_begun "
       << action_times_text(links_begun);
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
  CpuTrail cpus;
  while (!tx.done()) {
    const auto before = Clock::now();
    if (!tx.step()) {
      if (!conn.failed()) return fail_with(23, "sender: " + tx.error());
      // A clean failure: the engine said every path is down. Reported like a finished stream,
      // with when the error reached the caller, so validate can hold it against the sim's.
      const ConnectionStats st = conn.stats();
      std::ostringstream line;
      line << "stalls " << stalls.text() << " realtime " << realtime << " failovers " << st.failovers_started
           << " failed_ns " << stamp(Clock::now())
           << " completed " << tx.completed() << " failover_ns "
           << (st.first_failover_at ? stamp(*st.first_failover_at) : -1LL) << " why " << st.first_failover_why;
      (void)PeerChannel(p.tx_report[1]).send_line(line.str());
      return fail_with(kSenderConnectionFailed, "sender: " + tx.error());
    }
    stalls.note(before, Clock::now());
    cpus.note(before);
    if (conn.failovers() == 0) longest_step_ns = std::max(longest_step_ns, stamp(Clock::now()) - stamp(before));
    nap_if_realtime(realtime);
    if (tx.completed() != done) {
      done = tx.completed();
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress > plan.give_up) {
      return fail_with(kSenderStalled, "sender: the stream stalled at message " + std::to_string(done));
    }
  }
  const ConnectionStats st = conn.stats();
  std::ostringstream line;
  line << "stalls " << stalls.text() << " cpus " << cpus.text() << " longest_step_ns " << longest_step_ns
       << " realtime " << realtime << " failovers " << st.failovers_started << " liveness " << st.liveness
       << " failover_ns " << (st.first_failover_at ? stamp(*st.first_failover_at) : -1LL);
  for (std::size_t r = 0; r < st.rails.size(); ++r)
    line << " probes" << r << " " << st.rails[r].probes_sent << " answered" << r << " " << st.rails[r].probes_answered;
  line << " why " << st.first_failover_why;
  return PeerChannel(p.tx_report[1]).send_line(line.str()) ? 0 : fail_with(25, "writing the report");
}

// "a:b,a:b" -> pairs; "-" -> none.
std::vector<std::pair<long long, long long>> parse_pairs(const std::string& list) {
  std::vector<std::pair<long long, long long>> out;
  for (std::size_t pos = 0; list != "-" && pos < list.size();) {
    const auto comma = std::min(list.find(',', pos), list.size());
    const std::string one = list.substr(pos, comma - pos);
    const auto colon = one.find(':');
    if (colon != std::string::npos) out.emplace_back(std::stoll(one.substr(0, colon)), std::stoll(one.substr(colon + 1)));
    pos = comma + 1;
  }
  return out;
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
    if (key == "landed") {
      std::string list;
      in >> list;
      for (std::size_t pos = 0; list != "-" && pos < list.size();) {
        const auto comma = std::min(list.find(',', pos), list.size());
        r.landed.push_back(std::stoll(list.substr(pos, comma - pos)));
        pos = comma + 1;
      }
      continue;
    }
    if (key == "stalls" || key == "actions" || key == "actions_begun" || key == "cpus") {
      std::string list;
      in >> list;
      (key == "stalls"          ? r.stalls
       : key == "actions"       ? r.actions
       : key == "actions_begun" ? r.actions_begun
                                : r.cpus) = parse_pairs(list);
      continue;
    }
    long long v = 0;
    in >> v;
    r.values[key] = v;
  }
  return r;
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

}  // namespace

namespace {

// The parent keeps its actions' times as the sides keep theirs: SCHED_FIFO while it runs them
// (where it may), its old policy back afterwards.
class RealtimeWhileInScope {
 public:
  RealtimeWhileInScope() {
    policy_ = sched_getscheduler(0);
    sched_getparam(0, &old_);
    sched_param p{};
    p.sched_priority = 1;
    on_ = sched_setscheduler(0, SCHED_FIFO, &p) == 0;
  }
  ~RealtimeWhileInScope() {
    if (on_) sched_setscheduler(0, policy_, &old_);
  }
  RealtimeWhileInScope(const RealtimeWhileInScope&) = delete;
  RealtimeWhileInScope& operator=(const RealtimeWhileInScope&) = delete;

 private:
  int policy_ = SCHED_OTHER;
  sched_param old_{};
  bool on_ = false;
};

}  // namespace

Result<LabFailoverResult> run_lab_failover(const NetnsLab& lab, const LabFailoverPlan& plan) {
  for (const auto& a : plan.fault.actions)
    if (a.rail < 0 || static_cast<std::size_t>(a.rail) >= lab.rails() || a.side < 0 || a.side > 1)
      return Error{fmt::format("lab: an action on side {} rail {}; the lab has sides 0-1 and rails 0-{}", a.side, a.rail,
                               lab.rails() - 1),
                   ""};
  if (plan.fault.impairs()) clear_impairments(lab);
  // Delayers start before the sides: binding a queue takes a fork and netlink round trips, and
  // the sides must not inherit a half-made one.
  Impairments imp;
  for (std::size_t i = 0; i < plan.fault.actions.size(); ++i) {
    const LabAction& a = plan.fault.actions[i];
    if (a.kind != LabAction::Kind::Delay || imp.delayers.count({a.side, a.rail}) != 0) continue;
    auto d = PacketDelayer::start(lab.side(a.side), a.rail, static_cast<std::uint16_t>(100 + NetnsLab::kMaxRails * a.side + a.rail),
                                  DelaySpec{a.delay, a.spread, plan.spec.seed * 31 + i});
    if (!d) return d.error();
    imp.delayers[{a.side, a.rail}] = std::move(d).value();
  }
  Pipes p;
  for (int* fds : {p.handle, p.mark, p.stop, p.rx_report, p.tx_report})
    if (pipe2(fds, O_CLOEXEC) != 0) return Error{"lab: pipe2 failed", "too many open files?"};
  const auto alarm_s = static_cast<unsigned>(plan.give_up.count() * 3 + 30);
  const pid_t rx = fork_child([&] { return receive_side(lab.side(1), plan, p); }, alarm_s);
  const pid_t tx = fork_child([&] { return send_side(lab.side(0), plan, p); }, alarm_s);
  close_all({p.handle[0], p.handle[1], p.mark[1], p.stop[0], p.rx_report[1], p.tx_report[1]});
  PeerChannel mark(p.mark[0]), tx_report(p.tx_report[0]), rx_report(p.rx_report[0]);
  LabFailoverResult r;
  r.action_ns.assign(plan.fault.actions.size(), -1);
  r.action_begun_ns.assign(plan.fault.actions.size(), -1);
  // The parent's actions, each at its time after side b's first delivery, until the sender is done
  // (an action due after the stream ended is not made: a loss "until 10 s" outlives a short run).
  const auto mine = parent_actions(plan.fault);
  std::optional<std::string> tx_line;
  std::optional<Error> failed;
  bool stopped = false;
  long long first_parent_ns = -1, stop_ns = -1;
  std::chrono::nanoseconds stop_at{};  // the plan's time of the stop in effect
  if (!mine.empty()) {
    RealtimeWhileInScope realtime;
    const auto start_line = mark.read_line(plan.give_up);
    if (start_line && start_line->rfind("start ", 0) == 0) {
      const Clock::time_point start{std::chrono::nanoseconds(std::stoll(start_line->substr(6)))};
      for (std::size_t i : mine) {
        const LabAction& a = plan.fault.actions[i];
        auto due = start + a.at;
        // A stall lasts its full length: the SIGCONT moves by however late the SIGSTOP was made.
        if (a.kind == LabAction::Kind::ContReceiver && stopped)
          due = std::max(due, Clock::time_point{std::chrono::nanoseconds(stop_ns)} + (a.at - stop_at));
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now());
        if (wait.count() > 0 && (tx_line = tx_report.read_line(wait))) break;  // the sender finished first
        if (tx_report.closed()) break;
        std::this_thread::sleep_until(due);  // the rest of the millisecond read_line rounds off
        r.action_begun_ns[i] = stamp(Clock::now());
        if (auto made = make_action(lab, a, rx, imp); !made) {
          failed = made.error();
          break;
        }
        const long long at = stamp(Clock::now());
        r.action_ns[i] = at;
        if (first_parent_ns < 0) first_parent_ns = at;
        if (a.kind == LabAction::Kind::StopReceiver) {
          stopped = true;
          stop_ns = at;
          stop_at = a.at;
        } else if (a.kind == LabAction::Kind::ContReceiver && stopped) {
          stopped = false;
          if (r.stopped_ms == 0) r.stopped_ms = static_cast<double>(at - stop_ns) / 1e6;
        }
      }
    }
  }
  if (stopped) kill(rx, SIGCONT);  // never leave side b stopped
  if (failed) {
    kill(tx, SIGKILL);
    kill(rx, SIGKILL);
    (void)wait_child(tx);
    (void)wait_child(rx);
    close_all({p.stop[1]});
    if (plan.fault.impairs()) clear_impairments(lab);
    return *failed;
  }
  if (!tx_line) tx_line = tx_report.read_line(plan.give_up * 2 + std::chrono::seconds(10));
  r.sender_exit = wait_child(tx);
  // Side b may stop progressing now; it counts its deliveries before the first action.
  (void)PeerChannel(p.stop[1]).send_line(fmt::format("stop {}", first_parent_ns));
  const std::string rx_line = rx_report.read_line(std::chrono::seconds(10)).value_or("");
  r.receiver_exit = wait_child(rx);
  if (plan.fault.impairs()) clear_impairments(lab);
  r.sender = parse_report(tx_line.value_or(""));
  r.receiver = parse_report(rx_line);
  for (const auto& [i, at] : r.receiver.actions)
    if (i >= 0 && static_cast<std::size_t>(i) < r.action_ns.size()) r.action_ns[static_cast<std::size_t>(i)] = at;
  for (const auto& [i, at] : r.receiver.actions_begun)
    if (i >= 0 && static_cast<std::size_t>(i) < r.action_begun_ns.size())
      r.action_begun_ns[static_cast<std::size_t>(i)] = at;
  r.realtime = r.sender.get("realtime") == 1 && r.receiver.get("realtime") == 1;
  r.start_ns = r.receiver.get("start_ns");
  r.fault_ns = r.receiver.get("fault_ns");
  r.detected_ns = r.sender.get("failover_ns");
  r.connection_failed = r.sender_exit == kSenderConnectionFailed;
  r.hung = r.sender_exit == kSenderStalled;
  for (long long at : {r.sender.get("failed_ns"), r.receiver.get("failed_ns")})
    if (at >= 0 && (r.error_ns < 0 || at < r.error_ns)) r.error_ns = at;
  r.first_replayed_ns = r.receiver.get("first_replayed_ns");
  r.end_ns = r.receiver.get("end_ns");
  r.messages = plan.spec.messages;
  r.verified = static_cast<std::uint64_t>(std::max(0LL, r.receiver.get("verified", 0)));
  r.warmup = plan.warmup;
  r.verified_at_fault =
      static_cast<std::uint64_t>(std::max(0LL, r.receiver.get("at_fault", 0) - static_cast<long long>(plan.warmup)));
  r.verified_at_switch = static_cast<std::uint64_t>(std::max(0LL, r.receiver.get("at_switch", 0)));
  r.failovers = static_cast<std::uint32_t>(std::max(0LL, r.sender.get("failovers", 0)));
  r.detected_by = r.sender.why;
  const std::size_t bytes = plan.spec.fixed_size.value_or(plan.spec.max_size);
  for (long long n : r.receiver.landed) r.landed_per_bin.push_back(static_cast<std::uint32_t>(std::max(0LL, n)));
  r.due_ns = r.receiver.get("due_ns");
  r.verified_at_due =
      static_cast<std::uint64_t>(std::max(0LL, r.receiver.get("at_due", 0) - static_cast<long long>(plan.warmup)));
  r.gbps_before = before_fault_gbps(r, bytes);
  r.gbps_after = payload_gbps(r.verified - r.verified_at_switch, bytes, r.first_replayed_ns, r.end_ns);
  return r;
}

Result<bool> lab_can_make(const NetnsLab& lab, const LabFault& fault) {
  bool loss = false, delay = false;
  for (const auto& a : fault.actions) {
    loss = loss || a.kind == LabAction::Kind::Loss;
    delay = delay || a.kind == LabAction::Kind::Delay;
  }
  if (loss) {
    // A table made and deleted in side a's namespace: the nft binary and nf_tables both work.
    if (auto made = nft_in(lab.side(0), "add table inet railcheck_probe ; delete table inet railcheck_probe"); !made)
      return Error{"the lab's loss faults need nftables: " + made.error().message(), "apt-get install nftables"};
  }
  if (delay) {
    auto d = PacketDelayer::start(lab.side(0), 1, 199, DelaySpec{});
    if (!d) return d.error();
    if (auto on = d.value()->engage(); !on) return on.error();
    if (auto off = d.value()->disengage(); !off) return off.error();
  }
  return true;
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
