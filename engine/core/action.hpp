#pragma once
// Everything the engine asks the outside world to do. Drivers execute these in order: the
// order within one batch is part of the protocol (seed §16.1: ERR before drain before switch
// before replay).
//
// Every engine entry point appends to an Actions buffer the driver owns and never clears it: a
// driver on the data path keeps one buffer and clear()s it between events, so a small message
// costs no vector growth per event (issue 32); tests may pass a fresh one or a running log.
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "engine/core/control_message.hpp"
#include "engine/core/ids.hpp"
#include "engine/core/qp_endpoint.hpp"
#include "engine/core/result.hpp"
#include "engine/core/time.hpp"
#include "engine/core/trace.hpp"
#include "engine/core/work_request.hpp"

namespace railcheck {

struct PostSend {
  PathIndex path{};
  WorkRequest wr;
};
struct PostRecv {
  PathIndex path{};
  WorkRequest wr;
};
struct PostWrite {
  PathIndex path{};
  WorkRequest wr;
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
};
// A rail-liveness probe (engine/failover/rail_liveness.hpp): a one-sided operation on the
// rail's probe QP that the peer's NIC answers without its CPU (an 8-byte RDMA READ of a
// registered word, or a zero-byte RDMA WRITE; fi_read/fi_write on libfabric). The driver hands
// the answer back as ProbeAnswered with the same nonce, and nothing if the op does not complete.
struct ProbeRail {
  PathIndex path{};
  std::uint64_t nonce = 0;
};
// ibv_modify_qp. `remote` is set for the RTR transition, `reliability` for RTR/RTS.
// Moving to ERR makes the driver flush every outstanding WR of that QP with WR_FLUSH_ERR.
struct ModifyQp {
  PathIndex path{};
  QpState target = QpState::Err;
  std::optional<QpEndpoint> remote;
  std::optional<QpReliability> reliability;
};
// Register a user MR on the protection domain of a path. Cached per PD by the engine.
struct RegisterMr {
  PdId pd{};
  MrId mr{};
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
};
struct ArmTimer {
  TimerId timer{};
  Nanos deadline{};
};
struct CancelTimer {
  TimerId timer{};
};
struct SendControl {
  ControlChannel channel{};
  ControlMessage message;
};

// Results for the user of the connection.
enum class RequestOutcome : std::uint8_t { Done, Failed };
// Bytes per buffer of a finished request, held inline up to NCCL's grouped-receive limit
// (NCCL_NET_MAX_REQUESTS, 8): every request completes through one, and a heap block per
// completion was one of a small message's allocations (issue 32).
using RequestSizes = boost::container::small_vector<std::uint32_t, 8>;
struct CompleteRequest {
  RequestId request{};
  RequestOutcome outcome = RequestOutcome::Done;
  RequestSizes sizes;          // bytes per buffer (one entry for a send)
  std::optional<Error> error;  // set when outcome == Failed
};
struct ConnectionReady {};
struct ConnectionFailed {
  Error error;
};
struct Trace {
  TraceNote note;
};

using Action = std::variant<PostSend, PostRecv, PostWrite, ProbeRail, ModifyQp, RegisterMr, ArmTimer, CancelTimer,
                            SendControl, CompleteRequest, ConnectionReady, ConnectionFailed, Trace>;
using Actions = std::vector<Action>;

}  // namespace railcheck
