#pragma once
// Internal control messages the engine exchanges with its peer engine. They travel either over
// the out-of-band bootstrap channel (before any QP is usable) or over one of the connection's
// paths (after its QP is RTS). Drivers carry them opaquely.
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/core/ids.hpp"
#include "engine/core/qp_endpoint.hpp"

namespace railcheck {

// Phase 1, over the out-of-band channel: the connecting side's primary endpoint.
struct ConnectRequest {
  QpEndpoint primary;
  bool operator==(const ConnectRequest&) const = default;
};
// Phase 1 reply: the listener's primary QP is RTR/RTS, data may flow.
struct ConnectAck {
  bool operator==(const ConnectAck&) const = default;
};
// Phase 2, over the primary: endpoints of the remaining paths (index 1..N-1), seed §3.2 step 4.
struct StandbyParams {
  std::vector<QpEndpoint> endpoints;
  bool reply = false;  // false: the connector's offer; true: the listener's answer
  bool operator==(const StandbyParams&) const = default;
};
// The sender moved the connection from `failed` to `next`; the receiver must follow.
struct FailoverNotice {
  std::uint32_t epoch = 0;
  PathIndex failed{};
  PathIndex next{};
  bool operator==(const FailoverNotice&) const = default;
};
// `resync` policy: ask the receiver for its delivered watermark after it has fenced the
// failed path; it answers once the failed QP is in ERR and drained.
struct ResyncRequest {
  std::uint32_t epoch = 0;
  PathIndex failed{};
  PathIndex next{};
  bool operator==(const ResyncRequest&) const = default;
};
struct ResyncAck {
  std::uint32_t epoch = 0;
  std::uint64_t delivered = 0;  // every message with seq < delivered has been delivered
  bool operator==(const ResyncAck&) const = default;
};
// `probe` policy: a one-sided read of the receiver's per-message completion record. The
// receiver's NIC answers it; the receiver's engine does not fence anything first.
struct ProbeRequest {
  std::uint32_t epoch = 0;
  std::vector<std::uint64_t> seqs;
  bool operator==(const ProbeRequest&) const = default;
};
struct ProbeReply {
  std::uint32_t epoch = 0;
  std::vector<std::uint64_t> delivered;  // the subset of the request's seqs that landed
  bool operator==(const ProbeReply&) const = default;
};
struct Ping {
  std::uint64_t nonce = 0;
  bool operator==(const Ping&) const = default;
};
struct Pong {
  std::uint64_t nonce = 0;
  bool operator==(const Pong&) const = default;
};

// A path we failed over from answers pings again: both sides reset its QP and bring it back to
// RTS, and it becomes a standby once more (persistent recovery; cf. NCCL issue #2323).
struct PathRevive {
  PathIndex path{};
  bool ack = false;
  bool operator==(const PathRevive&) const = default;
};

using ControlMessage = std::variant<ConnectRequest, ConnectAck, StandbyParams, FailoverNotice, ResyncRequest, ResyncAck,
                                    ProbeRequest, ProbeReply, Ping, Pong, PathRevive>;

std::string_view control_name(const ControlMessage& m);

// Where a control message travels.
struct ControlChannel {
  bool out_of_band = false;  // the bootstrap socket; `path` is ignored
  PathIndex path{};
  static ControlChannel oob() { return {true, PathIndex{0}}; }
  static ControlChannel on(PathIndex p) { return {false, p}; }
  bool operator==(const ControlChannel&) const = default;
};

}  // namespace railcheck
