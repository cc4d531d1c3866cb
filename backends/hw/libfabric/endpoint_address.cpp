#include "backends/hw/libfabric/endpoint_address.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <rdma/fabric.h>

#include <algorithm>
#include <cstring>

namespace railcheck::fabric {
namespace {

constexpr std::uint32_t kKindShift = 16;
constexpr std::uint32_t kLowMask = 0xFFFF;
constexpr std::size_t kEfaQpnOffset = 16;
constexpr std::size_t kEfaQkeyOffset = 20;

QpEndpoint with_kind(AddressKind k) {
  QpEndpoint ep;
  ep.qpn = static_cast<std::uint32_t>(k) << kKindShift;
  return ep;
}

}  // namespace

Result<QpEndpoint> encode_endpoint(std::span<const std::uint8_t> raw, std::uint32_t addr_format) {
  if (addr_format == FI_SOCKADDR_IN) {
    sockaddr_in sin{};
    if (raw.size() < sizeof(sin))
      return Error{fmt::format("fi_getname returned {} bytes for an FI_SOCKADDR_IN address; expected {}", raw.size(),
                               sizeof(sin)),
                   ""};
    std::memcpy(&sin, raw.data(), sizeof(sin));
    if (sin.sin_family != AF_INET)
      return Error{fmt::format("fi_getname returned address family {}; expected AF_INET", sin.sin_family), ""};
    QpEndpoint ep = with_kind(AddressKind::Ipv4);
    std::memcpy(ep.gid.data(), &sin.sin_addr.s_addr, 4);
    ep.lid = ntohs(sin.sin_port);
    return ep;
  }
  if (addr_format == FI_ADDR_STR) {
    const auto* chars = reinterpret_cast<const char*>(raw.data());
    const std::size_t len = strnlen(chars, raw.size());
    if (len == 0 || len > kMaxNameLength)
      return Error{fmt::format("endpoint name '{}' is {} bytes; the handle carries at most {}", std::string(chars, len),
                               len, kMaxNameLength),
                   "give the endpoint a shorter name (FI_SOURCE node)"};
    QpEndpoint ep = with_kind(AddressKind::Name);
    std::copy_n(raw.begin(), len, ep.gid.begin());
    ep.lid = static_cast<std::uint16_t>(len);
    return ep;
  }
  if (addr_format == FI_ADDR_EFA) {
    if (raw.size() < kEfaQkeyOffset + 4)
      return Error{fmt::format("fi_getname returned {} bytes for an FI_ADDR_EFA address", raw.size()), ""};
    QpEndpoint ep = with_kind(AddressKind::Efa);
    std::copy_n(raw.begin(), 16, ep.gid.begin());
    std::uint16_t qpn = 0;
    std::uint32_t qkey = 0;
    std::memcpy(&qpn, raw.data() + kEfaQpnOffset, 2);
    std::memcpy(&qkey, raw.data() + kEfaQkeyOffset, 4);
    ep.qpn |= qpn;
    ep.lid = static_cast<std::uint16_t>(qkey & kLowMask);
    ep.psn = qkey >> 16;
    return ep;
  }
  return Error{fmt::format("address format {} has no mapping into a QpEndpoint", addr_format),
               "use tcp;ofi_rxm (FI_SOCKADDR_IN), shm (FI_ADDR_STR) or efa (FI_ADDR_EFA)"};
}

Result<std::vector<std::uint8_t>> decode_endpoint(const QpEndpoint& ep) {
  const auto kind = static_cast<AddressKind>(ep.qpn >> kKindShift);
  if (kind == AddressKind::Ipv4) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(ep.lid);
    std::memcpy(&sin.sin_addr.s_addr, ep.gid.data(), 4);
    std::vector<std::uint8_t> out(sizeof(sin));
    std::memcpy(out.data(), &sin, sizeof(sin));
    return out;
  }
  if (kind == AddressKind::Name) {
    if (ep.lid == 0 || ep.lid > kMaxNameLength)
      return Error{fmt::format("endpoint name length {} is out of range 1..{}", ep.lid, kMaxNameLength), ""};
    std::vector<std::uint8_t> out(ep.gid.begin(), ep.gid.begin() + ep.lid);
    out.push_back(0);
    return out;
  }
  if (kind == AddressKind::Efa) {
    std::vector<std::uint8_t> out(kEfaAddressBytes, 0);
    std::copy(ep.gid.begin(), ep.gid.end(), out.begin());
    const auto qpn = static_cast<std::uint16_t>(ep.qpn & kLowMask);
    const std::uint32_t qkey = ep.lid | (ep.psn << 16);
    std::memcpy(out.data() + kEfaQpnOffset, &qpn, 2);
    std::memcpy(out.data() + kEfaQkeyOffset, &qkey, 4);
    return out;
  }
  return Error{fmt::format("endpoint kind {} (qpn 0x{:06x}) is not a libfabric address", ep.qpn >> kKindShift, ep.qpn),
               "the peer is not a libfabric railcheck backend"};
}

}  // namespace railcheck::fabric
