#pragma once
// Everything one simulated run holds: the platform, the connections with their two engines and
// their simulated QPs, one inbox per rank, and what the run records. SimGrid actors run one at
// a time, so plain data structures are safe here.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <simgrid/s4u.hpp>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

#include "backends/sim/run_observer.hpp"
#include "backends/sim/sim_platform.hpp"
#include "backends/sim/sim_qp.hpp"
#include "backends/sim/stream_workload.hpp"
#include "backends/sim/wire_mode.hpp"
#include "engine/core/rng.hpp"
#include "engine/failover/ha_connection.hpp"
#include "models/scenario.hpp"

namespace railcheck::sim {

enum class Side : std::uint8_t { Sender, Receiver };

class EventWire;

struct SimConnection {
  std::uint32_t id = 0;
  std::uint32_t sender_rank = 0;
  std::uint32_t receiver_rank = 0;
  std::vector<std::uint32_t> path_rail;  // rail used by each path index
  std::unique_ptr<HaConnection> sender;
  std::unique_ptr<HaConnection> receiver;
  std::vector<SimQp> sender_qps;    // per path
  std::vector<SimQp> receiver_qps;  // per path
  std::unique_ptr<StreamWorkload> workload;
  std::vector<std::uint8_t> handle;  // what the receiver's listen() published
  bool counted_done = false;         // already counted in SimWorld's done tally

  HaConnection& engine(Side s) { return s == Side::Sender ? *sender : *receiver; }
  std::uint32_t rank(Side s) const { return s == Side::Sender ? sender_rank : receiver_rank; }
  std::vector<SimQp>& qps(Side s) { return s == Side::Sender ? sender_qps : receiver_qps; }
  bool done() const { return workload->sender_done() && workload->receiver_done(); }
};

// The connector starts phase 1 once the bootstrap has delivered the listener's handle.
struct StartConnect {};

struct InboxItem {
  Nanos at{};
  std::uint64_t order = 0;  // FIFO among items due at the same time
  std::uint32_t conn = 0;
  Side side = Side::Sender;
  std::variant<Event, StartConnect> what;
  bool operator>(const InboxItem& o) const { return at != o.at ? at > o.at : order > o.order; }
  // An item whose event is `e`, built in place: gcc 12 at -O2 took the temporary Event that
  // `InboxItem{..., Event{e}}` moves from for one read before it is written (-Wmaybe-uninitialized).
  template <typename E>
  static InboxItem of_event(Nanos at, std::uint32_t conn, Side side, E&& e) {
    InboxItem item{at, 0, conn, side, StartConnect{}};
    item.what.template emplace<Event>(std::in_place_type<std::decay_t<E>>, std::forward<E>(e));
    return item;
  }
};

struct TimerKey {
  std::uint32_t conn;
  Side side;
  TimerId timer;
  auto operator<=>(const TimerKey&) const = default;
};

struct SimRank {
  std::uint32_t id = 0;
  std::priority_queue<InboxItem, std::vector<InboxItem>, std::greater<>> inbox;
  std::map<TimerKey, Nanos> timers;  // armed timers
  std::multimap<Nanos, TimerKey> deadlines;
  std::vector<std::pair<std::uint32_t, Side>> sides;  // the connection ends this rank drives
  // The actor wires' rank actor waits on these; the event wire's on its doorbell (event_wire.hpp),
  // so SimWorld creates them on the actor wires only.
  simgrid::s4u::ConditionVariablePtr wake;
  simgrid::s4u::MutexPtr mutex;
};

struct TraceRecord {
  Nanos at{};
  std::uint32_t rank = 0;
  std::uint32_t conn = 0;
  Side side = Side::Sender;
  TraceNote note;
};

struct SimCounters {
  std::uint64_t events = 0;           // events handed to engines
  std::uint64_t actions = 0;          // actions executed
  std::uint64_t data_packets = 0;     // transfer attempts on the wire
  std::uint64_t retransmissions = 0;  // hardware retries after a lost packet or ACK
  std::uint64_t rnr_naks = 0;
  std::uint64_t control_messages = 0;
  std::uint64_t control_lost = 0;
  std::uint64_t probes = 0;           // rail-liveness probes sent
  std::uint64_t probes_answered = 0;  // and answered by the peer's NIC
  std::uint64_t mr_registrations = 0;
};

class SimWorld {
 public:
  SimWorld(const Scenario& sc, std::uint64_t seed, WireMode wire);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  const Scenario& scenario() const { return sc_; }
  WireMode wire() const { return wire_; }
  EventWire& event_wire() { return *event_; }  // WireMode::Event only
  SimPlatform& platform() { return *platform_; }
  std::vector<SimConnection>& connections() { return conns_; }
  std::vector<SimRank>& ranks() { return ranks_; }
  SeededRng& rng() { return rng_; }
  SimCounters& counters() { return counters_; }
  std::vector<TraceRecord>& traces() { return traces_; }
  std::unordered_map<std::uint64_t, std::uint64_t>& memory() { return memory_; }  // dst addr -> src addr

  // Deliver an item to a rank and wake it.
  void post(std::uint32_t rank, InboxItem item);
  // A simulated QP changed (state, PSNs, receive queue): wake the packets waiting on it.
  void qp_changed(SimQp& q);
  // Simulated time since this run began. SimGrid's clock is process-global and does not restart
  // when a second engine is created in the same process, so runs keep their own origin.
  Nanos now() const;
  double to_clock(Nanos t) const { return epoch_ + to_seconds(t); }
  bool all_done() const { return done_ == conns_.size(); }
  std::size_t done_count() const { return done_; }
  // Call after anything that may finish connection `conn` (a completion, a failure).
  void note_progress(std::uint32_t conn);
  bool stopping() const { return stopping_; }
  void stop();
  // The swarm's checker (run_observer.hpp); null for plain runs.
  RunObserver* observer() const { return observer_; }
  void set_observer(RunObserver* o) { observer_ = o; }

 private:
  Scenario sc_;
  WireMode wire_;
  std::unique_ptr<SimPlatform> platform_;
  std::unique_ptr<EventWire> event_;
  // NicPreset::idle_rail_poll: per (connection, side, path), the time the last control message
  // read late was read; later ones on that path are not read before it.
  std::map<std::tuple<std::uint32_t, int, std::uint32_t>, Nanos> idle_read_not_before_;
  Nanos idle_poll_phase_{};  // the coarse clock's ticks fall at idle_poll_phase_ + k * idle_rail_poll
  std::vector<SimConnection> conns_;
  std::vector<SimRank> ranks_;
  SeededRng rng_;
  SimCounters counters_;
  std::vector<TraceRecord> traces_;
  std::unordered_map<std::uint64_t, std::uint64_t> memory_;
  std::uint64_t order_ = 0;
  std::size_t done_ = 0;
  bool stopping_ = false;
  double epoch_ = 0;
  RunObserver* observer_ = nullptr;
};

}  // namespace railcheck::sim
