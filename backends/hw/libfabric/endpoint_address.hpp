#pragma once
// The engine's QpEndpoint (qpn 24 bits, gid 16 bytes, lid 16 bits, psn 24 bits) carries a
// libfabric endpoint address, so the handle codec (engine/handshake/handle_codec.hpp) and the
// StandbyParams exchange stay exactly as they are for verbs. The mapping, field by field:
//
//   qpn bits 23..16   address kind: 1 = IPv4 (FI_SOCKADDR_IN), 2 = name (FI_ADDR_STR, shm),
//                     3 = EFA (FI_ADDR_EFA)
//   kind 1  gid[0..3] IPv4 address in network order, gid[4..15] zero; lid = port (number);
//           qpn bits 15..0 = 0; psn = the rail's liveness probe port, a TCP port on the same
//           address (tcp_rail_probe.hpp), 0 = none (backends before issue 28 send 0, and
//           decode_endpoint ignores it)
//   kind 2  gid = the name's bytes, NUL-padded (at most 16 bytes, no terminator needed at
//           16); lid = the name's length; qpn bits 15..0 = 0, psn = 0
//   kind 3  gid = the EFA raw GID, qpn bits 15..0 = EFA QP number, lid = qkey bits 15..0,
//           psn = qkey bits 31..16 (the 8-byte `next` pointer of efa_ep_addr is process-local
//           and never travels)
//
// No process-local value crosses: a sockaddr's family field (host-endian) is not copied, it
// is rebuilt on the receiving side from the kind.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/qp_endpoint.hpp"
#include "engine/core/result.hpp"

namespace railcheck::fabric {

enum class AddressKind : std::uint8_t { Ipv4 = 1, Name = 2, Efa = 3 };

constexpr std::size_t kMaxNameLength = 16;  // a shm name must fit the gid
constexpr std::size_t kEfaAddressBytes = 32;

// `raw` is what fi_getname returned; `addr_format` is fi_info::addr_format (FI_SOCKADDR_IN,
// FI_ADDR_STR, FI_ADDR_EFA).
Result<QpEndpoint> encode_endpoint(std::span<const std::uint8_t> raw, std::uint32_t addr_format);

// The bytes fi_av_insert takes for this endpoint (a sockaddr_in, a NUL-terminated name, or an
// efa_ep_addr with a null `next`).
Result<std::vector<std::uint8_t>> decode_endpoint(const QpEndpoint& ep);

}  // namespace railcheck::fabric
