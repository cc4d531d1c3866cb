#pragma once
// The state of one path of an HA connection, as the engine believes it to be.
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/core/ids.hpp"
#include "engine/core/qp_endpoint.hpp"
#include "engine/core/time.hpp"

namespace railcheck {

enum class PathHealth : std::uint8_t {
  Connecting,  // QP not yet RTS on both sides (phase 2 of the handshake still running)
  Ready,       // usable: RTS on both sides, heartbeats answered
  Suspect,     // missed heartbeats below the limit
  Dead,        // failed over from, or standby stopped answering; never chosen again unless revived
};
std::string_view to_string(PathHealth h);

struct PathState {
  PdId pd{};         // protection domain of this path's NIC
  QpEndpoint local;  // our QP on this path
  std::optional<QpEndpoint> remote;
  QpState qp = QpState::Reset;
  PathHealth health = PathHealth::Connecting;
  std::uint32_t missed_pings = 0;
  std::optional<std::uint64_t> ping_outstanding;  // nonce of the last unanswered ping
  std::optional<Nanos> failed_at;                 // when we failed over away from it
};

}  // namespace railcheck
