#pragma once
// The failover world: 2 ranks joined by `paths` rails, one HA connection per direction (the real
// engine, engine/failover/), and a network in which every nondeterministic thing is an explicit
// Choice (verify/choice.hpp): which packet, ACK, completion or control message moves next,
// losses, rail deaths and repairs, timers racing the network, user calls.
//
// What the world models, and why:
// - RC per QP: data is FIFO per (connection, path) and carries a PSN; the responder lands only
//   the expected PSN, re-ACKs a duplicate and drops one from the future (go-back-N); ACKs are
//   cumulative. With `ordered = false` data may land in any order (SRD-like).
// - A rail death loses everything in flight on it. The sender's HCA reports RETRY_EXC_ERR for
//   the oldest unacknowledged send, and WR_FLUSH_ERR for the rest, at oldest post time +
//   hardware retry window — an event on the same clock as the engines' timers, so the soft RTO
//   races it exactly as on hardware.
// - Packets and ACKs can be delayed for as long as the bound allows: time advances only through
//   timers, and a timer may fire while network work is pending (`timer_races`). When nothing
//   else can happen, the earliest timer fires for free.
// - Control messages are FIFO per (direction, channel) and travel on a rail (lost when it is
//   down) or out of band (the bootstrap socket, never lost).
// - The receiver's completions wait in its CQ until polled (`delay_recv_completions`); the
//   sender's are handed over as the ACK arrives (delaying them is the same as delaying the ACK).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/flat_map.hpp>
#include <boost/container/flat_set.hpp>
#include <boost/container/small_vector.hpp>
#include <fmt/format.h>

#include "engine/failover/ha_connection.hpp"
#include "verify/choice.hpp"
#include "verify/failover_model.hpp"

namespace railcheck::verify {

enum End : std::uint8_t { kSender = 0, kReceiver = 1 };

// Facts the world records as they happen, for invariants to judge (verify/failover_invariants.cpp).
struct ReadyRecord {
  End end;
  QpState primary_qp;  // the driver's view of the primary QP when the comm was handed out
};
struct FailoverRecord {
  Nanos at{};
  std::string trigger;                  // the engine's FailoverStarted detail
  std::optional<Nanos> oldest_age;      // sender: age of the oldest unacknowledged send, if any
  bool after_error_completion = false;  // an error CQE was handed to the sender in this step
};
struct MrFault {
  End end;
  PathIndex path;
  MrId mr;
};

// A queue of a few elements. The world is copied for every state the checker visits, and a
// std::deque allocates a map and a 512-byte block even when empty (libstdc++): with ~60 queues in
// a both-ways world that was most of a state's allocations (docs/benchmarks.md, 2026-11-24
// profile). A vector allocates nothing while empty and once when copied; taking the front of a
// queue this short costs less than that.
template <typename T>
class Fifo : public std::vector<T> {
 public:
  using std::vector<T>::vector;
  void pop_front() { this->erase(this->begin()); }
};

// Sorted vectors, for the same reason: a world's sets and maps hold a handful of entries, and a
// tree allocates a node per entry on every copy.
template <typename T>
using FlatSet = boost::container::flat_set<T>;
template <typename K, typename V>
using FlatMap = boost::container::flat_map<K, V>;

struct QpModel {
  struct Outstanding {
    std::uint32_t psn = 0;
    WorkRequest wr;
    Nanos posted{};
  };
  QpState state = QpState::Reset;
  Fifo<Outstanding> sends;              // sender: unacknowledged, in PSN order
  Fifo<WorkRequest> recvs;              // receiver: posted receives
  std::uint32_t next_psn = 0;           // sender
  std::uint32_t expected_psn = 0;       // receiver (RC)
  FlatSet<std::uint32_t> landed_psn;    // receiver (unordered transport)
  std::optional<Nanos> retry_deadline;  // sender: RETRY_EXC_ERR fires then
  bool lost_something = false;          // sender: a packet or ACK of this QP was lost
};

struct Packet {
  std::uint32_t psn = 0;
  WorkRequest wr;
};

struct ConnWorld {
  std::array<HaConnection, 2> engine;
  std::array<std::vector<QpModel>, 2> qp;
  std::vector<Fifo<Packet>> data;                                               // per path
  std::vector<Fifo<std::uint32_t>> acks;                                        // per path: cumulative PSN
  std::vector<Fifo<CompletionEvent>> recv_cq;                                   // per path: the receiver's CQ
  std::array<std::vector<Fifo<ControlMessage>>, 2> control;                     // [to][channel]; channel == paths: OOB
  std::array<FlatMap<std::uint64_t, Nanos>, 2> timers;                          // armed timers: id -> deadline
  std::array<FlatSet<std::pair<std::uint32_t, std::uint64_t>>, 2> registered;   // (pd, mr)
  std::uint32_t isends = 0;
  std::uint32_t irecvs = 0;
  // observations
  std::vector<std::uint64_t> delivered;                              // message id per completed buffer, in order
  FlatMap<std::uint64_t, std::uint64_t> memory;                      // receive buffer -> message that landed in it
  FlatMap<std::uint64_t, boost::container::small_vector<std::uint64_t, 4>> recv_buffers;  // request -> its buffers
  std::array<FlatSet<std::uint64_t>, 2> completed;                   // request ids the user got a result for
  std::array<std::uint32_t, 2> failed_requests{};                    // results with outcome Failed
  std::uint32_t double_completions = 0;
  std::array<bool, 2> ready{};
  std::array<bool, 2> failed{};
  std::vector<ReadyRecord> ready_records;
  std::vector<FailoverRecord> failovers;
  std::vector<MrFault> mr_faults;

  // FailoverWorld::hash_conn's result, [IdCounters::Hash, IdCounters::Omit], filled when first
  // asked for and cleared by FailoverWorld whenever a step may change this connection: a step
  // of a both-ways world changes one connection, and the other's hash carries over to the
  // successor with the copy (tests/verify/failover_world_hash_cache_test.cpp holds cached
  // against fresh fingerprints over random walks).
  mutable std::array<std::optional<std::uint64_t>, 2> hash_cache;

  explicit ConnWorld(std::array<HaConnection, 2> engines) : engine(std::move(engines)) {}
};

class FailoverWorld {
 public:
  using ChoiceType = Choice;
  explicit FailoverWorld(const FailoverModel& model);

  // Every step possible now; empty at an end state (all user work finished, or stuck).
  std::vector<Choice> choices() const;
  // Take one step. Precondition: `c` is among choices().
  void apply(const Choice& c);
  // With symmetry on (set_symmetry), the fingerprint of the state's orbit under the world's
  // symmetries: the two connections swapped, and fresh ids renamed (docs/verify.md, "Symmetry
  // reduction"). Off: the state's own. Either way a pure function of the state.
  std::uint64_t fingerprint() const;
  // Drops the connections' cached hashes, so the next fingerprint() computes them afresh (tests).
  void forget_cached_hashes() const {
    for (const auto& w : conns_) w.hash_cache = {};
  }
  void set_symmetry(bool on) { symmetry_ = on; }
  bool symmetry() const { return symmetry_; }

  // Collect a line per thing that happened in the following apply() calls (counterexamples).
  void narrate(bool on) { narrate_ = on; }
  const std::vector<std::string>& notes() const { return notes_; }

  // ---- observations for invariants ----
  const FailoverModel& model() const { return model_; }
  const std::vector<ConnWorld>& conns() const { return conns_; }
  Nanos now() const { return now_; }
  bool work_finished() const;  // every user request on both ends got a result
  // Something other than a fault can still happen (a delivery, a timer within the horizon, a
  // user call). A state with unfinished work where this is false is a deadlock.
  bool can_progress() const;
  bool rail_up(std::uint32_t p) const { return rail_up_[p]; }
  // Paths that suffered a fault (a rail death or a loss on it): the connection may fail only
  // when every path did.
  std::uint32_t paths_hit() const;

  // Where the user's buffers are: message m is sent from send_addr(m) of the sending rank and
  // received into recv_addr(m) of the receiving one; the world checks data by these addresses.
  // Each rank sends from one region and receives into another, so the two connections use the
  // same addresses (and QP numbers): nothing in a connection's state names which one it is,
  // which is what lets the symmetry reduction swap them.
  static std::uint64_t send_addr(std::uint64_t msg) { return 0x1000'0000ULL + msg * 64; }
  static std::uint64_t recv_addr(std::uint64_t msg) { return 0x2000'0000ULL + msg * 64; }
  static std::uint64_t message_sent_from(std::uint64_t addr) { return (addr - send_addr(0)) / 64; }
  static constexpr std::uint64_t kRegion = 1 << 20;

 private:
  struct TimerRef {
    Nanos deadline{};
    std::uint8_t conn = 0;
    std::int8_t end = -1;  // -1: an HCA retry window of (conn, path)
    std::uint64_t id = 0;  // engine timer id, or the path
  };
  // The timer the next Timer step fires: the earliest deadline; on a tie between the two
  // connections, the one whose state hashes lower (see earliest_timer's comment).
  std::optional<TimerRef> earliest_timer() const;
  std::optional<TimerRef> earliest_timer_of(std::uint8_t conn) const;
  std::optional<Nanos> earliest_deadline() const;
  // A connection's state, hashed without its number: equal for two connections in the same
  // state (with IdCounters::Omit: up to renaming fresh ids), whichever they are.
  std::uint64_t hash_conn(const ConnWorld& w, IdCounters counters) const;  // cached
  std::uint64_t hash_conn_fresh(const ConnWorld& w, IdCounters counters) const;
  bool network_pending() const;  // something other than a timer or a fault can happen
  bool handshake_done() const;
  bool data_deliverable(const ConnWorld& w, std::uint32_t p, std::size_t index) const;
  std::vector<Choice> reduce(std::vector<Choice> all) const;

  // Connection `conn` may change in this step: its cached hash is void.
  void touch(std::uint8_t conn) { conns_[conn].hash_cache = {}; }
  void feed(std::uint8_t conn, End end, const Event& ev);
  void execute(std::uint8_t conn, End end, Actions& acts);
  void execute_one(std::uint8_t conn, End end, const Action& a);
  void post_send(ConnWorld& w, std::uint8_t conn, PathIndex p, const WorkRequest& wr);
  void move_qp(ConnWorld& w, std::uint8_t conn, End end, const ModifyQp& m);
  void user_calls();
  void issue_isend(std::uint8_t conn);
  void issue_irecv(std::uint8_t conn);

  void deliver_data(std::uint8_t conn, std::uint32_t p, std::size_t index);
  void deliver_ack(std::uint8_t conn, std::uint32_t p);
  void deliver_control(std::uint8_t conn, End to, std::uint32_t channel);
  void fire_timer();
  void retry_exceeded(std::uint8_t conn, std::uint32_t p);
  void kill_rail(std::uint32_t p);
  void repair_rail(std::uint32_t p);
  void retransmit(std::uint8_t conn, std::uint32_t p);
  // One line of narration. The arguments are formatted only while narrating: the checker runs
  // this world millions of times with narration off, where formatting every step cost ~3% of a
  // run (perf, 2026-11-25).
  template <typename... Args>
  void note(fmt::format_string<Args...> format, Args&&... args) {
    if (narrate_) notes_.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  FailoverModel model_;
  Nanos window_;
  std::vector<ConnWorld> conns_;
  std::vector<bool> rail_up_;
  std::vector<bool> rail_hit_;
  Nanos now_{0};
  std::uint32_t kills_ = 0;
  std::uint32_t repairs_ = 0;
  std::uint32_t losses_ = 0;
  std::uint32_t races_ = 0;
  bool error_cqe_in_step_ = false;
  bool narrate_ = false;
  bool symmetry_ = false;
  std::vector<std::string> notes_;
};

}  // namespace railcheck::verify
