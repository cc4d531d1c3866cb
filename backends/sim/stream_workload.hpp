#pragma once
// The user of one connection in the simulator: the sender keeps `window` isends outstanding,
// the receiver keeps `window` (grouped) irecvs posted, and every delivered buffer is checked
// against what the sender put in it, so duplicates, losses and reordering are measured, not
// assumed.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/core/event.hpp"
#include "engine/core/time.hpp"
#include "models/scenario.hpp"

namespace railcheck::sim {

// Where message i of connection c lives. Addresses are identities, not memory: the simulator
// moves "which source buffer landed in which destination buffer", which is what a data check
// on real hardware compares too.
struct BufferLayout {
  static constexpr std::uint64_t kSlot = 64;
  static std::uint64_t send_base(std::uint32_t conn) { return (std::uint64_t{conn} + 1) << 36; }
  static std::uint64_t recv_base(std::uint32_t conn) { return ((std::uint64_t{conn} + 1) << 36) | (1ULL << 35); }
  static std::uint64_t send_addr(std::uint32_t conn, std::uint64_t msg) { return send_base(conn) + msg * kSlot; }
  static std::uint64_t recv_addr(std::uint32_t conn, std::uint64_t msg) { return recv_base(conn) + msg * kSlot; }
};

struct StreamStats {
  std::uint64_t sends_completed = 0;
  std::uint64_t sends_failed = 0;
  std::uint64_t delivered = 0;   // buffers that received exactly the message meant for them
  std::uint64_t duplicates = 0;  // buffers that received a message already delivered
  std::uint64_t misplaced = 0;   // buffers that received another (not yet delivered) message
  std::uint64_t empty = 0;       // buffers completed with no data in them
  std::uint64_t recvs_failed = 0;
  bool connection_failed = false;
  std::optional<Nanos> failed_at;     // when either side's engine first reported the connection failed
  std::optional<Nanos> ready_at;      // comm handed out (sender side)
  std::vector<Nanos> delivery_times;  // one per delivered buffer, for throughput
};

class StreamWorkload {
 public:
  StreamWorkload(std::uint32_t conn, const Workload& w, bool slow_receiver);

  // Sender side: the isends that may be issued now.
  std::vector<UserIsend> sender_ready_posts();
  void on_send_complete(bool ok);
  // Receiver side: the irecvs that may be posted now (slow receivers hold each re-post).
  std::vector<UserIrecv> receiver_ready_posts(Nanos now);
  // A receive request completed: check every buffer against `memory` (dst addr -> src addr).
  void on_recv_complete(Nanos now, RequestId req, bool ok,
                        const std::unordered_map<std::uint64_t, std::uint64_t>& memory);
  // Earliest time a held receive may be posted, if one is waiting.
  std::optional<Nanos> next_wake() const { return hold_until_; }

  UserRegMr send_region() const;
  UserRegMr recv_region() const;
  bool sender_done() const { return stats_.connection_failed || completed_sends_ == w_.messages; }
  bool receiver_done() const { return stats_.connection_failed || completed_recv_buffers_ >= w_.messages; }
  void mark_failed(Nanos now) {
    if (!stats_.connection_failed) stats_.failed_at = now;
    stats_.connection_failed = true;
  }
  StreamStats& stats() { return stats_; }
  const StreamStats& stats() const { return stats_; }
  std::uint64_t messages() const { return w_.messages; }
  std::uint64_t message_bytes() const { return w_.message_bytes; }

 private:
  std::uint32_t conn_;
  Workload w_;
  bool slow_;
  std::uint64_t next_send_ = 0;
  std::uint64_t completed_sends_ = 0;
  std::uint64_t next_recv_buffer_ = 0;  // message index of the next buffer to post
  std::uint64_t completed_recv_buffers_ = 0;
  std::uint64_t outstanding_recv_requests_ = 0;
  std::optional<Nanos> hold_until_;
  std::vector<bool> seen_;  // message index -> already delivered
  StreamStats stats_;
};

}  // namespace railcheck::sim
