#pragma once
// One side of an HA connection (an NCCL sendComm or recvComm) over N paths: path 0 is the
// primary chosen at connect time, the others are standbys. Sans-IO: every entry point takes
// "now" and appends the actions the driver must carry out, in order.
//
// Where things are decided:
//   two_phase_connect.cpp                   phase 1 (primary to RTS) and phase 2 (standbys)
//   ha_connection.cpp                       the data path: posting, completions, user results
//   failover_sequence.cpp                   detection -> ERR -> drain -> switch -> MRs -> replay
//   heartbeat.cpp                           standby health, false alarms, path revival
//   liveness_probes.cpp                     the active rail's liveness probes -> failover
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/container/flat_map.hpp>
#include <boost/container/flat_set.hpp>

#include "engine/core/action.hpp"
#include "engine/core/event.hpp"
#include "engine/core/state_hash.hpp"
#include "engine/failover/ha_tunables.hpp"
#include "engine/failover/inflight_table.hpp"
#include "engine/failover/path_state.hpp"
#include "engine/failover/rail_liveness.hpp"
#include "engine/failover/soft_rto.hpp"
#include "engine/handshake/handle_codec.hpp"

namespace railcheck {

enum class ConnRole : std::uint8_t { Sender, Receiver };

struct PathConfig {
  PdId pd{};
  QpEndpoint local;  // the QP the driver created for this path
};

struct HaConnectionConfig {
  ConnRole role = ConnRole::Sender;
  std::vector<PathConfig> paths;  // [0] is the primary; size >= 1
  HaTunables tunables;
};

// Why a failover started.
enum class FailoverTrigger : std::uint8_t { ErrorCompletion, SoftRto, PeerNotice, ControlTimeout, RailDead };
std::string_view to_string(FailoverTrigger t);

enum class FailoverPhase : std::uint8_t {
  Idle,             // no failover in progress
  Draining,         // failed QP moved to ERR, waiting for its outstanding WRs to flush
  AwaitProbeDelay,  // probe policy: waiting before reading the receiver's completion record
  AwaitPeer,        // waiting for the peer's ResyncAck / ProbeReply
  Failed,           // no usable path left; every request fails
};
std::string_view to_string(FailoverPhase p);

class HaConnection {
 public:
  explicit HaConnection(HaConnectionConfig cfg);

  // ---- handshake (engine/failover/two_phase_connect.cpp) ----
  // Receiver (listen side): the handle to hand to NCCL. Also moves the primary QP to INIT.
  ConnectionHandle listen(Actions& out);
  // Sender (connect side): decode the peer's handle and start phase 1. A rejected handle is an
  // error value; a handle from a peer without HA degrades to a single path.
  Result<bool> connect(Nanos now, std::span<const std::uint8_t> handle, Actions& out);
  // NCCL's connect()/accept() hand out the comm only when this is true (seed §3.2).
  bool comm_ready() const { return comm_ready_; }

  // ---- everything else arrives as an event ----
  void handle(Nanos now, const Event& ev, Actions& out);

  // ---- introspection for drivers, summaries and tests ----
  ConnRole role() const { return role_; }
  PathIndex active_path() const { return active_; }
  std::size_t path_count() const { return paths_.size(); }
  const PathState& path(PathIndex p) const { return paths_.at(p.value); }
  FailoverPhase phase() const { return phase_; }
  bool failed() const { return phase_ == FailoverPhase::Failed; }
  Nanos soft_rto() const { return rto_.current(); }
  const RailLiveness& liveness() const { return liveness_; }
  std::size_t inflight() const { return table_.size(); }
  std::uint32_t failovers() const { return epoch_; }
  // Receiver: messages delivered in order so far (the resync watermark).
  std::uint64_t delivered() const { return delivered_; }
  ReplayPolicy policy() const { return tun_.replay; }
  // Feed everything that decides this connection's future behaviour into `h` (the model
  // checker's visited set; engine/failover/state_fingerprint.cpp). Tunables are fixed per run
  // and left out. With IdCounters::Omit the counters that hand out fresh WR ids, timer ids and
  // ping nonces are left out too (the checker's symmetry reduction, docs/verify.md): those ids
  // are only ever compared with each other, and a new one is larger than any alive, so two
  // states that differ only in how many were handed out behave the same up to renaming them.
  void hash_state(StateHasher& h, IdCounters counters = IdCounters::Hash) const;

 private:
  // handshake
  void on_connect_request(Nanos now, const ConnectRequest& m, Actions& out);
  void on_connect_ack(Nanos now, Actions& out);
  void on_standby_params(Nanos now, const StandbyParams& m, Actions& out);
  void bring_up(PathIndex p, const QpEndpoint& remote, Actions& out);
  void mark_comm_ready(Nanos now, Actions& out);

  // data path
  void on_reg_mr(const UserRegMr& e, Actions& out);
  void on_isend(Nanos now, const UserIsend& e, Actions& out);
  void on_irecv(Nanos now, const UserIrecv& e, Actions& out);
  void on_completion(Nanos now, const CompletionEvent& e, Actions& out);
  void on_recv_success(Nanos now, InflightWr& w, const CompletionEvent& e, Actions& out);
  void post(Nanos now, InflightWr& w, PathIndex p, Actions& out);
  std::size_t ensure_mrs_on(PathIndex p, const WorkRequest& wr, Actions& out);
  void complete_finished(Actions& out);
  void arm_rto(Nanos now, Actions& out);
  void on_rto_timer(Nanos now, Actions& out);
  bool data_path_open() const { return comm_ready_ && phase_ == FailoverPhase::Idle; }

  // failover (failover_sequence.cpp)
  void start_failover(Nanos now, FailoverTrigger trigger, std::string detail, Actions& out);
  std::optional<PathIndex> pick_next_path(PathIndex failed) const;
  void on_drained(Nanos now, Actions& out);
  void after_switch_sender(Nanos now, Actions& out);
  // Re-post, in original order, every entry whose message did not land according to `landed`.
  template <typename Landed>
  void replay(Nanos now, Landed landed, Actions& out);
  void on_peer_failover(Nanos now, std::uint32_t epoch, PathIndex failed, PathIndex next, bool wants_watermark,
                        Actions& out);
  void on_resync_ack(Nanos now, const ResyncAck& m, Actions& out);
  void answer_probe(const ProbeRequest& m, PathIndex reply_on, Actions& out);
  void on_probe_reply(Nanos now, const ProbeReply& m, Actions& out);
  void on_probe_delay(Nanos now, Actions& out);
  void on_control_timeout(Nanos now, Actions& out);
  void fail_connection(std::string why, Actions& out);

  // heartbeat.cpp
  void on_heartbeat_tick(Nanos now, Actions& out);
  void on_ping(const ControlChannel& ch, const Ping& m, Actions& out);
  void on_pong(Nanos now, const ControlChannel& ch, const Pong& m, Actions& out);
  void on_revive(Nanos now, const PathRevive& m, Actions& out);
  void arm_heartbeat(Nanos now, Actions& out);

  // liveness_probes.cpp
  void arm_liveness(Nanos now, Actions& out);
  void on_liveness_timer(Nanos now, Actions& out);
  void on_probe_answered(Nanos now, const ProbeAnswered& a, Actions& out);
  // The soft RTO expired, but the rail answers probes: the receiver is slow (RNR) or its
  // process stalled. Failing over would not help: the same receiver must post on any rail.
  bool rail_answers(Nanos now) const;

  // helpers
  TimerId arm(Nanos deadline, Actions& out);
  void cancel(std::optional<TimerId>& t, Actions& out);
  void trace(TraceKind k, PathIndex p, std::uint64_t count, std::string detail, Actions& out) const;
  WrId next_wr_id() { return WrId{++wr_counter_}; }

  ConnRole role_;
  HaTunables tun_;
  std::vector<PathState> paths_;
  PathIndex active_{0};
  bool comm_ready_ = false;
  bool peer_is_ha_ = true;

  InflightTable table_;
  std::uint64_t next_seq_ = 0;   // sender: seq of the next isend; receiver: index of the next recv WR
  std::uint64_t delivered_ = 0;  // receiver: every message with seq < delivered_ was delivered
  // Receiver's completion record (what a probe reads): every seq < record_low_ landed, and so
  // did every seq in record_.
  std::uint64_t record_low_ = 0;
  // Sorted vectors, not trees: a handful of entries each, and the model checker copies every
  // engine into every successor state (one allocation per container, not one per entry).
  boost::container::flat_set<std::uint64_t> record_;
  boost::container::flat_map<MrId, UserRegMr> mrs_;
  boost::container::flat_set<std::pair<std::uint32_t, std::uint64_t>> registered_;  // (pd, mr)
  std::uint64_t wr_counter_ = 0;
  std::uint64_t timer_counter_ = 0;
  std::uint64_t ping_counter_ = 0;

  // failover
  FailoverPhase phase_ = FailoverPhase::Idle;
  std::uint32_t epoch_ = 0;
  PathIndex failing_{0};          // the path being drained
  PathIndex next_{0};             // the path we switch to
  bool peer_initiated_ = false;   // receiver following the sender's failover
  bool reply_watermark_ = false;  // receiver: answer ResyncAck once drained
  std::size_t mrs_registered_in_failover_ = 0;
  SoftRto rto_;
  RailLiveness liveness_;

  std::optional<TimerId> rto_timer_;
  std::optional<TimerId> heartbeat_timer_;
  std::optional<TimerId> control_timer_;
  std::optional<TimerId> probe_timer_;
  std::optional<TimerId> liveness_timer_;
};

}  // namespace railcheck
