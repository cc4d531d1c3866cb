#pragma once
// A sender engine and a receiver engine joined by an explicit network in which nothing happens
// unless the caller says so: every packet, ACK and control message waits in `in_flight` until
// it is delivered, dropped, or its path is killed. Tests use it to build exact interleavings
// (e.g. "the message landed, its ACK was lost, then the link died"); the model checker
// (issue 3) grows from the same idea by enumerating those choices.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/failover/ha_connection.hpp"

namespace railcheck::verify {

enum class PairEnd : std::uint8_t { Sender, Receiver };

struct InFlight {
  enum class Kind : std::uint8_t { Data, Ack, Control } kind = Kind::Data;
  PairEnd to = PairEnd::Receiver;
  std::uint32_t path = 0;
  WorkRequest wr;                  // Data: the send; Ack: the send being acknowledged
  ControlChannel channel{};        // Control
  ControlMessage message{Ping{}};  // Control
};

class PairWorld {
 public:
  PairWorld(const HaTunables& t, std::uint32_t paths);

  HaConnection& sender() { return sender_; }
  HaConnection& receiver() { return receiver_; }
  Nanos now() const { return now_; }

  // Phase 1 and phase 2 of the handshake, delivering everything in order. Returns whether
  // comm_ready() became true on each side before the last step, for assertions.
  void handshake();
  // User calls. Message m lives at send address m; receive buffer for message m at recv addr m.
  void isend(std::uint64_t msg);
  void irecv(std::uint64_t first_msg, std::uint32_t group = 1);

  // Network choices.
  bool deliver_next();                                          // the oldest deliverable item; false if none
  bool deliver_first(InFlight::Kind kind, std::uint32_t path);  // the oldest item of that kind on that path
  void deliver_all();                                           // until nothing is deliverable (no timers)
  bool land_data_drop_ack(std::uint32_t path);                  // head data packet lands; its ACK is lost
  // The link under `path` dies: everything in flight on it is lost, and once the HCA's retry
  // window has passed the sender's oldest outstanding send on it completes with RETRY_EXC_ERR
  // and the rest with WR_FLUSH_ERR.
  void kill_path(std::uint32_t path);
  // Fire the earliest armed timer (advancing time to it), if its deadline is within `horizon`.
  bool fire_next_timer(Nanos horizon);
  // deliver_all, then timers within the horizon, until quiet; time ends `horizon` later.
  void run(Nanos horizon);

  // Observations.
  const std::vector<std::uint64_t>& delivered() const { return delivered_; }  // msg id per user buffer, in order
  std::uint64_t sends_completed() const { return sends_completed_; }
  std::uint64_t sends_failed() const { return sends_failed_; }
  bool receiver_failed_requests() const { return recvs_failed_ > 0; }
  const Actions& log(PairEnd e) const { return e == PairEnd::Sender ? sender_log_ : receiver_log_; }
  const std::deque<InFlight>& in_flight() const { return in_flight_; }

  static std::uint64_t send_addr(std::uint64_t msg) { return 0x1000'0000 + msg * 64; }
  static std::uint64_t recv_addr(std::uint64_t msg) { return 0x2000'0000 + msg * 64; }

 private:
  struct QpSim {
    QpState state = QpState::Reset;
    std::deque<WorkRequest> recvs;         // receiver: posted receives
    std::vector<WorkRequest> outstanding;  // sender: sends without completion, in order
    std::uint64_t landed = 0;              // receiver: packets landed (PSN check for retransmits)
  };
  void feed(PairEnd e, const Event& ev);
  void execute(PairEnd e, Actions& acts);
  bool deliver(std::size_t index);
  HaConnection& engine(PairEnd e) { return e == PairEnd::Sender ? sender_ : receiver_; }
  std::vector<QpSim>& qps(PairEnd e) { return e == PairEnd::Sender ? sender_qps_ : receiver_qps_; }

  HaConnection sender_;
  HaConnection receiver_;
  std::vector<QpSim> sender_qps_;
  std::vector<QpSim> receiver_qps_;
  std::vector<bool> path_up_;
  std::deque<InFlight> in_flight_;
  std::map<std::pair<int, std::uint64_t>, Nanos> timers_;              // (end, timer id) -> deadline
  std::unordered_map<std::uint64_t, std::uint64_t> memory_;            // recv addr -> send addr
  std::map<std::uint64_t, std::vector<std::uint64_t>> recv_requests_;  // request -> buffer addrs
  std::vector<std::uint64_t> delivered_;
  std::uint64_t sends_completed_ = 0;
  std::uint64_t sends_failed_ = 0;
  std::uint64_t recvs_failed_ = 0;
  Actions sender_log_;
  Actions receiver_log_;
  Nanos now_{0};
  Nanos window_;
};

}  // namespace railcheck::verify
