#pragma once
// One failover scenario on real hardware (issue 41): the HA engine over a libfabric provider
// (tcp;ofi_rxm by default) between the netns lab's two namespaces, a verified message stream
// from side a (rank 0) to side b (rank 1), and a real fault at a given time after the stream's
// first delivery, or a schedule of them: links taken down and brought back (`ip link` semantics,
// SIOCSIFFLAGS on side b's veth end, which drops the carrier of both ends), loss on either side's
// egress of a rail (an nftables drop rule with a random number per packet: netem is not built
// into every kernel, this lab's included), side b stopped with SIGSTOP. What
// `railcheck validate` holds against the SimGrid driver, and what the liveness lab test asserts.
//
// Each side is a forked child that enters its namespace before libfabric opens anything and
// runs like NCCL's proxy thread: SCHED_FIFO with a 20 us nap per loop where the process may
// (docs/failover.md "Measured: the netns lab": at normal priority a loaded 2-core machine makes
// every hop wait 40-120 ms for a core; the result says which it was). Times are CLOCK_MONOTONIC
// (steady_clock), one clock for every process of the host, so both sides' instants compare.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/hw/conform/message_stream.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "engine/core/result.hpp"
#include "engine/failover/ha_tunables.hpp"

namespace railcheck::conform {

// One change the lab makes to its links or to side b's process, `at` after side b's first
// verified delivery. Side b makes the link changes itself (SIOCSIFFLAGS, microseconds, no
// process spawned), the parent the rest (tc, signals), each at its time on the one clock.
struct LabAction {
  enum class Kind : std::uint8_t {
    LinkDown,      // the rail's veth pair loses its carrier (side b's end set down: both ends lose it)
    LinkUp,        // and gets it back
    Loss,          // `side`'s egress on the rail drops each packet with probability `loss` (nftables)
    Delay,         // `side`'s egress on the rail holds each packet `delay` + [0, `spread`) (packet delayer)
    Clear,         // the rail's loss or delay on `side` ends
    StopReceiver,  // SIGSTOP to side b
    ContReceiver,  // SIGCONT to side b
  };
  Kind kind = Kind::LinkDown;
  std::chrono::nanoseconds at{};
  int side = 1;  // Loss, Delay, Clear: 0 = a (rank 0), 1 = b (rank 1)
  int rail = 0;
  double loss = 1;                       // Loss
  std::chrono::nanoseconds delay{};      // Delay
  std::chrono::nanoseconds spread{};     // Delay
  bool by_side_b() const { return kind == Kind::LinkDown || kind == Kind::LinkUp; }
};

struct LabFault {
  std::vector<LabAction> actions;  // in any order; each side runs its own in time order
  bool none() const { return actions.empty(); }
  bool impairs() const;  // any Loss, Delay or Clear: the lab cleans its rules before and after the run
  // Rail 0's link down for good at `at`.
  static LabFault link_down(std::chrono::nanoseconds at, int rail = 0);
  // Side b stopped at `at` for `stop_for`.
  static LabFault stop_receiver(std::chrono::nanoseconds at, std::chrono::nanoseconds stop_for);
};

struct LabFailoverPlan {
  std::string provider = "tcp;ofi_rxm";
  StreamSpec spec;  // max_group 1: a message's delivery is its receive's completion
  HaTunables tunables;
  LabFault fault;
  std::chrono::seconds give_up{20};  // a side that makes no progress for this long fails the run
  // Messages delivered before the measured stream starts (they are in spec.messages). A fresh
  // tcp;ofi_rxm connection often delivers its first window and then nothing for 10-20 ms (the
  // provider's set-up of the way back, which the delivery acks take; docs/validation.md): the
  // scenario's clock starts after it, as a job's first collective starts after its communicator
  // was set up.
  std::uint32_t warmup = 0;
};

// One side's report: "key value ..." pairs and the sender's failover trigger.
struct LabSideReport {
  std::map<std::string, long long> values;
  std::string why;
  // Calls into the engine and provider of 1 ms or more: (start, duration), CLOCK_MONOTONIC ns.
  std::vector<std::pair<long long, long long>> stalls;
  // Side b: the link changes it made, (plan index, when the ioctl returned), CLOCK_MONOTONIC ns,
  // and (plan index, when it was called): the carrier drops somewhere between the two.
  std::vector<std::pair<long long, long long>> actions;
  std::vector<std::pair<long long, long long>> actions_begun;
  // Side b: messages landed per kLandedBin from the stream's start (LabFailoverResult::landed_per_bin).
  std::vector<long long> landed;
  // The core the side ran on from each instant it moved: (CLOCK_MONOTONIC ns, cpu), the first 256.
  std::vector<std::pair<long long, long long>> cpus;
  long long get(const std::string& key, long long missing = -1) const;
};

// The bins of LabFailoverResult::landed_per_bin, and how many at most (10 s of stream).
inline constexpr std::chrono::nanoseconds kLandedBin = std::chrono::milliseconds(5);
inline constexpr std::size_t kMaxLandedBins = 2000;

struct LabFailoverResult {
  bool realtime = false;  // both sides ran SCHED_FIFO
  int sender_exit = -1;
  int receiver_exit = -1;
  double stopped_ms = 0;  // StopReceiver: how long side b really stayed stopped (the first stop)
  // When each action took effect (CLOCK_MONOTONIC ns; -1 = not made), in the plan's order: side b's
  // link changes as it made them, the parent's once tc or kill returned.
  std::vector<long long> action_ns;
  // When each action's call began (-1: not made). An impairment takes effect somewhere inside the
  // call that makes it (the parent's nft rule or signal; side b's SIOCSIFFLAGS, which waits for the
  // kernel's rtnl lock), and that call can take milliseconds on a loaded machine; action_ns is its
  // end, so times after the fault are known only to within the call's length (fault_window_ns).
  std::vector<long long> action_begun_ns;
  LabSideReport sender;
  LabSideReport receiver;
  // Derived, CLOCK_MONOTONIC nanoseconds (-1 = did not happen).
  long long start_ns = -1;               // side b's first verified delivery after the warm-up
  long long fault_ns = -1;               // the first action took effect
  long long detected_ns = -1;            // the sender's first failover started
  long long first_replayed_ns = -1;      // side b's first delivery after its engine switched rails
  long long end_ns = -1;                 // side b's last delivery
  std::uint64_t messages = 0;            // the stream's length, warm-up included
  std::uint64_t warmup = 0;              // the plan's warm-up messages
  std::uint64_t verified = 0;            // delivered exactly once, in order, bytes checked
  std::uint64_t verified_at_fault = 0;   // of those, after the warm-up and before the fault
  std::uint64_t verified_at_switch = 0;  // of those, before the first replayed delivery
  std::uint32_t failovers = 0;           // started by the sender
  std::string detected_by;               // the engine's trace of what started the first failover
  long long due_ns = -1;                 // when the first action was due: start_ns + its `at`
  std::uint64_t verified_at_due = 0;     // verified after the warm-up and before due_ns
  double gbps_before = 0;                // payload rate before the fault: before_fault_gbps
  double gbps_after = 0;                 // from the first replayed delivery to the last
  // Side b's verified deliveries after the warm-up per kLandedBin from start_ns (bin 0 holds the
  // first), up to the last: the stream's rate over time.
  std::vector<std::uint32_t> landed_per_bin;
  // The sender's engine reported the connection failed (every path down) and side b saw nothing
  // wrong: a clean end, the sim's "connection-failed".
  bool connection_failed = false;
  bool hung = false;     // the sender stalled for plan.give_up with no error from its engine
  long long error_ns = -1;  // CLOCK_MONOTONIC ns: either side's engine first said the connection failed
  bool ok() const { return sender_exit == 0 && receiver_exit == 0; }
  // The share of [from_ns, to_ns) both sides ran on the same core (from their cpu trails); -1 where
  // a side reported none.
  double shared_core(long long from_ns, long long to_ns) const;
  bool failed_cleanly() const { return connection_failed && receiver_exit == 0; }
  // How much earlier than fault_ns the fault may have taken effect: the length of the parent's call
  // that made it, 0 where side b made it (a link set down in its own loop) or nothing was made.
  long long fault_window_ns() const;
  std::uint64_t measured() const { return verified > warmup ? verified - warmup : 0; }  // after the warm-up
};

// The payload rate of `r`'s stream (messages of `bytes`) before its fault, over the span the sim's
// figure covers: from the first delivery to when the first action was due, not to when it took
// effect. An action the parent makes (an nftables rule, the packet delayer, a signal) takes effect
// milliseconds after it was due, and while `nft` starts the sides share a core and run slower
// (one-way-loss on a loaded 2-core machine: 10 ms late, the stream 6-49 % under its rate before;
// docs/validation.md "The lab stream's rate over time"). To the fault's effect where nothing was
// due; 0 without a fault.
double before_fault_gbps(const LabFailoverResult& r, std::size_t bytes);
// `messages` of `bytes` each over [from_ns, to_ns), in Gb/s; 0 for an empty or unknown span.
double payload_gbps(std::uint64_t messages, std::size_t bytes, long long from_ns, long long to_ns);

// Runs the plan between the lab's two sides. An Error only when the run could not be made (no
// pipes, a side that could not start); a stream that failed is a result with its exit codes and
// the side's reason in stderr.
Result<LabFailoverResult> run_lab_failover(const NetnsLab& lab, const LabFailoverPlan& plan);

// Whether this machine can make every action of `fault` in the lab: a loss needs nftables (the
// nft binary and nf_tables in the kernel), a delay the packet delayer (iptables' NFQUEUE target
// and nfnetlink_queue). An Error says which is missing and how to get it.
Result<bool> lab_can_make(const NetnsLab& lab, const LabFault& fault);

// Whether `provider` opens in the lab's namespace (tcp;ofi_rxm needs its rail addresses there);
// an Error says why not.
Result<bool> provider_usable_in_lab(const NetnsLab& lab, const std::string& provider);

}  // namespace railcheck::conform
